/**
 * The checked stream: an adapter's stream as the driver consumes it (docs/spec/lifecycle.md §4.4–4.7).
 *
 * ```ts
 * for await (const item of checkedStream(adapter, request, signal)) {
 *   if (item.kind === 'chunk') await append('assistant/chunk', { turn, step, chunk: item.chunk })
 *   else outcome = item.outcome   // always the last item, exactly once
 * }
 * ```
 *
 * Every chunk is validated (`StreamChunk` schema, through `parseChunk`: a copy checked by zod's compiled validator), checked against the grammar (`StreamGrammar`)
 * and the tool-call rules (`MessageAssembler.violation`), then yielded, then assembled (so the
 * driver appends it before it is assembled). The generator never throws: an adapter that throws,
 * an invalid or ungrammatical chunk, a stream that ends without `finish`, an in-band `error` or
 * `aborted` finish, an empty response and an abort all end in `{kind: 'failure'}`.
 *
 * - A chunk that is invalid or breaks the grammar is **not yielded** (the log stays grammatical,
 *   L9); the outcome is `STREAM_GRAMMAR`. So is a chunk the log could not hold (a lone surrogate in
 *   a text, `-0`): the driver's append would refuse it (`NOT_LOSSLESS`). Members set to
 *   `undefined` (`{name: undefined}`) are dropped, not refused.
 * - An aborted signal ends the stream at once, without waiting for the adapter (its pending
 *   `next()` is abandoned and `return()` is requested); the outcome is `ABORTED`, with
 *   `partial` for the interrupted message. Nothing is yielded after the abort.
 * - After `finish` the stream is read once more: a chunk there is `STREAM_GRAMMAR` ("chunk after
 *   finish"). An abort during that last read no longer changes a success: the response is complete.
 * - `EMPTY_RESPONSE`: a `stop` or `tool-calls` finish whose assembled message has no content (an
 *   empty `tool-calls` response is as empty as an empty `stop`). A `max-tokens` finish with no
 *   content is a success with an empty message (§4.5: the message is appended even when empty).
 */
import { StreamGrammar, findLossy, type StreamChunk, type AssistantMessage, type Failure, type SuccessFinishReason, type Usage } from '../events/index.js'
import { MessageAssembler, type PartialMessage } from './assembler.js'
import { describe, failureFromError } from './errors.js'
import { parseChunk, type ParsedChunk } from './parse-chunk.js'
import type { ModelAdapter, ModelRequest, StreamFn } from './types.js'

export type StreamOutcome =
  | { kind: 'success'; message: AssistantMessage; usage?: Usage; finish: SuccessFinishReason; explanation?: string }
  | {
      kind: 'failure'
      failure: Failure
      /** The usage chunk, if one streamed (a failed request's usage is recorded only there). */
      usage?: Usage
      /** What streamed before the failure; after a cancel, the interrupted message (§4.7). */
      partial: PartialMessage
    }

export type CheckedItem =
  | { kind: 'chunk'; chunk: StreamChunk }
  | { kind: 'end'; outcome: StreamOutcome }

const ABORT: unique symbol = Symbol('abort')

export async function* checkedStream(
  source: ModelAdapter | StreamFn,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<CheckedItem, void, undefined> {
  const assembler = new MessageAssembler()
  const grammar = new StreamGrammar()
  const fail = (failure: Failure): CheckedItem => {
    const outcome: StreamOutcome = { kind: 'failure', failure, partial: assembler.partial() }
    if (assembler.usage !== undefined) outcome.usage = assembler.usage
    return { kind: 'end', outcome }
  }
  const grammarFailure = (message: string): CheckedItem => fail({ code: 'STREAM_GRAMMAR', message })

  if (signal.aborted) {
    yield fail(failureFromError(undefined, signal))
    return
  }

  let iterator: AsyncIterator<unknown> | undefined
  let exhausted = false
  // Resolves the pending read with ABORT when the signal fires (one listener per stream).
  let onAbortRead: (() => void) | undefined
  const onAbort = () => onAbortRead?.()
  signal.addEventListener('abort', onAbort, { once: true })

  const read = (): Promise<IteratorResult<unknown> | typeof ABORT> =>
    new Promise((resolve, reject) => {
      if (signal.aborted) {
        resolve(ABORT)
        return
      }
      onAbortRead = () => resolve(ABORT)
      let pending: Promise<IteratorResult<unknown>>
      try {
        pending = iterator!.next()
      } catch (e) {
        reject(e)
        return
      }
      // An abandoned read may still reject later: the handlers here absorb it. The result is the
      // adapter's object: `done` and `value` are read once, here, inside the guard (a getter may throw).
      Promise.resolve(pending).then((res) => {
        try {
          resolve(res.done ? { done: true, value: undefined } : { done: false, value: res.value })
        } catch (e) {
          reject(e)
        }
      }, reject)
    })

  try {
    try {
      const iterable = typeof source === 'function' ? source(request, signal) : source.stream(request, signal)
      iterator = (iterable as AsyncIterable<unknown>)[Symbol.asyncIterator]()
    } catch (e) {
      yield fail(failureFromError(e, signal))
      return
    }

    for (;;) {
      let r: IteratorResult<unknown> | typeof ABORT
      try {
        r = await read()
      } catch (e) {
        exhausted = true // a throwing iterator is finished
        if (grammar.finished) break // the response was complete before the adapter failed
        yield fail(failureFromError(e, signal))
        return
      }
      if (r === ABORT) {
        if (grammar.finished) break
        yield fail(failureFromError(undefined, signal))
        return
      }
      if (r.done) {
        exhausted = true
        break
      }
      if (grammar.finished) {
        yield grammarFailure(`chunk after finish: ${describeChunk(r.value)}`)
        return
      }
      let parsed: ParsedChunk
      try {
        parsed = parseChunk(r.value)
      } catch (e) {
        // zod reads the chunk's getters unguarded: a chunk that throws when read is not a chunk
        yield grammarFailure(`unreadable chunk: ${describe(e)}`)
        return
      }
      if (!parsed.success) {
        const issue = parsed.error.issues[0]
        yield grammarFailure(`invalid chunk ${describeChunk(r.value)}${issue ? `: ${issue.message}` : ''}`)
        return
      }
      const chunk = parsed.data
      const lossy = findLossy(chunk, 'chunk')
      if (lossy !== null) {
        yield grammarFailure(`chunk ${lossy.path} is not lossless JSON: ${lossy.why}`)
        return
      }
      const broken = grammar.push(chunk) ?? assembler.violation(chunk)
      if (broken !== null) {
        yield grammarFailure(broken)
        return
      }
      yield { kind: 'chunk', chunk }
      assembler.push(chunk)
      if (signal.aborted && !grammar.finished) {
        yield fail(failureFromError(undefined, signal))
        return
      }
    }

    if (!grammar.finished) {
      yield grammarFailure('the stream ended without a finish chunk')
      return
    }
    const failure = assembler.failure
    if (failure !== undefined) {
      yield fail(failure)
      return
    }
    const result = assembler.result()
    // a refusal is an answer even when the model wrote nothing (the provider explained it)
    if (result.finish !== 'max-tokens' && result.finish !== 'refusal' && result.message.content.length === 0) {
      yield fail({ code: 'EMPTY_RESPONSE', message: `the model finished (${result.finish}) with no content` })
      return
    }
    const outcome: StreamOutcome = { kind: 'success', message: result.message, finish: result.finish }
    if (result.usage !== undefined) outcome.usage = result.usage
    if (result.explanation !== undefined) outcome.explanation = result.explanation
    yield { kind: 'end', outcome }
  } finally {
    signal.removeEventListener('abort', onAbort)
    onAbortRead = undefined
    if (iterator !== undefined && !exhausted) {
      // Not awaited: a stuck adapter must not hold up the step.
      try {
        const p = iterator.return?.()
        if (p !== undefined) Promise.resolve(p).catch(() => {})
      } catch {
        // the adapter's cleanup failed; nothing to do
      }
    }
  }
}

function describeChunk(value: unknown): string {
  try {
    const s = JSON.stringify(value)
    if (typeof s === 'string') return s.length > 200 ? `${s.slice(0, 200)}…` : s
  } catch {
    // fall through
  }
  return String(value)
}

/**
 * Runs a checked stream to its end and returns every yielded chunk and the outcome: for callers
 * that do not log chunk by chunk (a compaction summariser, tests). Never throws.
 */
export async function collectOutcome(
  source: ModelAdapter | StreamFn,
  request: ModelRequest,
  signal: AbortSignal,
): Promise<{ chunks: StreamChunk[]; outcome: StreamOutcome }> {
  const chunks: StreamChunk[] = []
  for await (const item of checkedStream(source, request, signal)) {
    if (item.kind === 'chunk') chunks.push(item.chunk)
    else return { chunks, outcome: item.outcome }
  }
  /* c8 ignore next */
  throw new Error('unreachable: a checked stream always ends with an end item')
}
