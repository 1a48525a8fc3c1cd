/**
 * OpenTelemetry GenAI semantic-convention attribute names used by `turnlog/otel`, and the
 * `OTEL_SEMCONV_STABILITY_OPT_IN` switch (`SEMCONV_SWITCH` says it; README, this subpath's JSDoc
 * and `turnlog export --help` repeat it word for word).
 *
 * turnlog is a new instrumentation, so it follows the current conventions by default (the
 * conventions' transition plan keeps the old names as the default only for instrumentations that
 * emitted them before). `gen_ai/dup` is turnlog's, after the `…/dup` form other convention areas
 * use for a phased migration. Attributes that were added rather than renamed (usage details, time
 * to first chunk, conversation id, tool call id, content) are the same in every mode.
 */

/** The switch in one paragraph: the text README, the JSDoc of `turnlog/otel` and `turnlog export --help` share. */
export const SEMCONV_SWITCH =
  "GenAI attribute names: the current conventions' by default (`gen_ai.provider.name`). " +
  "`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` (the conventions' own opt-in value) selects the same names; " +
  '`gen_ai/dup` in that comma-separated list also emits the v1.36 `gen_ai.system`; no other value changes them. ' +
  'The `semconv` option (`--semconv` of `turnlog export`), when given, wins over the variable: ' +
  '`latest`, `dup` (both names) or `v1.36` (`gen_ai.system` only).'

export const ATTR = {
  operation: 'gen_ai.operation.name',
  systemOld: 'gen_ai.system',
  provider: 'gen_ai.provider.name',
  conversation: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  requestStream: 'gen_ai.request.stream',
  responseId: 'gen_ai.response.id',
  responseModel: 'gen_ai.response.model',
  temperature: 'gen_ai.request.temperature',
  maxTokens: 'gen_ai.request.max_tokens',
  topP: 'gen_ai.request.top_p',
  finishReasons: 'gen_ai.response.finish_reasons',
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheRead: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreation: 'gen_ai.usage.cache_creation.input_tokens',
  reasoning: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  errorType: 'error.type',
  seqStart: 'turnlog.seq.start',
  /** An MCP tool's server and its name there (the logged definition's `source`, docs/spec/lifecycle.md §12). */
  mcpServer: 'turnlog.mcp.server',
  mcpTool: 'turnlog.mcp.tool',
  seqEnd: 'turnlog.seq.end',
  turn: 'turnlog.turn',
  step: 'turnlog.step',
  turnEnd: 'turnlog.turn.end_reason',
  stepOutcome: 'turnlog.step.outcome',
  retryOf: 'turnlog.turn.retry_of',
  /** on a span link: why the span follows from the linked one (`retry_of`) */
  link: 'turnlog.link',
  compactionId: 'turnlog.compaction.id',
} as const

/** `latest` (the current names; `default` is its old alias), `dup` (old and new names), `v1.36` (old only). See `SEMCONV_SWITCH`. */
export type SemconvMode = 'latest' | 'dup' | 'v1.36' | 'default'

/** Attributes of OTLP type double (`doubleValue` in OTLP/JSON even when the value is whole). */
export const DOUBLE_ATTRIBUTES: ReadonlySet<string> = new Set([
  'gen_ai.request.temperature', 'gen_ai.request.top_p', 'gen_ai.request.top_k', 'gen_ai.request.frequency_penalty',
  'gen_ai.request.presence_penalty', 'gen_ai.response.time_to_first_chunk',
])

/**
 * The mode `OTEL_SEMCONV_STABILITY_OPT_IN` asks for: `dup` when its comma-separated list has
 * `gen_ai/dup`, else `latest` (`gen_ai_latest_experimental`, another area's value, or nothing).
 * Every span entry point uses it when no `semconv` option is given. Where there is no `process`
 * (a browser bundle), the default.
 */
export function semconvFromEnv(env: Record<string, string | undefined> | undefined = typeof process === 'undefined' ? undefined : process.env): SemconvMode {
  const v = env?.OTEL_SEMCONV_STABILITY_OPT_IN ?? ''
  return v.split(',').map((s) => s.trim()).includes('gen_ai/dup') ? 'dup' : 'latest'
}
