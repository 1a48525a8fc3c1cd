/**
 * The driver reproduces the reference log (examples/weather.jsonl) event for event,
 * `time` included: one followup, a tool call, a final answer.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import type { StreamChunk } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import { verify } from '../../replay/verify.js'
import { guardAgentErrors } from './error-guard.js'
import { counterIds, fakeClock } from './helpers.js'

const examplePath = fileURLToPath(new URL('../../examples/weather.jsonl', import.meta.url))

function expectedEvents() {
  return readFileSync(examplePath, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l))
}

function weatherAgent() {
  const step1: StreamChunk[] = [
    { type: 'block-start', index: 0, blockType: 'tool-call' },
    { type: 'tool-call-delta', index: 0, id: 'call_1', name: 'weather', argumentsDelta: '{"city":' },
    { type: 'tool-call-delta', index: 0, id: 'call_1', argumentsDelta: '"Paris"}' },
    { type: 'block-end', index: 0 },
    { type: 'usage', usage: { inputTokens: 42, outputTokens: 9 } },
    { type: 'finish', reason: 'tool-calls' },
  ]
  const step2: StreamChunk[] = [
    { type: 'block-start', index: 0, blockType: 'text' },
    { type: 'text-delta', index: 0, text: 'It is 21 °C ' },
    { type: 'text-delta', index: 0, text: 'in Paris.' },
    { type: 'block-end', index: 0 },
    { type: 'usage', usage: { inputTokens: 71, outputTokens: 7, cacheReadTokens: 40 } },
    { type: 'finish', reason: 'stop' },
  ]
  const weather = defineTool({
    name: 'weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string() }),
    isConcurrencySafe: () => true,
    execute: async ({ city }) => ({ city, tempC: 21 }),
  })
  const model = scriptedModel([step1, step2], { info: { name: 'scripted' } })
  const agent = createAgent({
    model,
    tools: [weather],
    system: 'You are a helpful assistant.',
    sessionId: 'example-weather',
    clock: fakeClock(1764450000000),
    ids: counterIds('m'),
    checkRequests: 'full',
  })
  guardAgentErrors(agent)
  return { agent, model }
}

describe('the reference session', () => {
  it('L1–L13, R3: reproduces example.jsonl exactly, time included', async () => {
    const { agent, model } = weatherAgent()
    agent.followup('What is the weather in Paris?')
    await agent.whenIdle()
    expect(JSON.parse(JSON.stringify(agent.events))).toEqual(expectedEvents())
    expect(verify(agent.events).violations).toEqual([])
    // R3: the model saw exactly the logged history at each request.
    expect(model.requests.map((r) => r.messages.length)).toEqual([1, 3])
    expect(model.requests[1]!.messages).toEqual(agent.history().slice(0, 3))
    expect(agent.status).toBe('idle')
  })
})
