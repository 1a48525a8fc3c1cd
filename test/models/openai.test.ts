import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ModelError } from '../../models/errors.js'
import { openaiCompatibleModel, parseRetryAfter, toUsage } from '../../models/openai.js'
import type { ModelRequest } from '../../models/types.js'
import { collect, grammarError, request, runChecked } from './helpers.js'

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void
let server: Server
let baseURL: string
let handler: Handler
let received: { method?: string; url?: string; headers: IncomingMessage['headers']; body: unknown }[] = []
let closedEarly = 0

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (d: string) => (body += d))
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body: body === '' ? undefined : JSON.parse(body) })
      res.on('close', () => {
        if (!res.writableEnded) closedEarly++
      })
      handler(req, res, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})
beforeEach(() => {
  received = []
  closedEarly = 0
})

const sse = (payloads: readonly unknown[], done = true): string =>
  payloads.map((p) => `data: ${JSON.stringify(p)}\n\n`).join('') + (done ? 'data: [DONE]\n\n' : '')

function serveSSE(text: string, opts: { bytewise?: boolean } = {}): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    if (!opts.bytewise) {
      res.end(text)
      return
    }
    const bytes = Buffer.from(text, 'utf8')
    let i = 0
    const step = () => {
      if (i >= bytes.length) return void res.end()
      res.write(bytes.subarray(i, i + 1))
      i++
      setImmediate(step)
    }
    step()
  }
}

function serveError(status: number, body: unknown, headers: Record<string, string> = {}): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(typeof body === 'string' ? body : JSON.stringify(body))
  }
}

const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: d, finish_reason: finish }],
})

const model = () => openaiCompatibleModel({ baseURL, apiKey: 'sk-test' })

describe('openaiCompatibleModel', () => {
  it('text: streams one text block, usage in disjoint buckets, finish stop; sends the chat-completions request', async () => {
    handler = serveSSE(sse([
      delta({ role: 'assistant', content: '' }),
      delta({ content: 'Hel' }),
      delta({ content: 'lo' }),
      delta({}, 'stop'),
      { id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 30 } } },
    ]))
    const req: ModelRequest = {
      system: 'Be brief.',
      messages: [
        { id: 'u1', role: 'user', content: [{ type: 'text', text: 'weather?' }], source: { kind: 'user' } },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'need a tool' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool-call', id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
          ],
        },
        { role: 'tool', callId: 'call_1', content: [{ type: 'text', text: '21C' }] },
        {
          id: 'u2', role: 'user', source: { kind: 'user' },
          content: [{ type: 'text', text: 'and this?' }, { type: 'image', mediaType: 'image/png', data: 'AAAA' }],
        },
      ],
      tools: [{ name: 'weather', description: 'Weather', parameters: { type: 'object' } }],
      config: { model: 'gpt-test', temperature: 0.2, maxTokens: 50, topP: 0.9, internalThing: true },
    }
    const r = await runChecked(model(), undefined, req)
    expect(r.chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hel' },
      { type: 'text-delta', index: 0, text: 'lo' },
      { type: 'block-end', index: 0 },
      { type: 'usage', usage: { inputTokens: 70, outputTokens: 7, cacheReadTokens: 30 } },
      { type: 'finish', reason: 'stop' },
    ])
    expect(r.outcome).toEqual({
      kind: 'success',
      message: { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] },
      usage: { inputTokens: 70, outputTokens: 7, cacheReadTokens: 30 },
      finish: 'stop',
    })
    expect(received).toHaveLength(1)
    const sent = received[0]!
    expect(sent.method).toBe('POST')
    expect(sent.url).toBe('/v1/chat/completions')
    expect(sent.headers.authorization).toBe('Bearer sk-test')
    expect(sent.body).toEqual({
      model: 'gpt-test',
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 50,
      tools: [{ type: 'function', function: { name: 'weather', description: 'Weather', parameters: { type: 'object' } } }],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '21C' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'and this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
    })
  })

  it('tool calls split over deltas (id and name only on the first), with text before them', async () => {
    handler = serveSSE(sse([
      delta({ content: 'Let me check.' }),
      delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      delta({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } }] }),
      delta({}, 'tool_calls'),
    ]))
    const r = await runChecked(model())
    expect(grammarError(r.chunks)).toBeNull()
    expect(r.chunks.filter((c) => c.type === 'tool-call-delta')).toEqual([
      { type: 'tool-call-delta', index: 1, id: 'call_a', name: 'weather', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 1, id: 'call_a', argumentsDelta: '{"city":' },
      { type: 'tool-call-delta', index: 1, id: 'call_a', argumentsDelta: '"Paris"}' },
      { type: 'tool-call-delta', index: 2, id: 'call_b', name: 'time', argumentsDelta: '{}' },
    ])
    expect(r.outcome).toEqual({
      kind: 'success',
      finish: 'tool-calls',
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool-call', id: 'call_a', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'tool-call', id: 'call_b', name: 'time', arguments: '{}' },
        ],
      },
    })
  })

  it('reasoning_content then content become two blocks; a "stop" with tool calls is reported as tool-calls', async () => {
    handler = serveSSE(sse([
      delta({ reasoning_content: 'Think' }),
      delta({ reasoning_content: 'ing.' }),
      delta({ content: 'Answer' }),
      delta({ tool_calls: [{ index: 0, id: 'c9', function: { name: 'f', arguments: '{}' } }] }, 'stop'),
      { choices: [], usage: { prompt_tokens: 10, completion_tokens: 20, completion_tokens_details: { reasoning_tokens: 15 } } },
    ]))
    const r = await runChecked(model())
    expect(r.chunks.slice(0, 6)).toEqual([
      { type: 'block-start', index: 0, blockType: 'reasoning' },
      { type: 'reasoning-delta', index: 0, text: 'Think' },
      { type: 'reasoning-delta', index: 0, text: 'ing.' },
      { type: 'block-end', index: 0 },
      { type: 'block-start', index: 1, blockType: 'text' },
      { type: 'text-delta', index: 1, text: 'Answer' },
    ])
    expect(r.outcome).toMatchObject({
      kind: 'success',
      finish: 'tool-calls',
      usage: { inputTokens: 10, outputTokens: 5, reasoningTokens: 15 },
      message: { content: [{ type: 'reasoning', text: 'Thinking.' }, { type: 'text', text: 'Answer' }, { type: 'tool-call', id: 'c9' }] },
    })
  })

  it('survives SSE split at every byte, including inside multi-byte UTF-8 characters', async () => {
    handler = serveSSE(sse([delta({ content: 'héllo 😀 ' }), delta({ content: 'wörld' }, 'stop')]), { bytewise: true })
    const r = await runChecked(model())
    expect(r.outcome).toMatchObject({ kind: 'success', message: { content: [{ type: 'text', text: 'héllo 😀 wörld' }] } })
  })

  it('finish_reason length → max-tokens, truncated tool calls dropped from the message', async () => {
    handler = serveSSE(sse([
      delta({ content: 'partial' }),
      delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: '{"a":' } }] }, 'length'),
    ]))
    const r = await runChecked(model())
    expect(r.chunks.at(-1)).toEqual({ type: 'finish', reason: 'max-tokens' })
    expect(r.outcome).toEqual({ kind: 'success', finish: 'max-tokens', message: { role: 'assistant', content: [{ type: 'text', text: 'partial' }] } })
  })

  it('content_filter → an in-band error finish', async () => {
    handler = serveSSE(sse([delta({ content: 'x' }, 'content_filter')]))
    const r = await runChecked(model())
    expect(r.chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', failure: { code: 'CONTENT_FILTER' } })
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'CONTENT_FILTER' } })
  })

  it('429 with Retry-After → RATE_LIMIT with status and retryAfterMs', async () => {
    handler = serveError(429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '7' })
    const r = await runChecked(model())
    expect(r.chunks).toEqual([])
    expect(r.outcome).toMatchObject({
      kind: 'failure',
      failure: { code: 'RATE_LIMIT', status: 429, retryAfterMs: 7000, message: 'HTTP 429: Rate limit reached' },
    })
    // the adapter itself throws a ModelError
    await expect(collect(model().stream(request, new AbortController().signal))).rejects.toSatisfy(
      (e) => ModelError.is(e) && e.failure.code === 'RATE_LIMIT',
    )
  })

  it('429 insufficient_quota → QUOTA; retry-after-ms wins over Retry-After', async () => {
    handler = serveError(429, { error: { message: 'You exceeded your quota', code: 'insufficient_quota' } }, { 'retry-after-ms': '250', 'retry-after': '9' })
    const r = await runChecked(model())
    expect(r.outcome).toMatchObject({ failure: { code: 'QUOTA', status: 429, retryAfterMs: 250 } })
  })

  it('500 → SERVER with status; a plain-text body is the message', async () => {
    handler = serveError(500, 'upstream exploded')
    const r = await runChecked(model())
    expect(r.outcome).toEqual({
      kind: 'failure',
      failure: { code: 'SERVER', status: 500, message: 'HTTP 500: upstream exploded' },
      partial: { message: { role: 'assistant', content: [] }, streamedVisible: false },
    })
  })

  it('401 and 403 → INVALID_CREDENTIAL', async () => {
    for (const status of [401, 403]) {
      handler = serveError(status, { error: { message: 'Incorrect API key provided' } })
      const r = await runChecked(model())
      expect(r.outcome).toMatchObject({ failure: { code: 'INVALID_CREDENTIAL', status } })
    }
  })

  it('400 with a context-length error → CONTEXT_WINDOW_EXCEEDED; another 400 → UNKNOWN', async () => {
    handler = serveError(400, {
      error: {
        message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
        type: 'invalid_request_error', code: 'context_length_exceeded',
      },
    })
    const r = await runChecked(model())
    expect(r.outcome).toMatchObject({ failure: { code: 'CONTEXT_WINDOW_EXCEEDED', status: 400 } })

    handler = serveError(400, { error: { message: 'prompt is too long: 210000 tokens > 200000 maximum' } })
    expect((await runChecked(model())).outcome).toMatchObject({ failure: { code: 'CONTEXT_WINDOW_EXCEEDED' } })

    handler = serveError(400, { error: { message: 'Invalid value for temperature' } })
    expect((await runChecked(model())).outcome).toMatchObject({ failure: { code: 'UNKNOWN', status: 400 } })
  })

  it('a connection broken mid-stream → TRANSPORT; what streamed is yielded and grammatical', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(sse([delta({ content: 'Hello, ' }), delta({ content: 'wor' })], false))
      setTimeout(() => res.socket?.destroy(), 20)
    }
    const r = await runChecked(model())
    expect(r.chunks).toEqual([
      { type: 'block-start', index: 0, blockType: 'text' },
      { type: 'text-delta', index: 0, text: 'Hello, ' },
      { type: 'text-delta', index: 0, text: 'wor' },
    ])
    expect(grammarError(r.chunks, false)).toBeNull()
    expect(r.outcome).toMatchObject({
      kind: 'failure',
      failure: { code: 'TRANSPORT' },
      partial: { message: { content: [{ type: 'text', text: 'Hello, wor' }] }, streamedVisible: true },
    })
  })

  it('a body that ends cleanly before any finish → TRANSPORT (not a success)', async () => {
    handler = serveSSE(sse([delta({ content: 'Hi' })], false))
    const r = await runChecked(model())
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'TRANSPORT', message: /before the response finished/ } })
  })

  it('a refused connection → TRANSPORT', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const r = await runChecked(openaiCompatibleModel({ baseURL: `http://127.0.0.1:${port}/v1` }))
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'TRANSPORT' } })
  })

  it('an error payload inside the stream → SERVER', async () => {
    handler = serveSSE(`${sse([delta({ content: 'a' })], false)}data: {"error":{"message":"overloaded"}}\n\n`)
    const r = await runChecked(model())
    expect(r.outcome).toMatchObject({ kind: 'failure', failure: { code: 'SERVER', message: 'overloaded' } })
  })

  it('abort while the server stalls: ABORTED at once, and the connection is closed', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(sse([delta({ content: 'thinking...' })], false))
      // then nothing: the server stalls
    }
    const ac = new AbortController()
    const r = await runChecked(model(), ac.signal, request, (item) => {
      if (item.kind === 'chunk' && item.chunk.type === 'text-delta') setTimeout(() => ac.abort(), 10)
    })
    expect(r.outcome).toMatchObject({
      kind: 'failure',
      failure: { code: 'ABORTED' },
      partial: { message: { content: [{ type: 'text', text: 'thinking...' }] }, streamedVisible: true },
    })
    for (let i = 0; i < 100 && closedEarly === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(closedEarly).toBe(1)
  })

  it('a tool call whose first delta has no id gets call_<block index>', async () => {
    handler = serveSSE(sse([delta({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }, 'tool_calls')]))
    const r = await runChecked(model())
    expect(r.outcome).toMatchObject({ message: { content: [{ type: 'tool-call', id: 'call_0', name: 'f' }] } })
  })
})

describe('openai helpers', () => {
  it('toUsage: disjoint buckets, DeepSeek cache hits too, nothing for an empty usage', () => {
    expect(toUsage({ prompt_tokens: 50, completion_tokens: 5, prompt_cache_hit_tokens: 20 })).toEqual({
      inputTokens: 30, outputTokens: 5, cacheReadTokens: 20,
    })
    expect(toUsage({ prompt_tokens: 10, completion_tokens: 2 })).toEqual({ inputTokens: 10, outputTokens: 2 })
    expect(toUsage({})).toBeUndefined()
  })

  it('parseRetryAfter: seconds, an HTTP date, ms, garbage', () => {
    const h = (o: Record<string, string>) => new Headers(o)
    expect(parseRetryAfter(h({ 'retry-after': '1.5' }))).toBe(1500)
    const now = Date.parse('Sat, 29 Nov 2025 12:00:00 GMT')
    expect(parseRetryAfter(h({ 'retry-after': 'Sat, 29 Nov 2025 12:00:30 GMT' }), () => now)).toBe(30_000)
    expect(parseRetryAfter(h({ 'retry-after-ms': '40' }))).toBe(40)
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }))).toBeUndefined()
    expect(parseRetryAfter(h({}))).toBeUndefined()
  })
})
