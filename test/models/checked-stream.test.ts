import { describe, expect, it } from 'vitest'
import type { StreamChunk } from '../../events/index.js'
import { ModelError } from '../../models/errors.js'
import { scriptedModel } from '../../models/scripted.js'
import type { ModelAdapter } from '../../models/types.js'
import { grammarError, rawAdapter, request, runChecked } from './helpers.js'

const T0: StreamChunk = { type: 'block-start', index: 0, blockType: 'text' }
const D0: StreamChunk = { type: 'text-delta', index: 0, text: 'hi' }
const E0: StreamChunk = { type: 'block-end', index: 0 }
const STOP: StreamChunk = { type: 'finish', reason: 'stop' }
const CALL = (index: number, id: string, name?: string): StreamChunk[] => [
  { type: 'block-start', index, blockType: 'tool-call' },
  name === undefined
    ? { type: 'tool-call-delta', index, id, argumentsDelta: '{}' }
    : { type: 'tool-call-delta', index, id, name, argumentsDelta: '{}' },
  { type: 'block-end', index },
]

describe('checkedStream', () => {
  it('yields every chunk in order, then one success end with the assembled message', async () => {
    const chunks: StreamChunk[] = [T0, D0, { type: 'text-delta', index: 0, text: ' there' }, E0,
      { type: 'usage', usage: { inputTokens: 4, outputTokens: 2 } }, STOP]
    const r = await runChecked(rawAdapter(chunks))
    expect(r.chunks).toEqual(chunks)
    expect(r.outcome).toEqual({
      kind: 'success',
      message: { role: 'assistant', content: [{ type: 'text', text: 'hi there' }] },
      usage: { inputTokens: 4, outputTokens: 2 },
      finish: 'stop',
    })
  })

  it('collectOutcome gathers the chunks and the outcome', async () => {
    const { collectOutcome } = await import('../../models/checked-stream.js')
    const r = await collectOutcome(rawAdapter([T0, D0, E0, STOP]), request, new AbortController().signal)
    expect(r.chunks).toEqual([T0, D0, E0, STOP])
    expect(r.outcome).toMatchObject({ kind: 'success', message: { content: [{ type: 'text', text: 'hi' }] } })
    const bad = await collectOutcome(rawAdapter([D0]), request, new AbortController().signal)
    expect(bad).toMatchObject({ chunks: [], outcome: { kind: 'failure', failure: { code: 'STREAM_GRAMMAR' } } })
  })

  it('accepts a bare stream function as the source', async () => {
    const r = await runChecked(async function* () {
      yield T0
      yield D0
      yield E0
      yield STOP
    })
    expect(r.outcome.kind).toBe('success')
  })

  it('yields chunks before later ones are produced (the driver appends each before it is assembled)', async () => {
    const log: string[] = []
    const adapter: ModelAdapter = {
      async *stream() {
        for (const c of [T0, D0, E0, STOP]) {
          log.push(`produce ${c.type}`)
          yield c
        }
      },
    }
    await runChecked(adapter, undefined, undefined, (item) => log.push(item.kind === 'chunk' ? `append ${item.chunk.type}` : 'end'))
    expect(log).toEqual([
      'produce block-start', 'append block-start', 'produce text-delta', 'append text-delta',
      'produce block-end', 'append block-end', 'produce finish', 'append finish', 'end',
    ])
  })

  // Every rule of the grammar (docs/spec/events.md "Stream chunks"), plus schema and tool-call rules:
  // the offending chunk is not yielded, what came before is, and the outcome is STREAM_GRAMMAR.
  const violations: [string, unknown[], number, RegExp][] = [
    ['a delta without an open block', [D0, STOP], 0, /not open/],
    ['a delta of another block type', [T0, { type: 'reasoning-delta', index: 0, text: 'x' }, E0, STOP], 1, /in a text block/],
    ['a tool-call delta in a text block', [T0, { type: 'tool-call-delta', index: 0, id: 'c', argumentsDelta: '' }], 1, /in a text block/],
    ['a delta after its block ended', [T0, E0, D0, STOP], 2, /not open/],
    ['a block started twice', [T0, E0, T0, STOP], 2, /started twice/],
    ['a block-end for a block that never started', [{ type: 'block-end', index: 3 }, STOP], 0, /never started/],
    ['a block ended twice', [T0, D0, E0, E0, STOP], 3, /ended twice/],
    ['a second usage chunk', [{ type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } },
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } }, STOP], 1, /second usage/],
    ['a finish with a block still open', [T0, D0, STOP], 2, /still open/],
    ['a chunk after finish', [T0, D0, E0, STOP, { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 } }], 4, /after finish/],
    ['a second finish', [T0, D0, E0, STOP, STOP], 4, /after finish/],
    ['a negative index', [{ type: 'block-start', index: -1, blockType: 'text' }], 0, /invalid chunk/],
    ['a fractional index', [{ type: 'block-start', index: 0.5, blockType: 'text' }], 0, /invalid chunk/],
    ['an unknown chunk type', [{ type: 'text', index: 0, text: 'x' }], 0, /invalid chunk/],
    ['an unknown member', [{ ...T0, extra: 1 }], 0, /invalid chunk/],
    ['not an object', ['hello'], 0, /invalid chunk/],
    ['an error finish without a failure', [{ type: 'finish', reason: 'error' }], 0, /invalid chunk/],
    ['an unknown finish reason', [{ type: 'finish', reason: 'done' }], 0, /invalid chunk/],
    ['a lone surrogate in a text (not lossless: the log would refuse it)', [T0, { type: 'text-delta', index: 0, text: 'a\ud800' }], 1, /not lossless.*lone surrogate/],
    ['a -0 index', [{ type: 'block-start', index: -0, blockType: 'text' }], 0, /not lossless/],
    ['a tool call without a name', [...CALL(0, 'c1'), { type: 'finish', reason: 'tool-calls' }], 2, /without a name/],
    ['a tool call without an id', [...CALL(0, '', 'f'), { type: 'finish', reason: 'tool-calls' }], 2, /without an id/],
    ['two tool calls with one id', [...CALL(0, 'c1', 'f'), ...CALL(1, 'c1', 'g'), { type: 'finish', reason: 'tool-calls' }], 5, /share the id/],
  ]
  for (const [name, values, at, message] of violations) {
    it(`STREAM_GRAMMAR (L9): ${name}; the offending chunk is not yielded`, async () => {
      let returned = false
      const adapter: ModelAdapter = {
        async *stream() {
          try {
            for (const v of values) yield v as StreamChunk
          } finally {
            returned = true
          }
        },
      }
      const r = await runChecked(adapter)
      expect(r.outcome.kind).toBe('failure')
      if (r.outcome.kind !== 'failure') return
      expect(r.outcome.failure.code).toBe('STREAM_GRAMMAR')
      expect(r.outcome.failure.message).toMatch(message)
      expect(r.chunks).toEqual(values.slice(0, at))
      expect(grammarError(r.chunks, false)).toBeNull()
      await new Promise((resolve) => setImmediate(resolve))
      expect(returned).toBe(true) // the adapter was told to stop
    })
  }

  it('a member set to undefined is dropped, not refused: every yielded chunk is lossless JSON', async () => {
    const r = await runChecked(rawAdapter([
      { type: 'block-start', index: 0, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 0, id: 'c1', name: 'f', argumentsDelta: '{}' },
      { type: 'tool-call-delta', index: 0, id: 'c1', name: undefined, argumentsDelta: '' },
      { type: 'block-end', index: 0 },
      { type: 'usage', usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: undefined } },
      { type: 'finish', reason: 'tool-calls' },
    ]))
    expect(r.outcome.kind).toBe('success')
    expect(Object.keys(r.chunks[2]!)).not.toContain('name')
    expect(Object.keys((r.chunks[4] as { usage: object }).usage)).toEqual(['inputTokens', 'outputTokens'])
    for (const c of r.chunks) expect(JSON.parse(JSON.stringify(c))).toEqual(c)
  })

  it('STREAM_GRAMMAR: a stream that ends without finish', async () => {
    const r = await runChecked(rawAdapter([T0, D0, E0]))
    expect(r.chunks).toEqual([T0, D0, E0])
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'STREAM_GRAMMAR', message: /without a finish/ } })
  })

  it('an empty stream is STREAM_GRAMMAR too', async () => {
    const r = await runChecked(rawAdapter([]))
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'STREAM_GRAMMAR' } })
  })

  describe('an adapter that throws', () => {
    const throwing = (e: unknown, before: StreamChunk[] = []): ModelAdapter => ({
      async *stream() {
        for (const c of before) yield c
        throw e
      },
    })

    it('a ModelError keeps its failure verbatim', async () => {
      const failure = { code: 'RATE_LIMIT', message: 'slow down', status: 429, retryAfterMs: 1500 }
      const r = await runChecked(throwing(new ModelError(failure)))
      expect(r.outcome).toEqual({ kind: 'failure', failure, partial: { message: { role: 'assistant', content: [] }, streamedVisible: false } })
    })

    it('an error with status and retryAfterMs keeps them; the status decides the code', async () => {
      const e = Object.assign(new Error('overloaded'), { status: 503, retryAfterMs: 200 })
      const r = await runChecked(throwing(e))
      expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'SERVER', message: 'overloaded', status: 503, retryAfterMs: 200 } })
    })

    it('a connection error (also in the cause chain) is TRANSPORT', async () => {
      const cause = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })
      const r = await runChecked(throwing(new TypeError('fetch failed', { cause })))
      expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'TRANSPORT' } })
    })

    it('an error carrying a known failure code keeps it; a TimeoutError is TIMEOUT', async () => {
      const r1 = await runChecked(throwing(Object.assign(new Error('too big'), { code: 'CONTEXT_WINDOW_EXCEEDED' })))
      expect(r1.outcome).toMatchObject({ failure: { code: 'CONTEXT_WINDOW_EXCEEDED' } })
      const r2 = await runChecked(throwing(new DOMException('timed out', 'TimeoutError')))
      expect(r2.outcome).toMatchObject({ failure: { code: 'TIMEOUT' } })
    })

    it('anything else is UNKNOWN, with the message', async () => {
      const r = await runChecked(throwing(new Error('weird')))
      expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'UNKNOWN', message: 'weird' } })
      const r2 = await runChecked(throwing({ not: 'an error' }))
      expect(r2.outcome).toMatchObject({ kind: 'failure', failure: { code: 'UNKNOWN', message: '{"not":"an error"}' } })
    })

    it('a stream() that throws synchronously, or returns no iterable, is a failure, not a crash', async () => {
      const r = await runChecked({ stream: () => { throw Object.assign(new Error('no key'), { status: 401 }) } })
      expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'INVALID_CREDENTIAL', status: 401 } })
      const r2 = await runChecked({ stream: () => 42 as never })
      expect(r2.outcome).toMatchObject({ kind: 'failure', failure: { code: 'UNKNOWN' } })
    })

    it('mid-stream: the chunks before are yielded and the partial message is reported', async () => {
      const r = await runChecked(throwing(new ModelError({ code: 'TRANSPORT', message: 'cut' }), [T0, D0]))
      expect(r.chunks).toEqual([T0, D0])
      expect(r.outcome).toEqual({
        kind: 'failure',
        failure: { code: 'TRANSPORT', message: 'cut' },
        partial: { message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }, streamedVisible: true },
      })
    })

    it('after a complete success finish, a throw no longer changes the outcome', async () => {
      const r = await runChecked(throwing(new Error('late'), [T0, D0, E0, STOP]))
      expect(r.outcome.kind).toBe('success')
    })
  })

  describe('in-band failures and empty responses', () => {
    it('an error finish is yielded and ends in its failure, with the usage', async () => {
      const failure = { code: 'SERVER', message: 'overloaded', status: 529 }
      const chunks: StreamChunk[] = [{ type: 'usage', usage: { inputTokens: 9, outputTokens: 0 } }, { type: 'finish', reason: 'error', failure }]
      const r = await runChecked(rawAdapter(chunks))
      expect(r.chunks).toEqual(chunks)
      expect(r.outcome).toMatchObject({ kind: 'failure', failure, usage: { inputTokens: 9, outputTokens: 0 } })
    })

    it('an aborted finish ends in its failure', async () => {
      const r = await runChecked(rawAdapter([{ type: 'finish', reason: 'aborted', failure: { code: 'ABORTED', message: 'provider gave up' } }]))
      expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'ABORTED', message: 'provider gave up' } })
    })

    it('EMPTY_RESPONSE: a stop with no blocks, with only empty text, or an empty tool-calls finish', async () => {
      for (const chunks of [[STOP], [T0, { type: 'text-delta', index: 0, text: '' }, E0, STOP], [{ type: 'finish', reason: 'tool-calls' }]] as StreamChunk[][]) {
        const r = await runChecked(rawAdapter(chunks))
        expect(r.chunks).toEqual(chunks)
        expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'EMPTY_RESPONSE' } })
      }
    })

    it('a reasoning-only stop is content, not an empty response', async () => {
      const r = await runChecked(rawAdapter([{ type: 'block-start', index: 0, blockType: 'reasoning' },
        { type: 'reasoning-delta', index: 0, text: 'thinking' }, { type: 'block-end', index: 0 }, STOP]))
      expect(r.outcome.kind).toBe('success')
    })

    it('max-tokens with no content is a success with an empty message; its tool calls are dropped', async () => {
      const r = await runChecked(rawAdapter([{ type: 'finish', reason: 'max-tokens' }]))
      expect(r.outcome).toEqual({ kind: 'success', message: { role: 'assistant', content: [] }, finish: 'max-tokens' })
      const r2 = await runChecked(rawAdapter([...CALL(0, 'c1', 'f'), { type: 'finish', reason: 'max-tokens' }]))
      expect(r2.outcome).toEqual({ kind: 'success', message: { role: 'assistant', content: [] }, finish: 'max-tokens' })
    })
  })

  describe('abort', () => {
    it('a signal aborted before the start: ABORTED, and the model is never called', async () => {
      const model = scriptedModel([{ text: 'never' }])
      const ac = new AbortController()
      ac.abort(new Error('user cancel'))
      const r = await runChecked(model, ac.signal)
      expect(r.chunks).toEqual([])
      expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'ABORTED', message: 'aborted: user cancel' } })
      expect(model.requests).toHaveLength(0)
    })

    it('mid-stream, with an adapter that hangs and ignores the signal: ends at once, with the partial message', async () => {
      let returned = false
      const adapter: ModelAdapter = {
        async *stream() {
          try {
            yield T0
            yield D0
            await new Promise(() => {}) // never settles, never looks at the signal
          } finally {
            returned = true
          }
        },
      }
      const ac = new AbortController()
      const seen: StreamChunk[] = []
      const done = runChecked(adapter, ac.signal, request, (item) => {
        if (item.kind === 'chunk') {
          seen.push(item.chunk)
          if (seen.length === 2) setTimeout(() => ac.abort(), 5)
        }
      })
      const r = await done
      expect(r.chunks).toEqual([T0, D0])
      expect(r.outcome).toEqual({
        kind: 'failure',
        failure: { code: 'ABORTED', message: expect.stringMatching(/^aborted/) },
        partial: { message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }, streamedVisible: true },
      })
      expect(returned).toBe(false) // a stuck generator cannot run its finally; we did not wait for it
    })

    it('an abort while the driver appends a chunk: no further chunk is yielded', async () => {
      const ac = new AbortController()
      const r = await runChecked(rawAdapter([T0, D0, { type: 'text-delta', index: 0, text: 'more' }, E0, STOP]), ac.signal, request, (item) => {
        if (item.kind === 'chunk' && item.chunk.type === 'text-delta') ac.abort()
      })
      expect(r.chunks).toEqual([T0, D0])
      expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'ABORTED' }, partial: { streamedVisible: true } })
    })

    it('an adapter that throws because of the abort reports ABORTED, whatever it throws', async () => {
      const ac = new AbortController()
      const adapter: ModelAdapter = {
        async *stream(_req, signal) {
          yield T0
          ac.abort()
          throw Object.assign(new Error('socket closed'), { code: 'ECONNRESET', signal })
        },
      }
      const r = await runChecked(adapter, ac.signal)
      expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'ABORTED' }, partial: { streamedVisible: false } })
    })

    it('a consumer that stops early makes the adapter stop', async () => {
      let returned = false
      const adapter: ModelAdapter = {
        async *stream() {
          try {
            yield T0
            yield D0
            yield E0
            yield STOP
          } finally {
            returned = true
          }
        },
      }
      const { checkedStream } = await import('../../models/checked-stream.js')
      for await (const item of checkedStream(adapter, request, new AbortController().signal)) {
        if (item.kind === 'chunk') break
      }
      await new Promise((resolve) => setImmediate(resolve))
      expect(returned).toBe(true)
    })
  })
})
