/**
 * `openLogInStore`: the write handle `resumeAgent({ log, store })` continues a log through (issue 27
 * item 3: a forked or copied JSONL session continued with persistence; never a silently dropped
 * store).
 *
 * Under the session's write lock (taken first, so two processes doing this race to one winner;
 * the other gets `SESSION_OWNED`):
 * - a missing or empty session is filled with the whole log (created with the log's `createdAt`,
 *   `parent` and `inheritedEventCount`);
 * - a session that holds a prefix of the log, event for event (the same log: e.g. the store's own
 *   file, or a copy that fell behind), gets the rest appended;
 * - anything else (other events at some seq, or more events than the log) is `SESSION_EXISTS`,
 *   naming the seq; nothing is written and the lock is released.
 * The store validates every appended event (untrusted append): a log that is not valid is refused
 * with the store's coded error before anything of it is written.
 */
import type { LogEvent } from '../events/envelope.js'
import { deepEqual } from '../events/deep-equal.js'
import { TurnlogError } from '../events/errors.js'
import type { LogHeader } from '../events/jsonl.js'
import type { HeaderInit, LogStore, LogWriter } from '../stores/types.js'

/** Events per append while copying a long log (bounds one batch's size in every store). */
const CHUNK = 2000

export async function openLogInStore(
  store: LogStore,
  sessionId: string,
  log: { header: LogHeader; events: readonly LogEvent[] },
): Promise<LogWriter> {
  const init: HeaderInit = {
    createdAt: log.header.createdAt,
    ...(log.header.parent ? { parent: log.header.parent } : {}),
    ...(log.header.inheritedEventCount !== undefined ? { inheritedEventCount: log.header.inheritedEventCount } : {}),
  }
  try {
    await store.create(sessionId, init)
  } catch (err) {
    if (!TurnlogError.is(err, 'SESSION_EXISTS')) throw err
  }
  const w = await store.open(sessionId, 'write')
  try {
    const events = log.events
    if (w.length > events.length) {
      throw new TurnlogError('SESSION_EXISTS', `the store's session holds ${w.length} events, the log only ${events.length}: resume it from the store (resumeAgent({ store, sessionId }))`, {
        sessionId, info: { storedEvents: w.length, logEvents: events.length },
      })
    }
    let seq = 0
    for await (const e of w.events(0)) {
      if (!deepEqual(e, events[seq])) {
        throw new TurnlogError('SESSION_EXISTS', `the store's session holds another log: it differs from this one at seq ${seq}`, {
          sessionId, seq, info: { storedEvents: w.length },
        })
      }
      seq++
    }
    for (let at = w.length; at < events.length; at += CHUNK) {
      await w.append(events.slice(at, at + CHUNK), { expectedSeq: at })
    }
    return w
  } catch (err) {
    await w.close().catch(() => {})
    throw err
  }
}
