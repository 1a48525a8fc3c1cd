/**
 * `turnlog export LOG --format otlp-json`: the session's spans (turnlog/otel's mapping) as one
 * OTLP/JSON `ExportTraceServiceRequest`, ready to POST to a collector's `/v1/traces` or to load
 * into a backend. Pure: no OpenTelemetry package is loaded.
 */
import type { LogEvent } from '../../events/index.js'
import { semconvFromEnv, type SemconvMode } from '../../otel/attributes.js'
import { spansToOtlpJson, toOtlpJson } from '../../otel/otlp-json.js'
import { familyToSpans } from '../../otel/family.js'
import type { ChildLogs } from '../family.js'
import { json } from '../escape.js'

/**
 * The file's text (one JSON document and a newline) and a one-line summary; `agentName` is
 * `gen_ai.agent.name`; `semconv` (`--semconv`) wins over `OTEL_SEMCONV_STABILITY_OPT_IN` (SEMCONV_SWITCH).
 */
export function otlpJsonExport(
  sessionId: string, events: readonly LogEvent[], version: string, agentName?: string, children?: ChildLogs[], semconv?: SemconvMode,
): { text: string; summary: string } {
  const opts = { sessionId, semconv: semconv ?? semconvFromEnv(), scopeVersion: version, ...(agentName !== undefined ? { agentName } : {}) }
  // --children: the family's spans, each child under its spawning call's execute_tool span
  const request = children !== undefined ? spansToOtlpJson(familyToSpans({ sessionId, events, children }, opts), opts) : toOtlpJson(events, opts)
  const spans = (request.resourceSpans[0] as { scopeSpans: { spans: unknown[] }[] }).scopeSpans[0]!.spans.length
  return { text: `${json(request)}\n`, summary: `${spans} span${spans === 1 ? '' : 's'} (OTLP/JSON)` }
}
