/**
 * `exportFamilySpans(tree, tracer)`: a parent session and its children through an OpenTelemetry
 * `Tracer` after the fact, each child's spans under the parent's `execute_tool` span of the call
 * that spawned it (otel/family.ts). Spans are started parent first and ended with the log's times;
 * spans still open at the end of a log are not ended (as `exportSpans` does).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link, type Span, type Tracer } from '@opentelemetry/api'
import { semconvFromEnv } from './attributes.js'
import { familyToSpans, type SessionTree } from './family.js'
import type { OtelOptions } from './tracer.js'

/** Exports the tree's spans through `tracer`; returns the number of spans started. */
export function exportFamilySpans(tree: SessionTree, tracer: Tracer, opts: Omit<OtelOptions, 'conversationId'> = {}): number {
  const { parentContext, ...rest } = opts
  const root = parentContext ?? ROOT_CONTEXT
  const records = familyToSpans(tree, { ...rest, semconv: opts.semconv ?? semconvFromEnv() })
  const spans = new Map<string, Span>()
  for (const r of records) {
    const parent = r.parentKey !== undefined ? spans.get(r.parentKey) : undefined
    const links: Link[] = []
    for (const l of r.links ?? []) {
      const s = spans.get(l.key)
      if (s !== undefined) links.push({ context: s.spanContext(), ...(l.attributes !== undefined ? { attributes: l.attributes } : {}) })
    }
    const span = tracer.startSpan(r.name, {
      kind: r.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, startTime: r.startTime, attributes: r.attributes,
      ...(links.length > 0 ? { links } : {}),
    }, parent !== undefined ? trace.setSpan(root, parent) : root)
    spans.set(r.key, span)
    if (r.endTime === undefined) continue
    if (r.status.code === 'error') span.setStatus({ code: SpanStatusCode.ERROR, ...(r.status.message !== undefined ? { message: r.status.message } : {}) })
    span.end(r.endTime)
  }
  return records.length
}
