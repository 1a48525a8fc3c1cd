/**
 * `resumeAgent`: continue a session after a crash or a clean stop (issue "Resume", P5).
 *
 * 1. Reads the stored log (a JSONL path or bytes: torn tail tolerated; or events already in
 *    memory), and repairs it (`repair`): every complete record kept, the synthetic closers
 *    (`interrupted`) appended for whatever was open.
 * 2. Creates the agent with `prefix` = the repaired log. The agent rebuilds the inbox from the
 *    durable splices (pending followups and injects survive), continues the turn numbering, and
 *    logs `request/header {reason: 'resume'}` at its first request.
 * 3. Owes the interrupted turn its answer (docs/spec/lifecycle.md §8, `resume-plan.ts`): re-inserts the
 *    messages it claimed but never entered (one splice at the head of next-turn, source `resume`),
 *    and arms a resume turn (`turn/start {cause: {kind: 'resume', of}}`) when its input is still
 *    unanswered; `maxResumeRuns` bounds a poison turn (`agent/error` `RESUME_LIMIT`);
 *    `rerunInterrupted: false` opts out.
 * 4. Runs pending work (unless `autoStart: false`): `agent.wake()` opens the resume turn, or the
 *    first pending prompt's turn, at once; the rest run in order; `await agent.whenIdle()` waits
 *    for them. Pending next-step items alone do not open a turn (docs/spec/lifecycle.md §3.8); they join the
 *    next turn. Nothing is re-sent.
 *
 * Hooks: listeners given as `hooks` (and plugins) are installed before anything runs. A listener
 * added with `agent.on` after `resumeAgent` resolved misses the turn it already started: pass
 * `autoStart: false`, add the listeners, then call `agent.wake()`.
 */
import { createAgent } from '../agent/agent.js'
import type { Agent, AgentOptions } from '../agent/types.js'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import type { LogHeader } from '../events/jsonl.js'
import type { LogStore, LogWriter } from '../stores/types.js'
import { isSubagent } from '../agent/subagent.js'
import { RESULT_CODE, RESUME_CHILD, reissues, type ChildResumer } from '../tools/types.js'
import { openLogInStore } from './log-into-store.js'
import { checkResumeOptions, type RESUME_OPTION_FIELDS, type SameKeys } from './resume-options.js'
import { repair, repairEvents, type RepairResult } from './repair.js'
import { assertChildOf, readChildOutcomes } from './child-outcome.js'
import { repairSession } from './repair-session.js'
import { applyResumePlan, planResume } from './resume-plan.js'

export interface ResumeOptions extends Omit<AgentOptions, 'prefix'> {
  /**
   * Omit it to resume from `store` + `sessionId`: repaired under the write lock (`repairSession`:
   * torn bytes quarantined by the store, closers appended), and that handle is handed to the agent.
   *
   * The stored log: a JSONL path or its bytes (a torn tail is tolerated and quarantined in the
   * result), `{header, events}`, or the events alone.
   *
   * With `store` too, the repaired log is continued INTO the store (e.g. a forked JSONL file
   * continued with persistence), as session `sessionId` (default the log header's id): a missing
   * or empty session is created from the log (header `createdAt`, `parent`,
   * `inheritedEventCount` kept); a session holding a prefix of this same log gets the rest; a
   * session holding anything else is `SESSION_EXISTS` (nothing written), one with a live writer
   * `SESSION_OWNED`. Then every event goes to the store and `flush()` means durable there.
   */
  log?: string | Uint8Array | { header?: LogHeader; events: readonly LogEvent[] } | readonly LogEvent[]
  /**
   * Start the owed work at once (default true): the resume turn, or the pending prompts. With
   * `false`, `resumeAgent` resolves with the agent idle (the re-insertion splice already logged),
   * so the app can attach listeners with `agent.on` first, then call `agent.wake()`.
   */
  autoStart?: boolean
  /** @deprecated the former name of `autoStart` (still honoured when `autoStart` is not given). */
  runPending?: boolean
  /**
   * Re-run the turn a crash interrupted (default true, docs/spec/lifecycle.md §8): re-insert the messages it
   * claimed but never entered, and open a resume turn when its input is unanswered. `false`: the
   * claimed messages stay unanswered (the behaviour before §8).
   */
  rerunInterrupted?: boolean
  /** Called with the repair result before the agent is created (closers, quarantined bytes). */
  onRepaired?: (r: RepairResult) => void
}

// every ResumeOptions member has its line in the options schema, and no other (resume-options.ts)
const fieldsMatch: SameKeys<typeof RESUME_OPTION_FIELDS, ResumeOptions> = true
void fieldsMatch

/** Repairs the log, creates the agent on it, and starts its pending followups. */
export async function resumeAgent(opts: ResumeOptions): Promise<Agent> {
  // every option checked before the log is read or the store opened (issue 27 item 5)
  checkResumeOptions(opts, 'resumeAgent')
  const { log, runPending, autoStart, rerunInterrupted, onRepaired, ...agentOptions } = opts
  const start = autoStart ?? runPending ?? true
  const owe = (agent: Agent): Agent => {
    applyResumePlan(agent, planResume(agent.events, {
      ...(rerunInterrupted !== undefined ? { rerunInterrupted } : {}),
      ...(agentOptions.maxResumeRuns !== undefined ? { maxResumeRuns: agentOptions.maxResumeRuns } : {}),
    }))
    if (start) agent.wake()
    return agent
  }
  if (log === undefined) {
    // a store: repair under the session's write lock, then hand that handle to the agent
    if (!agentOptions.store || agentOptions.sessionId === undefined) {
      throw new TurnlogError('INVALID_ARGUMENT', 'resumeAgent needs { store, sessionId } or { log }', { field: 'log' })
    }
    const r = await repairSession(agentOptions.store, agentOptions.sessionId, { ...checker(agentOptions), keepOpen: true, reattach: reattaching(agentOptions), reissue: reissuing(agentOptions), continueRounds: true })
    onRepaired?.({
      log: { header: r.header, events: r.events }, closers: r.closers, keptEventCount: r.keptEventCount,
      quarantined: r.quarantined ? { offset: r.quarantined.offset, bytes: new Uint8Array(0) } : null,
    })
    return owe(createOwning(r.writer!, withChildResumer({ ...agentOptions, storeWriter: r.writer!, prefix: r.events })))
  }
  let repaired: RepairResult
  // continued into a store, the children live there: a running subagent call re-attaches its child
  // (and a finished child's outcome is read from there; a path's own directory otherwise)
  // a call that logged a round keeps its step open in every case: the resumed agent restores it (§11)
  const into = agentOptions.store ? { reattach: reattaching(agentOptions), reissue: reissuing(agentOptions), continueRounds: true } : { continueRounds: true }
  if (typeof log === 'string' || log instanceof Uint8Array) {
    repaired = await repair(log, { ...checker(agentOptions), ...into, ...(agentOptions.store ? { childLogs: agentOptions.store } : {}) })
  } else {
    const events: readonly LogEvent[] = Array.isArray(log) ? (log as readonly LogEvent[]) : (log as { events: readonly LogEvent[] }).events
    const header: LogHeader = (!Array.isArray(log) && (log as { header?: LogHeader }).header) || {
      type: 'session', format: 1, id: agentOptions.sessionId ?? 'resumed', createdAt: events[0]?.time ?? 0,
    }
    const children = agentOptions.store ? await readChildOutcomes(agentOptions.store, { header, events }) : undefined
    repaired = repairEvents({ header, events }, { ...checker(agentOptions), ...into, ...(children !== undefined ? { children } : {}) })
  }
  onRepaired?.(repaired)
  const sessionId = agentOptions.sessionId ?? repaired.log.header.id
  const { store, ...rest } = agentOptions
  // without a store the resumed agent logs in memory; with one, the log is continued into it
  // (log-into-store.ts: created from the log, or the same log's prefix completed; else refused)
  if (!store) return owe(createAgent({ ...rest, sessionId, prefix: repaired.log.events }))
  const writer = await openLogInStore(store, sessionId, repaired.log)
  return owe(createOwning(writer, withChildResumer({ ...rest, store, sessionId, storeWriter: writer, prefix: repaired.log.events })))
}

/**
 * Re-attachment (docs/spec/lifecycle.md §10): a running call whose tool is a `defineSubagent` tool of the
 * resumed agent keeps its step open; the agent restores it and the call resumes its child.
 */
function reattaching(o: Pick<AgentOptions, 'tools'>): (call: { name: string }) => boolean {
  return (call) => (o.tools ?? []).some((t) => isSubagent(t) && t.name === call.name)
}

/**
 * Re-issue (docs/spec/lifecycle.md §8, §12): a running call whose tool is issued again after a crash (an
 * idempotent MCP tool) keeps its step open; the agent restores it and runs the call again, once.
 */
function reissuing(o: Pick<AgentOptions, 'tools'>): (call: { name: string }) => boolean {
  return (call) => (o.tools ?? []).some((t) => t.name === call.name && reissues(t))
}

/** The options with the child resumer: a re-attached call resumes its child with `resumeAgent`. */
function withChildResumer(options: AgentOptions): AgentOptions {
  const resume: ChildResumer = async (o, parent) => {
    const store = o.store as LogStore
    // the parent died between its `child/spawned` and the child's creation: created now
    if (!(await store.has(o.sessionId))) await store.create(o.sessionId, { parent })
    else {
      // L19: whatever sits at the id is this call's child; if not, the call's outcome is unknown
      // (TOOL_OUTCOME_UNKNOWN, as repair says of it), never that log's answer
      try {
        await assertChildOf(store, o.sessionId, parent)
      } catch (err) {
        throw Object.assign(err as object, { [RESULT_CODE]: 'TOOL_OUTCOME_UNKNOWN' })
      }
    }
    return resumeAgent({ ...(o as unknown as ResumeOptions), autoStart: false })
  }
  return Object.assign(options, { [RESUME_CHILD]: resume })
}

/** `createAgent` with a write handle the agent will own: closed (the lock released) if creation throws. */
function createOwning(writer: LogWriter, options: AgentOptions): Agent {
  try {
    return createAgent(options)
  } catch (err) {
    void writer.close().catch(() => {})
    throw err
  }
}

function checker(o: Omit<AgentOptions, 'prefix'>): { maxStepsPerTurn?: number; maxRetries?: number; maxResumeRuns?: number } {
  const maxRetries = o.retry === false ? undefined : o.retry?.maxRetries
  return {
    ...(o.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: o.maxStepsPerTurn } : {}),
    ...(maxRetries !== undefined ? { maxRetries } : {}),
    ...(o.maxResumeRuns !== undefined ? { maxResumeRuns: o.maxResumeRuns } : {}),
  }
}

/**
 * Wakes an idle resumed agent: opens the armed resume turn, or the first pending prompt's turn
 * (the rest run in order). Returns true when it opened a turn. Same as `agent.wake()`.
 */
export function wakePending(agent: Agent): boolean {
  return agent.wake()
}
