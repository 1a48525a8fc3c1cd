import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FAILURE_CODES, StreamChunk, TurnlogError, type Block } from '../../events/index.js'
import { ModelError } from '../../models/errors.js'
import { scriptedModel, type ScriptedShorthand } from '../../models/scripted.js'
import type { ModelRequest } from '../../models/types.js'
import { collect, grammarError, request, runChecked } from './helpers.js'

const never = new AbortController().signal

describe('scriptedModel shorthands', () => {
  it('{ text } streams one text block, then finish stop', async () => {
    const model = scriptedModel([{ text: 'Hello' }])
    expect(await collect(model.stream(request, never))).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hello' },
      { type: 'block-end', index: 0 },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('{ reasoning, text, toolCalls, usage }: blocks in that order, ids call_1… counted over the model life', async () => {
    const model = scriptedModel([
      {
        reasoning: 'r',
        text: 't',
        toolCalls: [{ name: 'weather', args: { city: 'Paris' } }, { name: 'raw', rawArgs: '{not json' }, { name: 'given', args: {}, id: 'mine' }],
        usage: { inputTokens: 5, outputTokens: 3 },
      },
      { toolCalls: [{ name: 'again' }] },
    ])
    const first = await collect(model.stream(request, never))
    expect(first).toEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'r' },
      { type: 'block-end', index: 0 },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, text: 't' },
      { type: 'block-end', index: 1 },
      { type: 'block-start', index: 2, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 2, id: 'call_1', name: 'weather', argumentsDelta: '{"city":"Paris"}' },
      { type: 'block-end', index: 2 },
      { type: 'block-start', index: 3, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 3, id: 'call_2', name: 'raw', argumentsDelta: '{not json' },
      { type: 'block-end', index: 3 },
      { type: 'block-start', index: 4, blockType: 'tool-call' },
      { type: 'tool-call-delta', index: 4, id: 'mine', name: 'given', argumentsDelta: '{}' },
      { type: 'block-end', index: 4 },
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 3 } },
      { type: 'finish', reason: 'tool-calls' },
    ])
    const second = await runChecked(model)
    expect(second.outcome).toMatchObject({
      kind: 'success',
      finish: 'tool-calls',
      message: { content: [{ type: 'tool-call', id: 'call_3', name: 'again', arguments: '{}' }] },
    })
  })

  it('{ text: "" } streams an empty block without deltas (and is an empty response)', async () => {
    const r = await runChecked(scriptedModel([{ text: '' }]))
    expect(r.chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'block-end', index: 0 },
      { type: 'finish', reason: 'stop' },
    ])
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'EMPTY_RESPONSE' } })
  })

  it('chunkSize splits deltas by code point, never inside a surrogate pair', async () => {
    const model = scriptedModel([{ text: '😀a😀', toolCalls: [{ name: 'f', rawArgs: '{"k":1}' }], chunkSize: 2 }])
    const chunks = await collect(model.stream(request, never))
    expect(chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { text: string }).text)).toEqual(['😀a', '😀'])
    expect(chunks.filter((c) => c.type === 'tool-call-delta')).toEqual([
      { type: 'tool-call-delta', index: 1, id: 'call_1', name: 'f', argumentsDelta: '{"' },
      { type: 'tool-call-delta', index: 1, id: 'call_1', argumentsDelta: 'k"' },
      { type: 'tool-call-delta', index: 1, id: 'call_1', argumentsDelta: ':1' },
      { type: 'tool-call-delta', index: 1, id: 'call_1', argumentsDelta: '}' },
    ])
  })

  it('{ maxTokens: true, text, toolCalls }: finish max-tokens; the checked outcome drops the tool calls', async () => {
    const model = scriptedModel([{ maxTokens: true, text: 'cut', toolCalls: [{ name: 'f', rawArgs: '{"a"' }] }])
    const r = await runChecked(model)
    expect(r.chunks.at(-1)).toEqual({ type: 'finish', reason: 'max-tokens' })
    expect(r.outcome).toEqual({ kind: 'success', message: { role: 'assistant', content: [{ type: 'text', text: 'cut' }] }, finish: 'max-tokens' })
  })

  it('{ error }: an in-band error finish carrying the failure', async () => {
    const model = scriptedModel([{ error: { code: 'RATE_LIMIT', status: 429, retryAfterMs: 1000 } }])
    const r = await runChecked(model)
    const failure = { code: 'RATE_LIMIT', message: 'scripted RATE_LIMIT', status: 429, retryAfterMs: 1000 }
    expect(r.chunks).toEqual([{ type: 'finish', reason: 'error', failure }])
    expect(r.outcome).toMatchObject({ kind: 'failure', failure })
  })

  it('{ throw }: the adapter throws a ModelError (or the given Error) before any chunk', async () => {
    const model = scriptedModel([{ throw: { code: 'SERVER', message: 'down', status: 500 } }, { throw: new Error('raw') }])
    await expect(collect(model.stream(request, never))).rejects.toSatisfy((e) => ModelError.is(e) && e.failure.code === 'SERVER')
    const r = await runChecked(model)
    expect(r.chunks).toEqual([])
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'UNKNOWN', message: 'raw' } })
  })

  it('{ text, failAfter: 2, failure }: two chunks, then the stream breaks', async () => {
    const model = scriptedModel([
      { text: 'abc', chunkSize: 1, failAfter: 2, failure: { code: 'TRANSPORT', message: 'reset' } },
      { text: 'x', failAfter: 1 },
    ])
    const r = await runChecked(model)
    expect(r.chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'a' },
    ])
    expect(r.outcome).toMatchObject({
      kind: 'failure',
      failure: { code: 'TRANSPORT', message: 'reset' },
      partial: { message: { content: [{ type: 'text', text: 'a' }] }, streamedVisible: true },
    })
    const r2 = await runChecked(model)
    expect(r2.outcome).toMatchObject({ kind: 'failure', failure: { code: 'TRANSPORT' } })
  })

  it('{ endAfter }: the stream ends quietly without finish (STREAM_GRAMMAR downstream)', async () => {
    const r = await runChecked(scriptedModel([{ text: 'abc', endAfter: 3 }]))
    expect(r.chunks).toHaveLength(3)
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'STREAM_GRAMMAR' } })
  })

  it('a list of chunks is played verbatim, grammatical or not', async () => {
    const bad = [{ type: 'text-delta', index: 0, text: 'orphan' }, { type: 'finish', reason: 'stop' }] as StreamChunk[]
    expect(await collect(scriptedModel([bad]).stream(request, never))).toEqual(bad)
    const r = await runChecked(scriptedModel([{ chunks: bad }]))
    expect(r.outcome).toMatchObject({ failure: { code: 'STREAM_GRAMMAR' } })
  })

  it('a function entry gets the request and its index; a function script never runs out', async () => {
    const seen: [ModelRequest, number][] = []
    const model = scriptedModel([{ text: 'one' }, (req, i) => {
      seen.push([req, i])
      return { text: `two for ${req.config.model}` }
    }])
    await runChecked(model)
    const r = await runChecked(model)
    expect(seen).toEqual([[request, 1]])
    expect(r.outcome).toMatchObject({ message: { content: [{ type: 'text', text: 'two for test-model' }] } })

    const endless = scriptedModel(async (_req, i) => ({ text: `#${i}` }))
    for (let i = 0; i < 3; i++) await runChecked(endless)
    const last = await runChecked(endless)
    expect(last.outcome).toMatchObject({ message: { content: [{ type: 'text', text: '#3' }] } })
    expect(endless.remaining).toBe(Infinity)

    const nested = scriptedModel(() => (_req, i) => ({ text: `nested ${i}` }))
    expect((await runChecked(nested)).outcome).toMatchObject({ message: { content: [{ type: 'text', text: 'nested 0' }] } })
    const loop: () => unknown = () => loop
    expect((await runChecked(scriptedModel(loop as never))).outcome).toMatchObject({ failure: { code: 'UNKNOWN', message: /kept returning functions/ } })
  })

  it('records every request it received, in order, also past the end of the script', async () => {
    const model = scriptedModel([{ text: 'a' }])
    const r1: ModelRequest = { ...request, system: 'one' }
    const r2: ModelRequest = { ...request, system: 'two', purpose: 'compaction' }
    expect(model.remaining).toBe(1)
    await runChecked(model, never, r1)
    expect(model.remaining).toBe(0)
    await runChecked(model, never, r2)
    expect(model.requests).toEqual([r1, r2])
    expect(model.requests[1]).toBe(r2)
    expect(scriptedModel([{ text: 'a' }], { recordRequests: false }).requests).toEqual([])
  })

  it('an exhausted script throws INVALID_ARGUMENT; through the checked stream it is a coded failure', async () => {
    const model = scriptedModel([])
    let err: unknown
    try {
      await collect(model.stream(request, never))
    } catch (e) {
      err = e
    }
    expect(TurnlogError.is(err, 'INVALID_ARGUMENT')).toBe(true)
    expect(String(err)).toMatch(/exhausted: request #1 arrived, the script has 0/)
    const r = await runChecked(model)
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'UNKNOWN', message: /INVALID_ARGUMENT.*exhausted/ } })
  })

  it('refuses a script that is neither a list nor a function', () => {
    expect(() => scriptedModel({} as never)).toThrow(/INVALID_ARGUMENT/)
  })

  it('info: a default name, overridable, with the context window', () => {
    expect(scriptedModel([]).info).toEqual({ name: 'scripted' })
    expect(scriptedModel([], { info: { contextWindow: 1000 } }).info).toEqual({ name: 'scripted', contextWindow: 1000 })
  })
})

describe('scriptedModel timing and abort', () => {
  it('delayMs waits before every chunk through the injected sleep', async () => {
    const waits: number[] = []
    const model = scriptedModel([{ text: 'ab', chunkSize: 1 }, { text: 'c', delayMs: 7 }], {
      delayMs: 3,
      sleep: async (ms) => {
        waits.push(ms)
      },
    })
    await runChecked(model)
    expect(waits).toEqual([3, 3, 3, 3, 3]) // start, a, b, end, finish
    await runChecked(model)
    expect(waits.slice(5)).toEqual([7, 7, 7, 7])
  })

  it('the default sleep is cancelled by the abort: the adapter throws an AbortError at once', async () => {
    const model = scriptedModel([{ text: 'slow', delayMs: 60_000 }])
    const ac = new AbortController()
    const it = model.stream(request, ac.signal)[Symbol.asyncIterator]()
    const next = it.next()
    ac.abort()
    await expect(next).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('stops yielding once aborted, even between chunks', async () => {
    const ac = new AbortController()
    const model = scriptedModel([{ text: 'abcdef', chunkSize: 1 }])
    const got: StreamChunk[] = []
    await expect((async () => {
      for await (const c of model.stream(request, ac.signal)) {
        got.push(c)
        if (got.length === 3) ac.abort()
      }
    })()).rejects.toMatchObject({ name: 'AbortError' })
    expect(got).toHaveLength(3)
  })

  it('beforeChunk lets fc.scheduler release each chunk; an abort at any point leaves a grammatical prefix', async () => {
    const seen = new Set<string>()
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.boolean(), async (s, cancel) => {
        const model = scriptedModel([{ reasoning: 'hm', text: 'abc', toolCalls: [{ name: 'f', args: { x: 1 } }], chunkSize: 1 }], {
          beforeChunk: () => s.schedule(Promise.resolve(), 'chunk'),
        })
        const ac = new AbortController()
        if (cancel) void s.schedule(Promise.resolve(), 'cancel').then(() => ac.abort())
        const released: StreamChunk[] = []
        const run = runChecked(model, ac.signal, request, (item) => {
          if (item.kind === 'chunk') released.push(item.chunk)
        })
        await Promise.resolve()
        expect(released).toEqual([]) // nothing is released before the scheduler says so
        const r = await s.waitFor(run)
        expect(grammarError(r.chunks, false)).toBeNull()
        seen.add(r.outcome.kind === 'success' ? 'success' : `${r.outcome.failure.code}:${r.outcome.partial.streamedVisible}`)
        if (r.outcome.kind === 'success') {
          expect(r.outcome.message.content.map((b) => b.type)).toEqual(['reasoning', 'text', 'tool-call'])
        } else {
          expect(cancel).toBe(true)
          expect(r.outcome.failure.code).toBe('ABORTED')
          const text = r.outcome.partial.message.content.find((b) => b.type === 'text')
          if (text?.type === 'text') expect('abc'.startsWith(text.text)).toBe(true)
          expect(r.outcome.partial.message.content.some((b) => b.type === 'tool-call')).toBe(false)
        }
      }),
      { numRuns: 100 },
    )
    // the scheduler explored both sides: complete responses and cancels before and after visible text
    expect([...seen].sort()).toEqual(['ABORTED:false', 'ABORTED:true', 'success'])
  })
})

// ---------------------------------------------------------------------------------------------
// the property: every shorthand is a grammatical stream

const text = fc.string({ unit: 'grapheme', maxLength: 12 })
const failureSpec = fc.record(
  {
    code: fc.constantFrom(...FAILURE_CODES),
    message: fc.string({ maxLength: 10 }),
    status: fc.integer({ min: 400, max: 599 }),
    retryAfterMs: fc.nat({ max: 10_000 }),
  },
  { requiredKeys: ['code'] },
)
const toolCall = fc.oneof(
  fc.record({ name: fc.string({ minLength: 1, maxLength: 8 }), args: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ name: fc.string({ minLength: 1, maxLength: 8 }), rawArgs: fc.string({ maxLength: 12 }) }),
)
const shorthand: fc.Arbitrary<ScriptedShorthand> = fc.record(
  {
    reasoning: text,
    text,
    toolCalls: fc.array(fc.tuple(toolCall, fc.boolean()), { maxLength: 3 }).map((calls) =>
      calls.map(([c, givenId], i) => (givenId ? { ...c, id: `given_${i}` } : c)),
    ),
    usage: fc.record({ inputTokens: fc.nat(), outputTokens: fc.nat() }),
    maxTokens: fc.boolean(),
    error: failureSpec,
    chunkSize: fc.integer({ min: 1, max: 4 }),
  },
  { requiredKeys: [] },
)

function expectedContent(s: ScriptedShorthand): Block[] {
  const out: Block[] = []
  if (s.reasoning) out.push({ type: 'reasoning', text: s.reasoning })
  if (s.text) out.push({ type: 'text', text: s.text })
  return out
}

describe('scriptedModel: property', () => {
  it('L9: every shorthand response streams valid chunks that obey the grammar and end with finish, and assembles back to what it said', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(shorthand, { minLength: 1, maxLength: 4 }), async (responses) => {
        const model = scriptedModel(responses)
        const ids = new Set<string>()
        for (const s of responses) {
          const r = await runChecked(model)
          for (const c of r.chunks) expect(StreamChunk.safeParse(c).success).toBe(true)
          expect(grammarError(r.chunks)).toBeNull()
          expect(r.chunks.at(-1)?.type).toBe('finish')
          const calls = s.toolCalls ?? []
          if (s.error !== undefined) {
            expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: s.error.code } })
            continue
          }
          const content = expectedContent(s)
          if (s.maxTokens) {
            expect(r.outcome).toEqual({ kind: 'success', message: { role: 'assistant', content }, finish: 'max-tokens', ...(s.usage ? { usage: s.usage } : {}) })
            continue
          }
          if (content.length === 0 && calls.length === 0) {
            expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'EMPTY_RESPONSE' } })
            continue
          }
          expect(r.outcome.kind).toBe('success')
          if (r.outcome.kind !== 'success') continue
          expect(r.outcome.finish).toBe(calls.length > 0 ? 'tool-calls' : 'stop')
          const blocks = r.outcome.message.content
          expect(blocks.filter((b) => b.type !== 'tool-call')).toEqual(content)
          const got = blocks.filter((b) => b.type === 'tool-call')
          expect(got.map((b) => [b.name, b.arguments])).toEqual(
            calls.map((c) => [c.name, 'rawArgs' in c ? c.rawArgs : JSON.stringify(c.args ?? {})]),
          )
          expect(new Set(got.map((b) => b.id)).size).toBe(got.length) // unique in the response
          calls.forEach((c, i) => {
            const id = got[i]!.id
            if (c.id !== undefined) expect(id).toBe(c.id)
            else {
              expect(id).toMatch(/^call_\d+$/)
              expect(ids.has(id)).toBe(false) // generated ids are unique over the model's life
              ids.add(id)
            }
          })
        }
      }),
      { numRuns: 300 },
    )
  })

  it('L9: a stream cut by failAfter or endAfter yields a grammatical prefix and a coded failure', async () => {
    await fc.assert(
      fc.asyncProperty(shorthand, fc.nat({ max: 30 }), fc.boolean(), async (s, n, quiet) => {
        const full = await runChecked(scriptedModel([s]))
        const cut = await runChecked(scriptedModel([quiet ? { ...s, endAfter: n } : { ...s, failAfter: n }]))
        expect(grammarError(cut.chunks, false)).toBeNull()
        expect(cut.chunks).toEqual(full.chunks.slice(0, Math.min(n, full.chunks.length)))
        if (n >= full.chunks.length) expect(cut.outcome).toEqual(quiet ? full.outcome : cut.outcome)
        if (n < full.chunks.length) {
          expect(cut.outcome).toMatchObject({ kind: 'failure', failure: { code: quiet ? 'STREAM_GRAMMAR' : 'TRANSPORT' } })
        }
      }),
      { numRuns: 200 },
    )
  })
})
