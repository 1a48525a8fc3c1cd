/**
 * `turnlog inspect postgres://…#session-id`: a PostgreSQL session as the inspector's tail source.
 * Each poll opens a read snapshot (`store.open(id, 'read')`: the header and the committed length)
 * and streams the events after the last seq the page has (`events(fromSeq)`): a live tail by seq
 * offset. The store validates every event it reads. The store's LISTEN/NOTIFY channel announces
 * sent input (for workers), not appends, so polling by seq is the way to follow; a poll is two
 * small queries. `turnlog/stores/postgres` (and `pg`) is imported only here, only for such a URL.
 */
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import type { InspectorOptions, TailSource } from './inspect-server.js'
import { openUrlStore, parsePgLog, redact } from './pg.js'

export async function pgTail(arg: string): Promise<TailSource & { label: string }> {
  const { url, sessionId } = parsePgLog(arg)
  const store = await openUrlStore(url)
  let header: unknown = null
  return {
    label: `${redact(url)}#${sessionId}`,
    header: () => header,
    async read(events: LogEvent[]) {
      try {
        const r = await store.open(sessionId, 'read')
        header = r.header
        if (r.length <= events.length) return
        for await (const e of r.events(events.length)) {
          // the store yields seq order from the offset; anything else would be a store defect
          if (e.seq !== events.length) {
            throw new TurnlogError('INVALID_EVENT', `expected seq ${events.length}, read seq ${e.seq}`, { sessionId, seq: e.seq, field: 'seq' })
          }
          events.push(e)
        }
      } catch (err) {
        if (TurnlogError.is(err) && err.code === 'IO_ERROR' && /relation "turnlog_/.test(err.message)) {
          throw new TurnlogError('INVALID_ARGUMENT', `${redact(url)} has no turnlog tables (run store.migrate() first)`, { field: 'URL' }, { cause: err })
        }
        throw err
      }
    },
    close: () => store.close(),
    // a dropped connection or a restarting server: the next poll reconnects (the pool does)
    transient: (err) => TurnlogError.is(err) && err.code === 'IO_ERROR',
  }
}

/** The inspector options for a postgres LOG (the label without the password). */
export async function pgInspectorSource(arg: string): Promise<Pick<InspectorOptions, 'source' | 'label'>> {
  const source = await pgTail(arg)
  return { source, label: source.label }
}
