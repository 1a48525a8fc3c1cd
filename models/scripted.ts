/**
 * `scriptedModel(responses, opts?)`: a model adapter that plays a script (docs/spec/api.md "Models"). Demos,
 * tests, re-execution and the fuzzers use it.
 *
 * Each response is one of:
 * - a list of chunks, played verbatim (grammatical or not: grammar tests use this);
 * - a shorthand (`ScriptedShorthand`): `{ text }`, `{ reasoning?, text? }`,
 *   `{ toolCalls: [{ name, args, id? } | { name, rawArgs, id? }] }`, `{ error: { code, … } }` (an
 *   in-band `finish` of reason `error`), `{ throw: … }` (the adapter throws), `{ maxTokens: true }`
 *   (finish `max-tokens`; its text and tool calls are the truncated output), `{ usage }`,
 *   `{ failAfter: n, failure? }` (the stream breaks after n chunks: the adapter throws),
 *   `{ endAfter: n }` (the stream just ends after n chunks, without finish);
 * - a function `(request, index) => response` (or a promise of one), called when the request
 *   arrives; `index` is the 0-based number of the request.
 * `responses` itself may be such a function: the script never runs out.
 *
 * A shorthand streams, in this order and with block indexes counting from 0: a reasoning block, a
 * text block, one block per tool call, then `usage`, then `finish` (`max-tokens` if `maxTokens`,
 * else `tool-calls` if there are tool calls, else `stop`; or `error` with the failure). So every
 * shorthand is grammatical. Text and arguments stream in one delta, or in pieces of `chunkSize`
 * code points (never splitting a surrogate pair). A tool call without `id` gets `call_1`,
 * `call_2`, … counted over the model's life, so a re-run of the same script gets the same ids.
 *
 * When the script is exhausted the stream throws `TurnlogError('INVALID_ARGUMENT')` on its first
 * read (the request is still recorded). Chosen over an in-band failure chunk: running out of script
 * is a bug in the test, not a model behaviour, and it must not look like one in the log; through
 * `checkedStream` it still ends the step as a failure (code `UNKNOWN`, message naming the
 * exhaustion), never a crash.
 *
 * Timing: `delayMs` (per response, or a default in the options) waits before every chunk, through
 * the injectable `sleep` (tests pass a fake). `beforeChunk` is awaited before every chunk: with
 * fast-check's scheduler, `beforeChunk: () => s.schedule(Promise.resolve())` lets the scheduler
 * decide when each chunk is released.
 *
 * Abort: the signal is checked before and after every wait; once aborted the stream yields nothing
 * more and throws an `AbortError` (a `DOMException`).
 */
import { TurnlogError, type Failure, type StreamChunk, type Usage } from '../events/index.js'
import { ModelError } from './errors.js'
import type { ModelAdapter, ModelInfo, ModelRequest } from './types.js'

export interface ScriptedFailureSpec {
  code: string
  message?: string
  status?: number
  retryAfterMs?: number
}

export type ScriptedToolCall =
  | { name: string; args?: unknown; id?: string }
  | { name: string; rawArgs: string; id?: string }

export interface ScriptedShorthand {
  reasoning?: string
  text?: string
  toolCalls?: readonly ScriptedToolCall[]
  usage?: Usage
  /** Finish `max-tokens`: the text and tool calls are what was cut off. */
  maxTokens?: boolean
  /** Finish in-band with `{reason: 'error', failure}` after the content. Wins over `maxTokens`. */
  error?: ScriptedFailureSpec
  /** The adapter throws this (a spec becomes a `ModelError`; an Error is thrown as is), before any
   * chunk unless `failAfter` says when. */
  throw?: ScriptedFailureSpec | Error
  /** The stream breaks after this many chunks: the adapter throws `failure` (default TRANSPORT). */
  failAfter?: number
  failure?: ScriptedFailureSpec | Error
  /** The stream ends quietly after this many chunks (no finish: a grammar failure downstream). */
  endAfter?: number
  /** Wait before each chunk of this response (overrides the model's default). */
  delayMs?: number
  /** Split text, reasoning and arguments into deltas of this many code points. */
  chunkSize?: number
}

/** A list of raw chunks, or a list with per-response timing. */
export type ScriptedChunkList = readonly StreamChunk[] | { chunks: readonly unknown[]; delayMs?: number }

export type ScriptedResponse = ScriptedShorthand | ScriptedChunkList
/** May return another function (it is called in turn, with the same arguments). */
export type ScriptedResponseFn = (request: ModelRequest, index: number) => ScriptedEntry | Promise<ScriptedEntry>
export type ScriptedEntry = ScriptedResponse | ScriptedResponseFn

export interface ScriptedModelOptions {
  /** Default wait before every chunk, in ms (0: no wait, no timer). */
  delayMs?: number
  /** Default delta size for shorthands (code points); default: one delta per block. */
  chunkSize?: number
  /** Injectable sleep; the default is a timer that rejects with an AbortError on abort. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  /** Awaited before every chunk is released (e.g. by `fc.scheduler`). */
  beforeChunk?: (at: { request: number; chunk: number; value: unknown }) => Promise<void> | void
  info?: ModelInfo
  /** Record every request in `model.requests` (default true). The request is kept by reference:
   * the driver's requests are frozen. */
  recordRequests?: boolean
}

export interface ScriptedModel extends ModelAdapter {
  readonly info: ModelInfo
  /** Every request received, in order (recorded when `stream` is called). */
  readonly requests: readonly ModelRequest[]
  /** Responses left in a list script (`Infinity` for a function script). */
  readonly remaining: number
}

export function scriptedModel(
  responses: readonly ScriptedEntry[] | ScriptedResponseFn,
  opts: ScriptedModelOptions = {},
): ScriptedModel {
  if (typeof responses !== 'function' && !Array.isArray(responses)) {
    throw new TurnlogError('INVALID_ARGUMENT', 'scriptedModel: responses must be an array or a function')
  }
  const script = typeof responses === 'function' ? undefined : [...(responses as readonly ScriptedEntry[])]
  const scriptFn = typeof responses === 'function' ? responses : undefined
  const requests: ModelRequest[] = []
  const record = opts.recordRequests !== false
  const sleep = opts.sleep ?? defaultSleep
  let received = 0
  let nextCallId = 0
  const newId = () => `call_${++nextCallId}`

  async function* play(request: ModelRequest, index: number, signal: AbortSignal): AsyncGenerator<StreamChunk> {
    let entry: ScriptedEntry | undefined = scriptFn ?? script![index]
    if (entry === undefined) {
      throw new TurnlogError(
        'INVALID_ARGUMENT',
        `scriptedModel: the script is exhausted: request #${index + 1} arrived, the script has ${script!.length} response(s)`,
        { info: { requestIndex: index, scriptLength: script!.length } },
      )
    }
    for (let depth = 0; typeof entry === 'function'; depth++) {
      if (depth === 100) throw new TurnlogError('INVALID_ARGUMENT', 'scriptedModel: a response function kept returning functions')
      entry = await entry(request, index)
    }
    const response: ScriptedResponse = entry
    throwIfAborted(signal)

    const plan = planResponse(response, newId, opts.chunkSize)
    const delayMs = plan.delayMs ?? opts.delayMs ?? 0
    for (let i = 0; i < plan.chunks.length; i++) {
      if (plan.stop !== undefined && i === plan.stop.after) break
      const value = plan.chunks[i]
      if (delayMs > 0) await sleep(delayMs, signal)
      throwIfAborted(signal)
      if (opts.beforeChunk) await opts.beforeChunk({ request: index, chunk: i, value })
      throwIfAborted(signal)
      yield value as StreamChunk
    }
    if (plan.stop?.throw !== undefined) {
      throwIfAborted(signal)
      throw plan.stop.throw
    }
  }

  return {
    info: { name: 'scripted', ...opts.info },
    requests,
    get remaining() {
      return script === undefined ? Infinity : Math.max(0, script.length - received)
    },
    stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamChunk> {
      const index = received++
      if (record) requests.push(request)
      return play(request, index, signal)
    },
  }
}

interface Plan {
  chunks: readonly unknown[]
  delayMs?: number
  /** Cut the stream after `after` chunks; then throw `throw`, or end quietly. */
  stop?: { after: number; throw?: unknown }
}

function planResponse(response: ScriptedResponse, newId: () => string, defaultChunkSize?: number): Plan {
  if (Array.isArray(response)) return { chunks: response }
  if (isChunkList(response)) {
    const plan: Plan = { chunks: response.chunks }
    if (response.delayMs !== undefined) plan.delayMs = response.delayMs
    return plan
  }
  const s = response as ScriptedShorthand
  const plan: Plan = { chunks: shorthandChunks(s, newId, s.chunkSize ?? defaultChunkSize) }
  if (s.delayMs !== undefined) plan.delayMs = s.delayMs
  if (s.failAfter !== undefined || s.throw !== undefined) {
    const spec = s.failAfter !== undefined ? (s.failure ?? s.throw) : s.throw
    plan.stop = {
      after: s.failAfter ?? 0,
      throw: toThrowable(spec ?? { code: 'TRANSPORT', message: 'the scripted stream broke' }),
    }
  } else if (s.endAfter !== undefined) {
    plan.stop = { after: s.endAfter }
  }
  return plan
}

function isChunkList(r: ScriptedResponse): r is { chunks: readonly unknown[]; delayMs?: number } {
  return typeof r === 'object' && r !== null && Array.isArray((r as { chunks?: unknown }).chunks)
}

function toThrowable(spec: ScriptedFailureSpec | Error): unknown {
  return spec instanceof Error ? spec : new ModelError(toFailure(spec))
}

function toFailure(spec: ScriptedFailureSpec): Failure {
  const f: Failure = { code: spec.code, message: spec.message ?? `scripted ${spec.code}` }
  if (spec.status !== undefined) f.status = spec.status
  if (spec.retryAfterMs !== undefined) f.retryAfterMs = spec.retryAfterMs
  return f
}

/**
 * The chunks a shorthand stands for (without its `failAfter`/`endAfter`/`throw` cut).
 * `newId` names tool calls that have no `id`.
 */
export function shorthandChunks(s: ScriptedShorthand, newId: () => string, chunkSize?: number): StreamChunk[] {
  const out: StreamChunk[] = []
  let index = 0
  const textBlock = (blockType: 'text' | 'reasoning', text: string) => {
    const i = index++
    out.push({ type: 'block-start', index: i, blockType })
    for (const piece of pieces(text, chunkSize)) {
      out.push(blockType === 'text' ? { type: 'text-delta', index: i, text: piece } : { type: 'reasoning-delta', index: i, text: piece })
    }
    out.push({ type: 'block-end', index: i })
  }
  if (s.reasoning !== undefined) textBlock('reasoning', s.reasoning)
  if (s.text !== undefined) textBlock('text', s.text)
  const calls = s.toolCalls ?? []
  for (const call of calls) {
    const i = index++
    const id = call.id ?? newId()
    const args = 'rawArgs' in call ? call.rawArgs : JSON.stringify(call.args ?? {})
    out.push({ type: 'block-start', index: i, blockType: 'tool-call' })
    const parts = pieces(args, chunkSize)
    out.push({ type: 'tool-call-delta', index: i, id, name: call.name, argumentsDelta: parts[0] ?? '' })
    for (const piece of parts.slice(1)) out.push({ type: 'tool-call-delta', index: i, id, argumentsDelta: piece })
    out.push({ type: 'block-end', index: i })
  }
  if (s.usage !== undefined) out.push({ type: 'usage', usage: s.usage })
  if (s.error !== undefined) out.push({ type: 'finish', reason: 'error', failure: toFailure(s.error) })
  else out.push({ type: 'finish', reason: s.maxTokens ? 'max-tokens' : calls.length > 0 ? 'tool-calls' : 'stop' })
  return out
}

/** Splits into pieces of `size` code points; '' gives no piece; no size gives one piece. */
function pieces(text: string, size?: number): string[] {
  if (text === '') return []
  if (size === undefined || !(size >= 1) || text.length <= size) return [text]
  const points = Array.from(text)
  const out: string[] = []
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''))
  return out
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason
  return new DOMException(
    `scriptedModel: aborted${reason instanceof Error ? `: ${reason.message}` : ''}`,
    'AbortError',
  )
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal)
}

function defaultSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal))
    const onAbort = () => {
      clearTimeout(timer)
      reject(abortError(signal))
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
