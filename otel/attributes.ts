/**
 * OpenTelemetry GenAI semantic-convention attribute names used by `turnlog/otel`, and the
 * `OTEL_SEMCONV_STABILITY_OPT_IN` switch.
 *
 * The conventions are in Development status. Following their transition plan, the default output
 * keeps the v1.36-era provider attribute `gen_ai.system`; with `gen_ai_latest_experimental` in
 * `OTEL_SEMCONV_STABILITY_OPT_IN` (or `semconv: 'latest'`) the renamed `gen_ai.provider.name` is
 * emitted instead (never both). Attributes that were added rather than renamed (usage details,
 * time to first chunk, conversation id, tool call id, content attributes) are the same in both.
 */

export const ATTR = {
  operation: 'gen_ai.operation.name',
  systemOld: 'gen_ai.system',
  provider: 'gen_ai.provider.name',
  conversation: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
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
  seqEnd: 'turnlog.seq.end',
  turn: 'turnlog.turn',
  step: 'turnlog.step',
  turnEnd: 'turnlog.turn.end_reason',
  stepOutcome: 'turnlog.step.outcome',
  retryOf: 'turnlog.turn.retry_of',
} as const

export type SemconvMode = 'default' | 'latest'

/** `latest` when `OTEL_SEMCONV_STABILITY_OPT_IN` lists `gen_ai_latest_experimental`. */
export function semconvFromEnv(env: Record<string, string | undefined> = process.env): SemconvMode {
  const v = env.OTEL_SEMCONV_STABILITY_OPT_IN ?? ''
  return v.split(',').map((s) => s.trim()).includes('gen_ai_latest_experimental') ? 'latest' : 'default'
}
