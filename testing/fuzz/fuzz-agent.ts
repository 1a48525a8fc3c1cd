/**
 * `fuzzAgent`: a fast-check model-based fuzzer of the real agent. It generates inbox operations
 * (followup, steer, inject, remove, replace, clear, bursts), model behaviours (text, reasoning,
 * tool calls, transient and terminal errors, max-tokens, grammar violations, broken streams), hook
 * decisions (reject, throw, enter nothing, steer at turn-stopping), tool outcomes and cancels; lets
 * `fc.scheduler` decide the interleaving of model chunks, hooks and tool bodies; runs the agent and
 * checks every log invariant (L1–L16, via `verify`) and the runtime ones (R1, R2, R3, R5, R7, R8),
 * plus "memory follows the log" (the inbox machine equals the inbox folded from the log) after
 * every command. A failure throws with the shrunk scenario, the seed and the failing run's log.
 *
 * Users run it against their own tools and hooks: `await fuzzAgent({ tools, hooks, numRuns })`, and
 * against their plugins: `await fuzzAgent({ plugins: [basicCompaction({ contextWindow: 1000 })],
 * overflow: true, largeOutputs: true })` adds `CONTEXT_WINDOW_EXCEEDED` failures and large tool
 * outputs to the scenarios, answers the plugin's summary calls (`purpose: 'compaction'`) with
 * generated summaries (short, too long, empty, failing, throwing, cancelling), and checks R6 from
 * the log and from the `agent/request-error` decisions when a compaction plugin is installed.
 *
 * The parts: `scenario.ts` (generation), `commands.ts` (the API commands), `run.ts` (the agent of
 * one run and its recorders), `tools.ts` (the fuzzer's tools), `oracle.ts` and `r6.ts` (checks).
 */
import fc from 'fast-check'
import { arbCommands } from './commands.js'
import { failed, finalChecks } from './oracle.js'
import { buildRun } from './run.js'
import { arbScenario, FUZZ_TOOL_NAMES } from './scenario.js'
import type { FuzzAgentOptions } from './types.js'

/** Runs the fuzzer; throws (with the shrunk scenario, seed and log) on the first failure. */
export async function fuzzAgent(opts: FuzzAgentOptions = {}): Promise<void> {
  const toolNames = [...FUZZ_TOOL_NAMES, ...(opts.tools ?? []).map((t) => t.name)]
  const maxSteps = opts.maxStepsPerTurn ?? 8
  await fc.assert(
    fc.asyncProperty(arbScenario(toolNames, opts), fc.scheduler(), arbCommands(opts.maxCommands ?? 12, opts.commands), async (sc, s, cmds) => {
      const run = buildRun(sc, s, opts)
      await fc.scheduledModelRun(s, () => ({ model: {}, real: run }), cmds)
      // Release whatever is still in flight until the agent reaches idle by itself (R8).
      await s.waitFor(Promise.all(run.deferred))
      await s.waitFor(run.agent.whenIdle())
      finalChecks(run, maxSteps, opts)
      // R7: whatever the hooks and the model did, the agent accepts and runs the next followup.
      const before = run.agent.events.filter((e) => e.type === 'turn/end').length
      run.agent.followup('final')
      await s.waitFor(run.agent.whenIdle())
      const after = run.agent.events.filter((e) => e.type === 'turn/end').length
      if (after <= before) throw failed('R7: the agent did not run a final followup', run)
      finalChecks(run, maxSteps, opts)
      opts.check?.({
        agent: run.agent, events: run.agent.events, plugins: run.plugins, decisions: run.decisions,
        idleAt: run.statuses.filter((x) => x.status === 'idle').map((x) => x.at), summaryRequests: run.summaryRequests,
      })
      opts.onRun?.(run.agent.events)
    }),
    { numRuns: opts.numRuns ?? 100, ...(opts.seed !== undefined ? { seed: opts.seed } : {}) },
  )
}
