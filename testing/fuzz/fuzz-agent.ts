/**
 * `fuzzAgent`: a fast-check model-based fuzzer of the real agent. It generates inbox operations
 * (followup, steer, inject, remove, replace, clear, bursts), model behaviours (text, reasoning,
 * tool calls with arguments from each tool's JSON Schema (any library's) and deliberately invalid ones, transient
 * and terminal errors, max-tokens, grammar violations, broken streams), hook decisions (reject,
 * throw, enter nothing, steer at turn-stopping), tool outcomes and cancels; lets `fc.scheduler`
 * decide the interleaving of model chunks, hooks and tool bodies; runs the agent and checks every
 * log invariant (L1–L16, via `verify`) and the runtime ones (R1–R5, R7, R8; R6 with a compaction
 * plugin), plus "memory follows the log" after every command. A run with no progress for
 * `stuckAfterMs` fails `STUCK` naming what was pending. A failure throws a `FuzzFailure` (the
 * violated invariant and its message, the seed and path that replay exactly that run, the shrunk
 * scenario, the run's log); success resolves to a report with the census of what ran.
 *
 * Users run it against their own tools and hooks: `await fuzzAgent({ tools, hooks, numRuns })`, and
 * against their plugins: `await fuzzAgent({ plugins: [basicCompaction({ contextWindow: 1000 })],
 * overflow: true, largeOutputs: true })` adds `CONTEXT_WINDOW_EXCEEDED` failures and large tool
 * outputs to the scenarios, answers the plugin's summary calls (`purpose: 'compaction'`) with
 * generated summaries (short, too long, empty, failing, throwing, cancelling), and checks R6 from
 * the log and from the `agent/request-error` decisions when a compaction plugin is installed.
 *
 * The parts: `scenario.ts` and `args.ts` (generation), `commands.ts` (the API commands), `run.ts`
 * (the agent of one run and its recorders), `wrap.ts` (the user's tools and hooks, tracked),
 * `tools.ts` (the fuzzer's tools), `oracle.ts` and `r6.ts` (checks), `stuck.ts`, `census.ts`,
 * `failure.ts`.
 */
import fc from 'fast-check'
import { arbApprovalCall } from './approval-tool.js'
import { arbFuzzApprovalCall } from './approval-plan.js'
import { checkApprovals, INPUT_PARKED_ACTIONS, PARKED_ACTIONS, settleParked, type ParkedAction } from './approvals.js'
import { arbUserCall } from './args.js'
import { arbInputCall, ASK_TOOL, CLIENT_TOOL } from './input-tool.js'
import { checkInputs, inputShapes } from './inputs.js'
import { arbChildCall, CHILD_TOOL } from './children.js'
import { checkChildren } from './children-check.js'
import { approvalShapes } from './approval-shapes.js'
import { bump, countRun, newCensus } from './census.js'
import { arbCommands } from './commands.js'
import { FuzzFailure, FuzzViolation } from './failure.js'
import { checkBudget } from './budget-check.js'
import { driverViolation, failed, finalChecks } from './oracle.js'
import { buildRun, type Run } from './run.js'
import { arbScenario, FUZZ_TOOL_NAMES, type UserCalls } from './scenario.js'
import { signature, watchdog } from './stuck.js'
import type { FuzzAgentOptions, FuzzReport } from './types.js'
import { toolsOf } from './wrap.js'

const DEFAULT_STUCK_AFTER_MS = 5_000
/** While shrinking a hang, at most this many runs may be judged by the full timer (the rest are
 * recognised at once, or skipped): shrinking a hang stays bounded in time. */
const MAX_TIMED_STUCK_SHRINKS = 8

/**
 * Runs the fuzzer. Resolves to a report (`numRuns`, `seed`, `census`) when every run held every
 * invariant; throws a `FuzzFailure` otherwise. Never hangs: a run that stops making progress fails
 * `STUCK` after `stuckAfterMs`.
 */
export async function fuzzAgent(opts: FuzzAgentOptions = {}): Promise<FuzzReport> {
  // The names and schemas of the user's tools (a factory is called once more here).
  const sample = toolsOf(opts)
  const approvalTool = opts.approvals === true && !opts.ownToolsOnly
  const children = opts.children === true && !opts.ownToolsOnly
  const inputTools = opts.inputs === true && !opts.ownToolsOnly
  const parks = opts.approvals === true || opts.inputs === true
  // the approval tool weighs as much as a user's tool (as all the fuzzer's own together): its calls
  // are what an approvals fuzz is about, and a rare park made the census depend on the seed; the
  // subagent tool likewise
  const userCalls: UserCalls = {
    ...(approvalTool ? { fuzz_approval: arbFuzzApprovalCall(arbApprovalCall()) } : {}), ...(children ? { [CHILD_TOOL]: arbChildCall() } : {}),
    // both input tools' calls under one name: they weigh as one user tool
    ...(inputTools ? { [ASK_TOOL]: arbInputCall() } : {}),
    ...Object.fromEntries(sample.map((t) => [t.name, arbUserCall(t)])),
  }
  const toolNames = [...FUZZ_TOOL_NAMES, ...(approvalTool ? ['fuzz_approval'] : []), ...(children ? [CHILD_TOOL] : []), ...(inputTools ? [ASK_TOOL, CLIENT_TOOL] : []), ...sample.map((t) => t.name)]
  const maxSteps = opts.maxStepsPerTurn ?? 8
  const stuckAfterMs = opts.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS
  const numRuns = opts.numRuns ?? 100
  const seed = opts.seed ?? (Math.random() * 2 ** 31) | 0
  // Our path is fast-check's path, then `|` and the commands' replay path when there is one.
  const [fcPath, replayPath] = opts.path !== undefined ? splitPath(opts.path) : [undefined, undefined]
  const census = newCensus()
  let failing = false
  // What hung before: while shrinking, the same hang is recognised as soon as the run is quiet.
  const hangs = new Set<string>()
  let timedStucks = 0

  const property = fc.asyncProperty(arbScenario(toolNames, opts, userCalls, opts.hostile !== false), fc.scheduler(), arbCommands(opts.maxCommands ?? 12, opts.commands, replayPath, opts.approvals === true, opts.inputs === true),
    // at least the first park is planned (an empty plan only approved, and whether an expiry, a steer or a
    // cancel while parked came up at all depended on the seed)
    parks ? fc.array(fc.constantFrom(...(opts.inputs === true ? INPUT_PARKED_ACTIONS : PARKED_ACTIONS)), { minLength: 1, maxLength: 4 }) : fc.constant<ParkedAction[]>([]), async (sc, s, cmds, parked) => {
    if (timedStucks > MAX_TIMED_STUCK_SHRINKS) fc.pre(false)
    const run = buildRun(sc, s, opts)
    const quick = hangs.size > 0 ? () => run.pending.list().some((p) => hangs.has(signature(p))) : undefined
    const dog = watchdog(stuckAfterMs, run.progress, (how) => {
      if (how === 'timer') timedStucks++
      return stuckViolation(run, stuckAfterMs, how)
    }, quick)
    try {
      await Promise.race([body(run, s, cmds, maxSteps, opts, parked), dog.stuck])
    } catch (err) {
      failing = true
      if (err instanceof FuzzViolation) {
        if (err.invariant === 'STUCK') for (const p of err.pending) hangs.add(signature(p))
        // a driver defect earlier in the run is the cause of what failed after it (R7, R2, …)
        throw driverViolation(run) ?? err
      }
      throw new FuzzViolation('ERROR', `threw: ${err instanceof Error ? err.stack ?? err.message : String(err)}`, [...run.agent.events])
    } finally {
      dog.stop()
    }
    if (!failing) {
      countRun(census, { events: run.agent.events, bodies: run.bodyCount, errors: run.errors, cancels: run.cancels, hostile: run.hostile })
      for (const [k, n] of Object.entries(run.children)) census.other[k] = (census.other[k] ?? 0) + n
      for (const [k, n] of Object.entries(run.restarts)) census.other[k] = (census.other[k] ?? 0) + n
      // the shapes round 14's approval defects lived in (approval-shapes.ts): the generator must keep reaching them
      for (const k of approvalShapes(run.agent.events, run.cancels, run.errors)) bump(census.other, `approval: ${k}`)
      // the rounds reached (docs/spec/lifecycle.md §11): only with inputs, so other fuzzes pay nothing for it
      if (opts.inputs === true) for (const k of inputShapes(run.agent.events)) bump(census.other, k)
    }
  })

  const details = await fc.check(property, {
    numRuns, seed,
    ...(fcPath !== undefined ? { path: fcPath, endOnFailure: true } : {}),
  })
  if (!details.failed) return { numRuns, seed, census }
  const err = details.errorInstance
  const v = err instanceof FuzzViolation ? err : new FuzzViolation('ERROR', String(err), [])
  throw new FuzzFailure({
    invariant: v.invariant,
    detail: v.detail,
    seed: details.seed,
    path: joinPath(details.counterexamplePath ?? '', details.counterexample),
    counterexample: describeCounterexample(details.counterexample),
    events: v.events,
    pending: v.pending,
    numRuns: details.numRuns,
    numShrinks: details.numShrinks,
    census,
    cause: err,
  })
}

/** One run: the commands, then everything released until idle, the checks, and R7's final followup. */
async function body(run: Run, s: fc.Scheduler, cmds: Iterable<fc.AsyncCommand<object, Run>>, maxSteps: number, opts: FuzzAgentOptions, parked: readonly ParkedAction[]): Promise<void> {
  await fc.scheduledModelRun(s, () => ({ model: {}, real: run }), cmds)
  // Release whatever is still in flight until the agent reaches idle by itself (R8).
  await s.waitFor(Promise.all(run.deferred))
  // a parked run is decided (approved) until idle: a person answers, eventually (docs/spec/lifecycle.md §9)
  await settleParked(run, s, parked)
  await familyChecks(run, s, maxSteps)
  finalChecks(run, maxSteps, opts)
  if (run.budget !== null) checkBudget(run, run.budget)
  checkApprovals(run)
  checkInputs(run)
  // R7: whatever the hooks and the model did, the agent accepts and runs the next followup.
  const before = run.agent.events.filter((e) => e.type === 'turn/end').length
  run.agent.followup('final')
  await settleParked(run, s)
  await familyChecks(run, s, maxSteps)
  const after = run.agent.events.filter((e) => e.type === 'turn/end').length
  if (after <= before) throw failed('R7: the agent did not run a final followup', run)
  finalChecks(run, maxSteps, opts)
  if (run.budget !== null) checkBudget(run, run.budget)
  checkApprovals(run)
  checkInputs(run)
  try {
    opts.check?.({
      agent: run.agent, events: run.agent.events, plugins: run.plugins, decisions: run.decisions,
      idleAt: run.statuses.filter((x) => x.status === 'idle').map((x) => x.at), summaryRequests: run.summaryRequests,
    })
  } catch (err) {
    if (err instanceof FuzzViolation) throw err
    // keep an invariant id the check names (`R6: …`), else it is the user's own check
    throw failed(err instanceof Error ? err.message : String(err), run, 'CHECK')
  }
  opts.onRun?.(run.agent.events)
}

/**
 * With children: every child body settles (a cancelled child closes as the scheduler releases it;
 * one that never does is STUCK), then the family is checked (children-check.ts). The tally is
 * taken from the last check only (the final followup's check sees every child).
 */
async function familyChecks(run: Run, s: fc.Scheduler, maxSteps: number): Promise<void> {
  if (run.store === null) return
  await s.waitFor(Promise.all(run.childBodies))
  await s.waitFor(run.agent.flush())
  const tally: Record<string, number> = {}
  await s.waitFor(checkChildren(run.store, run.agent.sessionId, run.agent.events, tally, maxSteps))
  run.children = tally
}

function stuckViolation(run: Run, ms: number, how: 'timer' | 'quick'): FuzzViolation {
  const a = run.agent
  const pending = run.pending.list()
  let where = ''
  try {
    const snap = a.snapshot()
    const calls = snap.pendingToolCalls.map((c) => `'${c.name}' ${c.callId}`).join(', ')
    where = `; the agent is ${snap.status}, turn ${snap.openTurn ?? '-'} step ${snap.openStep ?? '-'} (${stateText(snap.turn.state)}${snap.step ? `/${stateText(snap.step.state)}` : ''})` +
      `${calls ? `, tool calls without a result: ${calls}` : ''}; ${run.scheduler.count()} scheduled task(s) waiting`
  } catch {
    // a snapshot that throws tells nothing more
  }
  const what = pending.length ? `pending: ${pending.join('; ')}` : 'nothing the fuzzer tracks is pending'
  const since = how === 'timer' ? `no progress for ${ms} ms` : 'no progress (quiet while a call that hung in an earlier run is pending again)'
  return new FuzzViolation('STUCK', `${since}; ${what}${where}`, [...a.events], pending)
}

/** A machine's state value as text: `idle`, `running.runningTools` (an XState value is a string or
 * an object of one nested value per region). */
function stateText(v: unknown): string {
  if (typeof v === 'string') return v
  if (v !== null && typeof v === 'object') {
    return Object.entries(v as Record<string, unknown>).map(([k, x]) => (x === undefined || x === null || (typeof x === 'object' && Object.keys(x).length === 0) ? k : `${k}.${stateText(x)}`)).join(',')
  }
  return String(v)
}

function splitPath(path: string): [string, string | undefined] {
  const i = path.indexOf('|')
  return i < 0 ? [path, undefined] : [path.slice(0, i), path.slice(i + 1)]
}

/** fast-check's path, plus the replay path of the commands (fc.commands shrinks by what ran, so
 * replaying a shrunk run needs it). */
function joinPath(fcPath: string, ce: unknown): string {
  const cmds = Array.isArray(ce) ? String(ce[2]) : ''
  const m = /replayPath="([^"]*)"/.exec(cmds)
  return m ? `${fcPath}|${m[1]}` : fcPath
}

function describeCounterexample(ce: unknown): string {
  if (!Array.isArray(ce)) return fc.stringify(ce)
  const [sc, , cmds] = ce as [unknown, unknown, unknown]
  return `scenario ${fc.stringify(sc)}; commands ${String(cmds).replace(/\s*\/\*replayPath=.*\*\/\s*$/, '') || '(none)'}`
}
