/**
 * The model-based fuzz of the real agent (issue: "a fast-check model-based test (fc.commands)
 * drives the Agent API … with fc.scheduler deciding the interleaving"). Checks L1–L16 on every
 * log and R1, R2, R3, R5, R7, R8 on every run; the fuzzer is the one users get (turnlog/testing).
 */
import { describe, expect, it } from 'vitest'
import type { AgentPlugin } from '../../agent/index.js'
import { basicCompaction } from '../../compaction/index.js'
import type { LogEvent } from '../../events/index.js'
import { checkR6, fuzzAgent } from '../../testing/index.js'
import { longRuns } from '../fc-runs.js'
import { censusSeed } from '../support/census-seed.js'

// 150 scheduled runs in `npm test`, the full 500 with TURNLOG_LONG=1 (`npm run test:long`, and CI's Node 24 lane; test/fc-runs.ts longRuns)
const runs = Number(process.env.TURNLOG_FUZZ_RUNS ?? longRuns(150, 500))

describe('fuzzAgent', () => {
  it(`L1–L16, R1–R5, R7, R8: ${runs} scheduled model-based runs of the agent (random seed)`, async () => {
    await fuzzAgent({ numRuns: runs })
  })

  it('the scenarios reach every shape the fuzzer claims (fixed seed, so the census is stable)', async () => {
    const seen = new Map<string, number>()
    const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1)
    const report = await fuzzAgent({
      numRuns: 1000,
      seed: censusSeed(20261129),
      onRun: (events) => {
        for (const e of events) {
          const d = e.data as any
          if (e.type === 'turn/end') count(`turn/end ${d.reason.kind}`)
          else if (e.type === 'step/end') count(`step/end ${d.outcome.kind}`)
          else if (e.type === 'tool/result') count(d.error ? `tool ${d.error.code}` : 'tool ok')
          else if (e.type === 'assistant/message' && d.interrupted) count('interrupted')
          else if (e.type === 'llm/retry') count('llm/retry')
          else if (e.type === 'turn/start' && d.cause) count('retry turn')
        }
      },
    })
    // The generator must reach every shape it claims to fuzz (a fuzzer that never cancels proves nothing).
    for (const k of [
      'turn/end completed', 'turn/end blocked', 'turn/end aborted', 'turn/end error', 'turn/end max-tokens',
      'step/end tools', 'step/end stop', 'step/end failed', 'step/end aborted', 'step/end max-tokens',
      'tool ok', 'tool TOOL_ERROR', 'tool UNKNOWN_TOOL', 'tool INVALID_ARGS', 'llm/retry', 'retry turn', 'interrupted',
      'tool ABORTED_BEFORE_DISPATCH', 'turn/end step-limit',
    ]) expect(seen.get(k) ?? 0, k).toBeGreaterThan(0)
    // The hostile mix (issue 9): hooks and tool bodies that never settle (released by a cancel and
    // the grace period), late settlements, throwing getters, hook-initiated cancels; R5 held in all.
    const c = report.census
    for (const k of ['hang agent/pre-step', 'hang agent/turn-stopping', 'hang tool body (hang)', 'hang tool body (late)',
      'abandoned agent/pre-step', 'abandoned agent/turn-stopping', 'abandoned tools/execute', 'late tools/execute']) {
      expect(c.hostile[k] ?? 0, k).toBeGreaterThan(0)
    }
    expect(c.toolResults.INVALID_TOOL_OUTPUT ?? 0, 'throwing getter in a tool output').toBeGreaterThan(0)
    expect(c.toolResults.ABORTED ?? 0, 'abandoned calls get ABORTED').toBeGreaterThan(0)
    expect(c.cancels['hook hook'] ?? 0, 'hook-initiated cancels').toBeGreaterThan(0)
    expect(c.cancels['fuzzer user'] ?? 0, 'hangs released by a cancel').toBeGreaterThan(0)
    // issue 23: what real providers stream besides deltas reaches the agent under the fuzzer
    for (const k of ['refusal', 'refusal explanation', 'signed thinking', 'redacted thinking', 'provider data on text', 'provider-executed call', 'source', 'file']) {
      expect(c.other[k] ?? 0, k).toBeGreaterThan(0)
    }
  })

  it('the fuzzer can fail: a tool that breaks the log is caught', async () => {
    // A hook that enters a message twice makes the driver's append refuse (L11): the fuzzer must report it.
    await expect(
      fuzzAgent({
        numRuns: 50,
        hooks: {
          'agent/pre-step': async (p, next) => next({ ...p, messages: [...p.messages, ...p.messages] }),
        },
      }),
    ).rejects.toThrow()
  })
})

describe('fuzzAgent with plugins', () => {
  it('R6 with basicCompaction: overflow failures and large outputs (plugins as a list: one instance on every run\'s agent)', async () => {
    const seen = new Set<string>()
    await fuzzAgent({
      numRuns: 150,
      plugins: [basicCompaction({ contextWindow: 1000, pruneThresholdChars: 1000, pruneHead: 400, pruneTail: 200, minRangeTokens: 0 })],
      overflow: true,
      largeOutputs: true,
      r6: { maxOverflowRetries: 1 },
      onRun: (events) => {
        for (const e of events) if (e.type.startsWith('compaction/')) seen.add(e.type)
        if (events.some((e) => e.type === 'turn/start' && (e.data as { cause?: unknown }).cause !== undefined)) seen.add('retry turn')
      },
    })
    for (const k of ['compaction/prune', 'compaction/start', 'compaction/summary', 'compaction/end', 'retry turn']) expect(seen.has(k), k).toBe(true)
  })

  it('L14 regression (seed 1524558768): a cancel during the summary call ends the turn with the compaction bracket closed first, never a refused turn/end', async () => {
    // the run CI's fresh seed found: an overflow, the compaction hook's summary call cancelled, the
    // hook abandoned at the turn's abort; the turn's end came while the bracket was still open
    await fuzzAgent({
      numRuns: 1, seed: 1524558768, path: '95:0:0:0:0:1:1:1:0:0:0:0:0:0:0:3:9:9:14:14:14:14:14|v:B',
      plugins: [basicCompaction({ contextWindow: 1000, pruneThresholdChars: 1000, pruneHead: 400, pruneTail: 200, minRangeTokens: 0 })],
      overflow: true, largeOutputs: true, r6: { maxOverflowRetries: 1 },
    })
  })

  it('R6 catches a plugin that retries every overflow without compacting', async () => {
    const reckless: AgentPlugin = {
      name: 'compaction',
      install(agent) {
        return agent.on('agent/request-error', async (p, next) => (p.failure.code === 'CONTEXT_WINDOW_EXCEEDED' ? { kind: 'retry' } : next()))
      },
    }
    const err = await fuzzAgent({ numRuns: 100, plugins: () => [reckless], overflow: true }).then(() => null, (e: Error) => e)
    expect(err).not.toBeNull()
    expect(String((err!.cause as Error | undefined)?.message ?? err!.message)).toMatch(/^R6: /)
  })

  it('checkR6 from the log alone: a retry turn after an overflow needs a replacement in the failed turn', () => {
    const header = [
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'error', failure: { code: 'CONTEXT_WINDOW_EXCEEDED', message: 'x' } } } },
      { type: 'turn/start', data: { turn: 2, cause: { kind: 'retry', of: 1 } } },
    ]
    const events = [{ type: 'step/end', data: {} }, ...header].map((e, seq) => ({ ...e, seq, time: 0 })) as unknown as LogEvent[]
    expect(checkR6(events)).toMatch(/R6: retry turn at seq 2/)
    const withPrune = [{ type: 'step/end', data: {} }, { type: 'tool/result', data: {}, surfaceOp: { op: 'replace', start: 0, end: 0 } }, ...header]
      .map((e, seq) => ({ ...e, seq, time: 0 })) as unknown as LogEvent[]
    expect(checkR6(withPrune)).toBeNull()
  })
})
