import { describe, expect, it } from 'vitest'
import { TurnlogError, type StreamChunk } from '../../events/index.js'
import { MessageAssembler } from '../../models/assembler.js'

function feed(chunks: readonly StreamChunk[]): MessageAssembler {
  const a = new MessageAssembler()
  for (const c of chunks) a.push(c)
  return a
}

const allKinds: StreamChunk[] = [
  { type: 'block-start', index: 0, blockType: 'reasoning' },
  { type: 'reasoning-delta', index: 0, text: 'Think ' },
  { type: 'reasoning-delta', index: 0, text: 'first.' },
  { type: 'block-end', index: 0 },
  { type: 'block-start', index: 1, blockType: 'text' },
  { type: 'text-delta', index: 1, text: 'Checking ' },
  { type: 'text-delta', index: 1, text: 'the weather.' },
  { type: 'block-end', index: 1 },
  { type: 'block-start', index: 2, blockType: 'tool-call' },
  { type: 'tool-call-delta', index: 2, id: 'call_a', name: 'weather', argumentsDelta: '{"city":' },
  { type: 'tool-call-delta', index: 2, id: 'call_a', argumentsDelta: '"Paris"}' },
  { type: 'block-end', index: 2 },
  { type: 'block-start', index: 3, blockType: 'tool-call' },
  { type: 'tool-call-delta', index: 3, id: 'call_b', name: 'time', argumentsDelta: '' },
  { type: 'block-end', index: 3 },
  { type: 'usage', usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2 } },
  { type: 'finish', reason: 'tool-calls' },
]

describe('MessageAssembler', () => {
  it('assembles reasoning, text and tool-call blocks, with usage and finish', () => {
    const a = feed(allKinds)
    expect(a.result()).toEqual({
      message: {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Think first.' },
          { type: 'text', text: 'Checking the weather.' },
          { type: 'tool-call', id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'tool-call', id: 'call_b', name: 'time', arguments: '' },
        ],
      },
      usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2 },
      finish: 'tool-calls',
    })
    expect(a.chunkCount).toBe(allKinds.length)
    expect(a.succeeded).toBe(true)
    expect(a.streamedVisible).toBe(true)
  })

  it('orders blocks by index, not by start order, also with interleaved deltas', () => {
    const a = feed([
      { type: 'block-start', index: 5, blockType: 'text' },
      { type: 'block-start', index: 2, blockType: 'reasoning' },
      { type: 'text-delta', index: 5, text: 'B' },
      { type: 'reasoning-delta', index: 2, text: 'A' },
      { type: 'text-delta', index: 5, text: 'b' },
      { type: 'block-end', index: 2 },
      { type: 'block-end', index: 5 },
      { type: 'finish', reason: 'stop' },
    ])
    expect(a.result().message.content).toEqual([
      { type: 'reasoning', text: 'A' },
      { type: 'text', text: 'Bb' },
    ])
  })

  it('drops empty text and reasoning blocks but keeps a tool call with empty arguments', () => {
    const a = feed([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: '' },
      { type: 'block-end', index: 0 },
      { type: 'block-start', index: 1, blockType: 'reasoning' },
      { type: 'block-end', index: 1 },
      { type: 'block-start', index: 2, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 2, id: 'c', name: 'noop', argumentsDelta: '' },
      { type: 'block-end', index: 2 },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect(a.result().message.content).toEqual([{ type: 'tool-call', id: 'c', name: 'noop', arguments: '' }])
    expect(a.streamedVisible).toBe(false)
  })

  it('takes the first non-empty id and name of a tool call', () => {
    const a = feed([
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id: '', argumentsDelta: '{' },
      { type: 'tool-call-delta', index: 0, id: 'late', name: 'f', argumentsDelta: '}' },
      { type: 'tool-call-delta', index: 0, id: '', name: 'g', argumentsDelta: '' },
      { type: 'block-end', index: 0 },
      { type: 'finish', reason: 'tool-calls' },
    ])
    expect(a.result().message.content).toEqual([{ type: 'tool-call', id: 'late', name: 'f', arguments: '{}' }])
  })

  it('max-tokens: keeps the truncated text and drops every tool call (docs/spec/lifecycle.md §4.5)', () => {
    const a = feed([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'I will call' },
      { type: 'block-end', index: 0 },
      { type: 'block-start', index: 1, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 1, id: 'c1', name: 'weather', argumentsDelta: '{"ci' },
      { type: 'block-end', index: 1 },
      { type: 'finish', reason: 'max-tokens' },
    ])
    const r = a.result()
    expect(r.finish).toBe('max-tokens')
    expect(r.message.content).toEqual([{ type: 'text', text: 'I will call' }])
  })

  it('partial(): on a cancel mid-stream keeps visible text and reasoning (open ones too), drops tool calls', () => {
    const a = feed([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'hmm' },
      { type: 'block-end', index: 0 },
      { type: 'block-start', index: 1, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 1, id: 'c1', name: 'a', argumentsDelta: '{}' },
      { type: 'block-end', index: 1 },
      { type: 'block-start', index: 2, blockType: 'text' },
      { type: 'text-delta', index: 2, text: 'half a sen' },
      { type: 'block-start', index: 3, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 3, id: 'c2', name: 'b', argumentsDelta: '{"x"' },
    ])
    expect(a.partial()).toEqual({
      message: {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm' },
          { type: 'text', text: 'half a sen' },
        ],
      },
      streamedVisible: true,
    })
    expect(() => a.result()).toThrow(/before finish/)
  })

  it('partial(): a stream of only tool-call deltas (or empty text) streamed nothing visible', () => {
    const a = feed([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: '' },
      { type: 'block-start', index: 1, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 1, id: 'c1', name: 'a', argumentsDelta: '{"q": "long' },
    ])
    expect(a.partial()).toEqual({ message: { role: 'assistant', content: [] }, streamedVisible: false })
  })

  it('reports the in-band failure of an error finish, and result() refuses it', () => {
    const failure = { code: 'SERVER', message: 'boom', status: 503 }
    const a = feed([
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 0 } },
      { type: 'finish', reason: 'error', failure },
    ])
    expect(a.failure).toEqual(failure)
    expect(a.succeeded).toBe(false)
    expect(a.usage).toEqual({ inputTokens: 3, outputTokens: 0 })
    let err: unknown
    try {
      a.result()
    } catch (e) {
      err = e
    }
    expect(TurnlogError.is(err, 'INVALID_ARGUMENT')).toBe(true)
  })

  it('throws INVALID_ARGUMENT for a delta of a block that never started', () => {
    const a = new MessageAssembler()
    expect(() => a.push({ type: 'text-delta', index: 0, text: 'x' })).toThrow(/never started/)
  })

  describe('violation(): the tool-call rules the log needs', () => {
    const start = (index: number): StreamChunk => ({ type: 'block-start', index, blockType: 'tool-call' })
    it('a tool call that ends without an id or without a name', () => {
      const noId = feed([start(0), { type: 'tool-call-delta', index: 0, id: '', name: 'f', argumentsDelta: '{}' }])
      expect(noId.violation({ type: 'block-end', index: 0 })).toMatch(/without an id/)
      const noName = feed([start(0), { type: 'tool-call-delta', index: 0, id: 'c', argumentsDelta: '{}' }])
      expect(noName.violation({ type: 'block-end', index: 0 })).toMatch(/without a name/)
      const ok = feed([start(0), { type: 'tool-call-delta', index: 0, id: 'c', name: 'f', argumentsDelta: '' }])
      expect(ok.violation({ type: 'block-end', index: 0 })).toBeNull()
    })
    it('two tool calls with the same id', () => {
      const a = feed([
        start(0),
        { type: 'tool-call-delta', index: 0, id: 'same', name: 'f', argumentsDelta: '' },
        { type: 'block-end', index: 0 },
        start(1),
        { type: 'tool-call-delta', index: 1, id: 'same', name: 'g', argumentsDelta: '' },
      ])
      expect(a.violation({ type: 'block-end', index: 1 })).toMatch(/share the id "same"/)
    })
    it('a tool call whose id changes mid-block', () => {
      const a = feed([start(0), { type: 'tool-call-delta', index: 0, id: 'one', name: 'f', argumentsDelta: '' }])
      expect(a.violation({ type: 'tool-call-delta', index: 0, id: 'two', argumentsDelta: '' })).toMatch(/changed its id/)
      expect(a.violation({ type: 'tool-call-delta', index: 0, id: '', argumentsDelta: '' })).toBeNull()
      expect(a.violation({ type: 'tool-call-delta', index: 0, id: 'one', argumentsDelta: '' })).toBeNull()
    })
  })
})
