/**
 * Issue 38 item 29: one rule for an Anthropic refusal and for reasoning tokens, whatever the
 * specification version of the provider. The same recorded streams go through `@ai-sdk/anthropic`
 * 2 (specification v2, AI SDK 5), 3 (v3, AI SDK 6) and 4 (v4, AI SDK 7):
 *
 * - a refusal (`stop_reason: refusal` with `stop_details`) is the model's answer, finish `refusal`
 *   with the provider's explanation. v2 reports only `content-filter` (no raw reason); its finish
 *   part carries the details in `providerMetadata.anthropic.stopDetails`.
 * - thinking tokens are reasoning, not visible output: v2 reports no `reasoningTokens`, but its
 *   finish part's `providerMetadata.anthropic.usage` is the wire usage, with
 *   `output_tokens_details.thinking_tokens`.
 */
import { createAnthropic as createAnthropic3 } from '@ai-sdk/anthropic'
import { createAnthropic as createAnthropic2 } from 'ai-sdk-anthropic2'
import { createAnthropic as createAnthropic4 } from 'ai-sdk-anthropic4'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fromAiSdk, type AiSdkLanguageModel } from '../../models/ai-sdk/index.js'
import { startFixtureServer, type FixtureServer } from './fixture-server.js'
import { grammarError, runChecked } from './helpers.js'

let server: FixtureServer
beforeAll(async () => {
  server = await startFixtureServer()
})
afterAll(async () => {
  await server.close()
})

const EXPLANATION = "This request triggered restrictions on violative cyber content and was blocked under Anthropic's Usage Policy."

const PROVIDERS: Array<[string, (baseURL: string) => AiSdkLanguageModel]> = [
  ['v2 (@ai-sdk/anthropic 2)', (baseURL) => createAnthropic2({ baseURL, apiKey: 'k' })('claude-sonnet-4-5') as unknown as AiSdkLanguageModel],
  ['v3 (@ai-sdk/anthropic 3)', (baseURL) => createAnthropic3({ baseURL, apiKey: 'k' })('claude-sonnet-4-5')],
  ['v4 (@ai-sdk/anthropic 4)', (baseURL) => createAnthropic4({ baseURL, apiKey: 'k' })('claude-sonnet-4-5') as unknown as AiSdkLanguageModel],
]

describe('issue 38 item 29: an Anthropic refusal and thinking tokens, one rule for v2, v3 and v4', () => {
  it.each(PROVIDERS)('L9 R3 %s: the recorded refusal is an answer, finish refusal with the explanation', async (_name, make) => {
    const model = make(server.url('vercel-ai/anthropic--anthropic-refusal.chunks.txt'))
    const { chunks, outcome } = await runChecked(fromAiSdk(model))
    expect(grammarError(chunks)).toBeNull()
    if (outcome.kind !== 'success') throw new Error(`${outcome.failure.code}: ${outcome.failure.message}`)
    expect(outcome.finish).toBe('refusal')
    expect(outcome.explanation).toBe(EXPLANATION)
    // no text: v4 adds only its `custom` anthropic.message_start block (kept for the provider)
    expect(outcome.message.content.filter((b) => b.type !== 'custom')).toEqual([])
    expect(outcome.usage).toMatchObject({ inputTokens: 18, outputTokens: 5 })
  })

  it.each(PROVIDERS)('L9 %s: thinking tokens (output_tokens_details.thinking_tokens) are reasoning, not output', async (_name, make) => {
    const model = make(server.url('turnlog/anthropic--opus-5-reasoning-high.chunks.txt'))
    const { outcome } = await runChecked(fromAiSdk(model))
    if (outcome.kind !== 'success') throw new Error(`${outcome.failure.code}: ${outcome.failure.message}`)
    expect(outcome.finish).toBe('stop')
    // the wire: output_tokens 1699 of which thinking_tokens 139
    expect(outcome.usage).toEqual({ inputTokens: 51, outputTokens: 1699 - 139, reasoningTokens: 139 })
  })
})
