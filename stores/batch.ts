/** Checks shared by every store's `append`: expectedSeq, contiguous seqs, valid events. */
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import { findLossy } from '../events/lossless.js'
import type { EventRegistry } from '../events/registry.js'

/**
 * Throws `SEQ_CONFLICT` when `expectedSeq` is not the handle's `length`, `BAD_SEQ` when an event's
 * seq is not `expectedSeq + i`, `INVALID_EVENT`/`UNKNOWN_EVENT_TYPE`/`NOT_LOSSLESS` for an event no
 * reader would accept back. Changes nothing.
 */
export function checkBatch(
  sessionId: string,
  events: readonly LogEvent[],
  expectedSeq: unknown,
  length: number,
  registry: EventRegistry,
  trusted = false,
): void {
  if (!Array.isArray(events)) throw new TurnlogError('INVALID_ARGUMENT', 'append takes an array of events', { sessionId })
  if (typeof expectedSeq !== 'number' || !Number.isSafeInteger(expectedSeq) || expectedSeq < 0) {
    throw new TurnlogError('INVALID_ARGUMENT', 'append needs { expectedSeq } (a non-negative integer)', {
      sessionId, field: 'expectedSeq',
    })
  }
  if (expectedSeq !== length) {
    throw new TurnlogError('SEQ_CONFLICT', `expected seq ${expectedSeq}, but the log's next seq is ${length}`, {
      sessionId, expectedSeq, actualSeq: length,
    })
  }
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    const seq = (e as { seq?: unknown } | null)?.seq
    if (seq !== expectedSeq + i) {
      throw new TurnlogError('BAD_SEQ', `event ${i} of the batch has seq ${String(seq)}, expected ${expectedSeq + i}`, {
        sessionId, seq: typeof seq === 'number' ? seq : undefined, expectedSeq: expectedSeq + i, field: 'seq',
      })
    }
    if (trusted) continue
    registry.validate(e, { sessionId })
    const lossy = findLossy(e.data)
    if (lossy) throw new TurnlogError('NOT_LOSSLESS', lossy.why, { sessionId, seq: e.seq, field: lossy.path })
  }
}
