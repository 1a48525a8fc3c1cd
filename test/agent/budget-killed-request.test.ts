/**
 * A request cut off mid-stream counts (docs/spec/lifecycle.md §10, L20): its usage is what its chunks reported,
 * and when the provider sent no usage before the cut, an estimate from the request and the chunks
 * seen, logged as the step's `usage` chunk marked `estimated: true`, so the budget, `agent.usage()`
 * and `replay` all count it.
 */
import { describe, expect, it } from 'vitest'
import type { ModelAdapter, ModelRequest } from '../../models/index.js'
import type { LogEvent, StreamChunk } from '../../events/index.js'
import { replay } from '../../replay/index.js'
import { data, makeAgent, valid } from './contain-helpers.js'

/** Streams 400 characters of text, then waits until aborted (or fails with TRANSPORT when `drop`). */
function cutModel(opts: { drop?: boolean; usage?: boolean } = {}): ModelAdapter & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = []
  return {
    requests,
    async *stream(request, signal): AsyncIterable<StreamChunk> {
      requests.push(request)
      yield { type: 'block-start', index: 0, blockType: 'text' }
      yield { type: 'text-delta', index: 0, text: 'x'.repeat(400) }
      if (opts.usage) yield { type: 'usage', usage: { inputTokens: 7, outputTokens: 3 } }
      if (opts.drop) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })
      await new Promise((_, reject) => {
        if (signal.aborted) reject(signal.reason)
        signal.addEventListener('abort', () => reject(signal.reason), { once: true })
      })
    },
  }
}

const usageChunks = (events: readonly LogEvent[]) =>
  data(events, 'assistant/chunk').filter((d) => d.chunk.type === 'usage').map((d) => d.chunk.usage)

describe('a request cut off mid-stream counts (docs/spec/lifecycle.md §10)', () => {
  it('L20: a cancelled request with no usage from the provider logs an estimated usage chunk, and a session budget counts it', async () => {
    const model = cutModel()
    const { agent } = makeAgent(null, { model, budget: { outputTokens: 50, scope: 'session' } })
    agent.followup('go')
    while (data(agent.events, 'assistant/chunk').length < 2) await new Promise((r) => setImmediate(r))
    agent.cancel()
    await agent.whenIdle()
    const [u] = usageChunks(agent.events)
    expect(u).toMatchObject({ estimated: true, outputTokens: 100 }) // 400 characters, 4 a token
    expect(u!.inputTokens).toBeGreaterThan(0)
    expect(replay(agent.events).usage.total.outputTokens).toBe(100)
    expect(agent.usage().outputTokens).toBe(100)
    // the next turn's request is not made: the cut request's estimate spent the budget
    agent.followup('again')
    await agent.whenIdle()
    expect(model.requests).toHaveLength(1)
    expect(data(agent.events, 'turn/end').at(-1)!.reason).toEqual({ kind: 'budget', which: 'outputTokens', scope: 'session', limit: 50, used: 100 })
    valid(agent.events)
  })

  it('L20: a dropped connection mid-stream counts its estimate too; usage the provider did send is kept as sent (not estimated)', async () => {
    const dropped = makeAgent(null, { model: cutModel({ drop: true }), retry: false }).agent
    dropped.followup('go')
    await dropped.whenIdle()
    expect(usageChunks(dropped.events)).toEqual([expect.objectContaining({ estimated: true, outputTokens: 100 })])
    expect(dropped.usage().outputTokens).toBe(100)
    valid(dropped.events)

    const reported = makeAgent(null, { model: cutModel({ usage: true }) }).agent
    reported.followup('go')
    while (usageChunks(reported.events).length === 0) await new Promise((r) => setImmediate(r))
    reported.cancel()
    await reported.whenIdle()
    expect(usageChunks(reported.events)).toEqual([{ inputTokens: 7, outputTokens: 3 }])
    expect(reported.usage().outputTokens).toBe(3)
    valid(reported.events)
  })
})
