/**
 * `turnlog/otel`: spans from the log, following the OpenTelemetry GenAI semantic conventions
 * (docs/spec/api.md "Observability"). `@opentelemetry/api` is an optional peer dependency of this subpath;
 * `turnlog` itself never loads it.
 *
 * - `otelPlugin(tracer, opts?)`: live spans from an agent (`plugins: [otelPlugin(tracer)]`).
 * - `exportSpans(log, tracer, opts?)`: the same spans from a recorded log.
 * - `logToSpans(events, opts)`: the pure mapping (plain records, no OpenTelemetry types).
 * - `toOtlpJson(events, opts)`: an OTLP/JSON export request (what `turnlog export --format
 *   otlp-json` writes).
 * Content is off by default (`includeContent: true`).
 *
 * GenAI attribute names: the current conventions' by default (`gen_ai.provider.name`).
 * `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` (the conventions' own opt-in value)
 * selects the same names; `gen_ai/dup` in that comma-separated list also emits the v1.36
 * `gen_ai.system`; no other value changes them. The `semconv` option (`--semconv` of `turnlog
 * export`), when given, wins over the variable: `latest`, `dup` (both names) or `v1.36`
 * (`gen_ai.system` only).
 */
export { exportSpans, otelPlugin, type OtelOptions } from './tracer.js'
export { logToSpans, type SpanRecord } from './log-to-spans.js'
export {
  SpanFold, usageAttributes,
  type SpanFoldOptions, type SpanAction, type SpanStart, type SpanEnd, type Attributes, type AttrValue,
} from './fold.js'
export { toOtlpJson, spansToOtlpJson } from './otlp-json.js'
export { familyToSpans, type SessionTree } from './family.js'
export { exportFamilySpans } from './family-tracer.js'
export { APPROVAL_ATTR } from './approval-spans.js'
export { renderSpanTree } from './tree.js'
export { ATTR, SEMCONV_SWITCH, semconvFromEnv, type SemconvMode } from './attributes.js'
