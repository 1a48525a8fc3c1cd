/**
 * The worker's side of a cross-process cancel (cancels.ts holds the request side): the holder of a
 * session handles its open requests
 * - when a worker claims the session (a request recorded while nobody, or a dead worker, held it;
 *   the claim says whether one is open, pool.ts),
 * - on NOTIFY `turnlog_cancel`, and on the fallback check (checks.ts: one statement for all
 *   sessions served here).
 *
 * A request covers the answer being written when it was recorded and the input sent before it:
 * - the open turn is cancelled (`agent.cancel(cause)`, which also clears the queued input, as a
 *   stop in the agent's own process does) when it started before the request was recorded, or it
 *   continues one that did (a resume or retry of it), or it answers a message sent before it;
 * - input sent before it that is not in the log yet is moved in and cancelled (a canceled splice:
 *   the log says what happened to it; the chat stream of that message ends without an answer).
 * A turn that answers only input sent after the stop runs on. The request is marked handled once
 * the cancel's `turn/end` is durable; a worker that dies before that leaves it open, and the next
 * holder cancels the resumed turn (it continues one that started before the request).
 *
 * It runs inside the session run's serial chain (`exclusive`), so no inbox pull moves input while it
 * decides what is before and after the stop.
 */
import type { Agent } from '../agent/types.js'
import type { CancelCause } from '../events/data.js'
import type { LogEvent } from '../events/envelope.js'
import type { CancelInboxRow, CancelRequestRow, WorkerBackend } from './backend.js'

/** What the handler needs of a session run (session-run.ts's `SessionRun` provides it). */
export interface CancelRun {
  readonly id: string
  readonly agent: Agent | null
  /** Sent message ids given to the agent (a message moved here is added). */
  readonly handed: Set<string>
  readonly writer: { expectMove(messageId: string): void; readonly live: boolean }
  readonly pool: {
    readonly backend: Pick<WorkerBackend, 'cancelRequests' | 'cancelInbox' | 'cancelHandled'>
    readonly stats: { moved: number }
    report(err: unknown, sessionId?: string): void
  }
  /** Runs `fn` in the run's serial chain (after the pulls queued before it, before later ones). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>
  /** What the run's start will read (session-run.ts): a request met before the agent exists sets
   * `cancels`, so the start handles it. */
  readonly first?: { cancels: boolean }
}

type RequestRow = CancelRequestRow

/** Requests being handled by this process (a poll must not handle one twice). */
const inFlight = new WeakMap<CancelRun, Set<string>>()

/** Handles the open cancel requests of one session served here. Never throws (errors are reported). */
export async function handleCancels(run: CancelRun): Promise<void> {
  const busy = inFlight.get(run) ?? new Set<string>()
  inFlight.set(run, busy)
  let waits: Array<Promise<void>> = []
  try {
    waits = await run.exclusive(async () => {
      const agent = run.agent
      // still resuming: the start handles the open requests once the agent exists
      if (!agent && run.first) run.first.cancels = true
      if (!agent || !run.writer.live) return []
      const requests = await run.pool.backend.cancelRequests(run.id)
      const out: Array<Promise<void>> = []
      for (const req of requests) {
        if (busy.has(req.n)) continue
        busy.add(req.n)
        let done: Promise<void>
        try {
          done = (await apply(run, agent, req)).done
        } catch (err) {
          done = Promise.reject(err)
        }
        // the request stays "in flight" until it is marked handled (a poll meanwhile skips it)
        out.push(done.catch((err: unknown) => run.pool.report(err, run.id)).finally(() => busy.delete(req.n)))
      }
      return out
    })
  } catch (err) {
    run.pool.report(err, run.id)
  }
  await Promise.all(waits)
}

/**
 * Applies one request (synchronously against the agent once the rows are read); resolves (in the
 * serial chain) to `done`, which settles outside it when the request is marked handled.
 */
async function apply(run: CancelRun, agent: Agent, req: RequestRow): Promise<{ done: Promise<void> }> {
  const queuedNow = (): string[] => [...agent.inbox.nextStep, ...agent.inbox.nextTurn].map((m) => m.id)
  // the ids that can be claimed by the time the rows are read: queued now or in the open turn
  const named = [...queuedNow(), ...(openTurn(agent.events as readonly LogEvent[])?.userIds ?? [])]
  // the sent messages this request covers that can still matter: not in the log yet, moved in
  // after the request was recorded, or queued / claimed by the open turn now
  const before: CancelInboxRow[] = await run.pool.backend.cancelInbox(run.id, req.sent_before, req.length_at, named)
  const covered = new Set(before.map((x) => x.message_id))
  let cause: CancelCause = { kind: 'user' }
  try {
    const c = JSON.parse(req.cause) as { kind?: unknown; reason?: unknown }
    if (c.kind === 'hook' && typeof c.reason === 'string') cause = { kind: 'hook', reason: c.reason }
  } catch {
    // a malformed cause (written by hand): the stop still happens, as the user's
  }
  // synchronous from here: no pull, no turn boundary in between (turns moved on during the read)
  const events = agent.events as readonly LogEvent[]
  const open = openTurn(events)
  const queued = queuedNow()
  const stops = open !== null && agent.status !== 'idle' && (startedBefore(events, open, req.length_at) || open.userIds.some((id) => covered.has(id)))
  let outcome = 'nothing-open'
  if (stops) {
    agent.cancel(cause)
    outcome = 'canceled'
  } else {
    for (const id of queued) if (covered.has(id) && agent.inbox.remove(id)) outcome = 'discarded'
  }
  // input sent before the stop and not moved yet: into the log, then out of it again (canceled)
  for (const row of before) {
    if (row.moved_seq !== null || run.handed.has(row.message_id)) continue
    let m: { content?: unknown; source?: unknown }
    try {
      m = JSON.parse(row.message) as typeof m
    } catch {
      continue // a row that is not JSON is reported by the pull that meets it
    }
    run.handed.add(row.message_id)
    run.writer.expectMove(row.message_id)
    try {
      agent.send({ id: row.message_id, content: m.content as never, ...(m.source ? { source: m.source as never } : {}) }, row.target === 'next-step' ? 'next-step' : 'next-turn', false)
      run.pool.stats.moved++
      agent.inbox.remove(row.message_id)
      if (outcome === 'nothing-open') outcome = 'discarded'
    } catch (err) {
      run.pool.report(err, run.id)
    }
  }
  const turn = stops ? open!.turn : null
  const done = (async () => {
    let endSeq: number | null = null
    if (turn !== null) endSeq = await turnEnd(agent, turn)
    await agent.flush()
    await run.pool.backend.cancelHandled(req.n, outcome, endSeq)
  })()
  return { done }
}

interface OpenTurn { turn: number; start: number; cause: { kind?: string; of?: number } | undefined; userIds: string[] }

/** The open turn of a log (its `turn/start` has no `turn/end`), with the user messages it claimed. */
export function openTurn(events: readonly LogEvent[]): OpenTurn | null {
  const userIds: string[] = []
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!
    if (e.type === 'turn/end') return null
    if (e.type === 'user/message') {
      const id = (e.data as { message?: { id?: unknown } }).message?.id
      if (typeof id === 'string') userIds.push(id)
    }
    if (e.type === 'turn/start') {
      const d = e.data as { turn: number; cause?: { kind?: string; of?: number } }
      return { turn: d.turn, start: i, cause: d.cause, userIds }
    }
  }
  return null
}

/** True when `open`, or the turn it resumes or retries (transitively), started before `length`. */
function startedBefore(events: readonly LogEvent[], open: OpenTurn, length: number): boolean {
  if (open.start < length) return true
  let of = open.cause?.kind === 'resume' || open.cause?.kind === 'retry' ? open.cause.of : undefined
  const seen = new Set<number>()
  while (of !== undefined && !seen.has(of)) {
    seen.add(of)
    let next: number | undefined
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!
      if (e.type !== 'turn/start' || (e.data as { turn?: number }).turn !== of) continue
      if (i < length) return true
      const c = (e.data as { cause?: { kind?: string; of?: number } }).cause
      next = c?.kind === 'resume' || c?.kind === 'retry' ? c.of : undefined
      break
    }
    of = next
  }
  return false
}

/** Resolves with the seq of turn `turn`'s `turn/end` once it is logged. */
function turnEnd(agent: Agent, turn: number): Promise<number> {
  const find = (): number => {
    const ev = agent.events as readonly LogEvent[]
    for (let i = ev.length - 1; i >= 0; i--) {
      const e = ev[i]!
      if (e.type === 'turn/end' && (e.data as { turn?: number }).turn === turn) return e.seq
    }
    return -1
  }
  const at = find()
  if (at >= 0) return Promise.resolve(at)
  return new Promise((resolve) => {
    const off = agent.subscribe((e) => {
      if (e.type === 'turn/end' && (e.data as { turn?: number }).turn === turn) {
        off()
        resolve(e.seq)
      }
    })
  })
}
