/**
 * The whole-log form of the span fold (fold.ts): every span of a log, starts and ends merged, for
 * the exporters (OTLP/JSON, the span tree) and the CLI.
 */
import type { LogEvent } from '../events/index.js'
import { SpanFold, type SpanEnd, type SpanFoldOptions, type SpanStart } from './fold.js'

/** A finished (or still open) span: start and end merged. */
export interface SpanRecord extends SpanStart {
  endTime?: number
  status: SpanEnd['status']
}

/**
 * The pure mapping over a whole log: every span, in start order, with end attributes merged in.
 * Spans still open at the end of the log have no `endTime`.
 */
export function logToSpans(events: Iterable<LogEvent>, opts: SpanFoldOptions): SpanRecord[] {
  const fold = new SpanFold(opts)
  const spans: SpanRecord[] = []
  const byKey = new Map<string, SpanRecord>()
  for (const e of events) {
    for (const a of fold.push(e)) {
      if (a.op === 'start') {
        const { op: _op, ...s } = a
        const rec: SpanRecord = { ...s, attributes: { ...s.attributes }, status: { code: 'unset' } }
        spans.push(rec)
        byKey.set(rec.key, rec)
      } else {
        const rec = byKey.get(a.key)
        if (rec === undefined) continue
        rec.endTime = a.endTime
        Object.assign(rec.attributes, a.attributes)
        rec.status = a.status
      }
    }
  }
  return spans
}
