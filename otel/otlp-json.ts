/**
 * Spans of a log as an OTLP/JSON `ExportTraceServiceRequest` (the body an OTLP/HTTP JSON exporter
 * posts to `/v1/traces`), with no OpenTelemetry package: the CLI's `turnlog export --format
 * otlp-json` uses it, and a collector or backend can ingest the file as is.
 *
 * Ids are derived from the session id and the span's key (SHA-256), so the same log always gives
 * the same file; each turn is its own trace. Spans still open at the end of the log (a live or
 * torn log) have no end and are left out.
 */
import { createHash } from 'node:crypto'
import type { LogEvent } from '../events/index.js'
import { DOUBLE_ATTRIBUTES } from './attributes.js'
import type { AttrValue } from './fold.js'
import type { SpanFoldOptions } from './fold.js'
import { logToSpans, type SpanRecord } from './log-to-spans.js'

type OtlpValue =
  | { stringValue: string }
  | { intValue: string }
  | { doubleValue: number }
  | { boolValue: boolean }
  | { arrayValue: { values: OtlpValue[] } }

function value(v: AttrValue, key = ''): OtlpValue {
  if (typeof v === 'string') return { stringValue: v }
  if (typeof v === 'boolean') return { boolValue: v }
  // a double-typed attribute stays a double when whole (temperature 1 is not the int 1)
  if (typeof v === 'number') return Number.isInteger(v) && !DOUBLE_ATTRIBUTES.has(key) ? { intValue: String(v) } : { doubleValue: v }
  return { arrayValue: { values: v.map((s) => ({ stringValue: s })) } }
}

function hexId(sessionId: string, key: string, bytes: number): string {
  return createHash('sha256').update(`${sessionId}\u0000${key}`).digest('hex').slice(0, bytes * 2)
}

const nanos = (ms: number): string => (BigInt(Math.round(ms)) * 1_000_000n).toString()

/** The OTLP/JSON request for a log's spans (see the module comment). */
export function toOtlpJson(
  events: Iterable<LogEvent>,
  opts: SpanFoldOptions & { serviceName?: string; scopeVersion?: string },
): { resourceSpans: unknown[] } {
  return spansToOtlpJson(logToSpans(events, opts), opts)
}

/**
 * The OTLP/JSON request for span records: a log's (`logToSpans`) or a parent's with its children
 * (`familyToSpans`, otel/family.ts). Ids are derived from `opts.sessionId` (the root session) and
 * each record's key.
 */
export function spansToOtlpJson(
  records: readonly SpanRecord[],
  opts: { sessionId: string; serviceName?: string; scopeVersion?: string },
): { resourceSpans: unknown[] } {
  const byKey = new Map<string, SpanRecord>(records.map((r) => [r.key, r]))
  const rootOf = (r: SpanRecord): SpanRecord => {
    let cur = r
    while (cur.parentKey !== undefined && byKey.has(cur.parentKey)) cur = byKey.get(cur.parentKey)!
    return cur
  }
  const spans = records
    .filter((r) => r.endTime !== undefined)
    .map((r) => {
      const span: Record<string, unknown> = {
        traceId: hexId(opts.sessionId, `trace:${rootOf(r).key}`, 16),
        spanId: hexId(opts.sessionId, r.key, 8),
        name: r.name,
        kind: r.kind === 'client' ? 3 : 1, // SPAN_KIND_CLIENT, SPAN_KIND_INTERNAL
        startTimeUnixNano: nanos(r.startTime),
        endTimeUnixNano: nanos(r.endTime!),
        attributes: Object.entries(r.attributes).map(([key, v]) => ({ key, value: value(v, key) })),
        status: r.status.code === 'error' ? { code: 2, ...(r.status.message ? { message: r.status.message } : {}) } : { code: 0 },
      }
      if (r.parentKey !== undefined && byKey.has(r.parentKey)) span.parentSpanId = hexId(opts.sessionId, r.parentKey, 8)
      // a retry's links to the failed attempt (another trace: each turn is its own)
      const links = (r.links ?? []).filter((l) => byKey.has(l.key)).map((l) => ({
        traceId: hexId(opts.sessionId, `trace:${rootOf(byKey.get(l.key)!).key}`, 16),
        spanId: hexId(opts.sessionId, l.key, 8),
        ...(l.attributes !== undefined ? { attributes: Object.entries(l.attributes).map(([key, v]) => ({ key, value: value(v, key) })) } : {}),
      }))
      if (links.length > 0) span.links = links
      return span
    })
  return {
    resourceSpans: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: opts.serviceName ?? 'turnlog' } }] },
      scopeSpans: [{ scope: { name: 'turnlog', ...(opts.scopeVersion ? { version: opts.scopeVersion } : {}) }, spans }],
    }],
  }
}
