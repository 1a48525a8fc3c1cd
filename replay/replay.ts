/**
 * Replay: rebuild every derived state from a stored log, or the state as of any seq.
 *
 * Replay is the reducers run over a stored log (README "Data flows one way"): the same recipes as
 * the live agent, folded in one pass (`foldEvents`) and frozen. So `stateAt(log, n)` equals what the
 * live agent held right after seq n was appended (P2), and a replay equals the live fold (P1).
 * The events are taken as given: validate and check them first (`readLog`, `verify`) when they
 * come from outside. Reducers never throw on a log that breaks an invariant; they stay
 * deterministic, and `verify` names the violation.
 */
import { TurnlogError, type LogEvent } from '../events/index.js'
import { foldEvents } from '../reducers/projection.js'
import type { ReplayState } from '../reducers/index.js'

export type { ReplayState }

/** The state after every event of `events`: `{ surface, history, transcript, inbox, lifecycle, usage }`, deep-frozen. */
export function replay(events: readonly LogEvent[]): ReplayState {
  return foldEvents(events)
}

/**
 * The state as of and including `seq`. Throws `INVALID_ARGUMENT` (with `seq`) when `seq` is not an
 * integer seq of the log, and `BAD_SEQ` when the log's seqs do not equal their indexes (L1).
 */
export function stateAt(events: readonly LogEvent[], seq: number): ReplayState {
  if (!Number.isInteger(seq) || seq < 0 || seq >= events.length) {
    const range = events.length === 0 ? 'the log is empty' : `the log has seqs 0..${events.length - 1}`
    throw new TurnlogError('INVALID_ARGUMENT', `seq ${String(seq)} is out of range: ${range}`, {
      seq: typeof seq === 'number' && Number.isFinite(seq) ? seq : undefined,
      field: 'seq',
      info: { length: events.length },
    })
  }
  const at = events[seq]!
  if (at.seq !== seq) {
    throw new TurnlogError('BAD_SEQ', `the event at index ${seq} has seq ${at.seq}`, {
      seq, expectedSeq: seq, actualSeq: at.seq,
    })
  }
  return foldEvents(events, { end: seq + 1 })
}
