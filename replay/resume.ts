/**
 * `resumeAgent`: continue a session after a crash or a clean stop (issue "Resume", P5).
 *
 * 1. Reads the stored log (a JSONL path or bytes: torn tail tolerated; or events already in
 *    memory), and repairs it (`repair`): every complete record kept, the synthetic closers
 *    (`interrupted`) appended for whatever was open.
 * 2. Creates the agent with `prefix` = the repaired log. The agent rebuilds the inbox from the
 *    durable splices (pending followups and injects survive), continues the turn numbering, and
 *    logs `request/header {reason: 'resume'}` at its first request.
 * 3. Runs pending work: when next-turn holds prompts, the agent is woken so they run in order;
 *    `await agent.whenIdle()` waits for them. Pending next-step items alone do not open a turn
 *    (lifecycle §3.8: injected context never wakes); they join the next turn.
 *    Waking is `agent.wake()`: the first pending prompt's turn opens at once; nothing is re-sent.
 */
import { createAgent } from '../agent/agent.js'
import type { Agent, AgentOptions } from '../agent/types.js'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import type { LogHeader } from '../events/jsonl.js'
import { repair, repairEvents, type RepairResult } from './repair.js'
import { repairSession } from './repair-session.js'

export interface ResumeOptions extends Omit<AgentOptions, 'prefix'> {
  /**
   * Omit it to resume from `store` + `sessionId`: repaired under the write lock (`repairSession`:
   * torn bytes quarantined by the store, closers appended), and that handle is handed to the agent.
   *
   * The stored log: a JSONL path or its bytes (a torn tail is tolerated and quarantined in the
   * result), `{header, events}`, or the events alone.
   */
  log?: string | Uint8Array | { header?: LogHeader; events: readonly LogEvent[] } | readonly LogEvent[]
  /** Run pending next-turn prompts at once (default true). */
  runPending?: boolean
  /** Called with the repair result before the agent is created (closers, quarantined bytes). */
  onRepaired?: (r: RepairResult) => void
}

/** Repairs the log, creates the agent on it, and starts its pending followups. */
export async function resumeAgent(opts: ResumeOptions): Promise<Agent> {
  const { log, runPending, onRepaired, ...agentOptions } = opts
  if (log === undefined) {
    // a store: repair under the session's write lock, then hand that handle to the agent
    if (!agentOptions.store || agentOptions.sessionId === undefined) {
      throw new TurnlogError('INVALID_ARGUMENT', 'resumeAgent needs { store, sessionId } or { log }', { field: 'log' })
    }
    const r = await repairSession(agentOptions.store, agentOptions.sessionId, { ...checker(agentOptions), keepOpen: true })
    onRepaired?.({
      log: { header: r.header, events: r.events }, closers: r.closers, keptEventCount: r.keptEventCount,
      quarantined: r.quarantined ? { offset: r.quarantined.offset, bytes: new Uint8Array(0) } : null,
    })
    const agent = createAgent({ ...agentOptions, storeWriter: r.writer!, prefix: r.events })
    if (runPending ?? true) wakePending(agent)
    return agent
  }
  let repaired: RepairResult
  if (typeof log === 'string' || log instanceof Uint8Array) {
    repaired = await repair(log, checker(agentOptions))
  } else {
    const events: readonly LogEvent[] = Array.isArray(log) ? (log as readonly LogEvent[]) : (log as { events: readonly LogEvent[] }).events
    const header: LogHeader = (!Array.isArray(log) && (log as { header?: LogHeader }).header) || {
      type: 'session', format: 1, id: agentOptions.sessionId ?? 'resumed', createdAt: events[0]?.time ?? 0,
    }
    repaired = repairEvents({ header, events }, checker(agentOptions))
  }
  onRepaired?.(repaired)
  const sessionId = agentOptions.sessionId ?? repaired.log.header.id
  // without a store the resumed agent logs in memory (pass { store, sessionId } to persist)
  const { store: _store, ...rest } = agentOptions
  void _store
  const agent = createAgent({ ...rest, sessionId, prefix: repaired.log.events })
  if (runPending ?? true) wakePending(agent)
  return agent
}

function checker(o: Omit<AgentOptions, 'prefix'>): { maxStepsPerTurn?: number; maxRetries?: number } {
  const maxRetries = o.retry === false ? undefined : o.retry?.maxRetries
  return {
    ...(o.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: o.maxStepsPerTurn } : {}),
    ...(maxRetries !== undefined ? { maxRetries } : {}),
  }
}

/**
 * Wakes an idle agent whose next-turn list holds prompts (from a resumed log): the pending
 * followups run in order, each in its own turn. Returns true when it opened a turn.
 */
export function wakePending(agent: Agent): boolean {
  return agent.wake()
}
