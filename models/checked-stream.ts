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

/** What one value read from the adapter turned out to be: a chunk to log, or the failure that ends the stream. */
type Checked = { ok: true; chunk: StreamChunk } | { ok: false; outcome: StreamOutcome }

/** The checks of one stream (grammar, tool-call rules) and its assembly: what both readers share. */
class StreamCheck {
  readonly assembler = new MessageAssembler()
  readonly grammar = new StreamGrammar()

  fail(failure: Failure): StreamOutcome {
    const outcome: StreamOutcome = { kind: 'failure', failure, partial: this.assembler.partial() }
    if (this.assembler.usage !== undefined) outcome.usage = this.assembler.usage
    return outcome
  }

  grammarFailure(message: string): StreamOutcome {
    return this.fail({ code: 'STREAM_GRAMMAR', message })
  }

  /** Validates, copies and checks one value the adapter yielded (it is not assembled yet). */
  check(value: unknown): Checked {
    if (this.grammar.finished) return { ok: false, outcome: this.grammarFailure(`chunk after finish: ${describeChunk(value)}`) }
    let parsed: ParsedChunk
    try {
      parsed = parseChunk(value)
    } catch (e) {
      // zod reads the chunk's getters unguarded: a chunk that throws when read is not a chunk
      return { ok: false, outcome: this.grammarFailure(`unreadable chunk: ${describe(e)}`) }
    }
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      return { ok: false, outcome: this.grammarFailure(`invalid chunk ${describeChunk(value)}${issue ? `: ${issue.message}` : ''}`) }
    }
    const chunk = parsed.data
    const lossy = findLossy(chunk, 'chunk')
    if (lossy !== null) return { ok: false, outcome: this.grammarFailure(`chunk ${lossy.path} is not lossless JSON: ${lossy.why}`) }
    const broken = this.grammar.push(chunk) ?? this.assembler.violation(chunk)
    if (broken !== null) return { ok: false, outcome: this.grammarFailure(broken) }
    return { ok: true, chunk }
  }

  /** The outcome once the adapter's stream ended (or failed after a complete response). */
  end(): StreamOutcome {
    if (!this.grammar.finished) return this.grammarFailure('the stream ended without a finish chunk')
    const failure = this.assembler.failure
    if (failure !== undefined) return this.fail(failure)
    const result = this.assembler.result()
    // a refusal is an answer even when the model wrote nothing (the provider explained it)
    if (result.finish !== 'max-tokens' && result.finish !== 'refusal' && result.message.content.length === 0) {
      return this.fail({ code: 'EMPTY_RESPONSE', message: `the model finished (${result.finish}) with no content` })
    }
    const outcome: StreamOutcome = { kind: 'success', message: result.message, finish: result.finish }
    if (result.usage !== undefined) outcome.usage = result.usage
    if (result.explanation !== undefined) outcome.explanation = result.explanation
    return outcome
  }
}

/** The adapter's iterator, each read raced with the abort signal (one listener per stream). */
class Reader {
  iterator: AsyncIterator<unknown> | undefined
  exhausted = false
  #onAbortRead: (() => void) | undefined
  readonly #onAbort = (): void => this.#onAbortRead?.()

  constructor(readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.#onAbort, { once: true })
  }

  /** Calls the adapter; returns what it threw synchronously, if anything. */
  open(source: ModelAdapter | StreamFn, request: ModelRequest): { error: unknown } | null {
    try {
      const iterable = typeof source === 'function' ? source(request, this.signal) : source.stream(request, this.signal)
      this.iterator = (iterable as AsyncIterable<unknown>)[Symbol.asyncIterator]()
      return null
    } catch (error) {
      return { error }
    }
  }

  /** The next result, or ABORT when the signal fires first. */
  read(): Promise<IteratorResult<unknown> | typeof ABORT> {
    return new Promise((resolve, reject) => {
      if (this.signal.aborted) {
        resolve(ABORT)
        return
      }
      this.#onAbortRead = () => resolve(ABORT)
      let pending: Promise<IteratorResult<unknown>>
      try {
        pending = this.iterator!.next()
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
  }

  close(): void {
    this.signal.removeEventListener('abort', this.#onAbort)
    this.#onAbortRead = undefined
    if (this.iterator !== undefined && !this.exhausted) {
      // Not awaited: a stuck adapter must not hold up the step.
      try {
        const p = this.iterator.return?.()
        if (p !== undefined) Promise.resolve(p).catch(() => {})
      } catch {
        // the adapter's cleanup failed; nothing to do
      }
    }
  }
}

export async function* checkedStream(
  source: ModelAdapter | StreamFn,
  request: ModelRequest,
  signal: AbortSignal,
): AsyncGenerator<CheckedItem, void, undefined> {
  const c = new StreamCheck()
  const end = (outcome: StreamOutcome): CheckedItem => ({ kind: 'end', outcome })
  if (signal.aborted) {
    yield end(c.fail(failureFromError(undefined, signal)))
    return
  }
  const reader = new Reader(signal)
  try {
    const threw = reader.open(source, request)
    if (threw !== null) {
      yield end(c.fail(failureFromError(threw.error, signal)))
      return
    }
    for (;;) {
      let r: IteratorResult<unknown> | typeof ABORT
      try {
        r = await reader.read()
      } catch (e) {
        reader.exhausted = true // a throwing iterator is finished
        if (c.grammar.finished) break // the response was complete before the adapter failed
        yield end(c.fail(failureFromError(e, signal)))
        return
      }
      if (r === ABORT) {
        if (c.grammar.finished) break
        yield end(c.fail(failureFromError(undefined, signal)))
        return
      }
      if (r.done) {
        reader.exhausted = true
        break
      }
      const checked = c.check(r.value)
      if (!checked.ok) {
        yield end(checked.outcome)
        return
      }
      yield { kind: 'chunk', chunk: checked.chunk }
      c.assembler.push(checked.chunk)
      if (signal.aborted && !c.grammar.finished) {
        yield end(c.fail(failureFromError(undefined, signal)))
        return
      }
    }
    yield end(c.end())
  } finally {
    reader.close()
  }
}

/**
 * `checkedStream` for a consumer that handles each chunk synchronously (the step driver): the same
 * checks, chunks and outcome, with `onChunk(chunk)` called where `checkedStream` yields a chunk
 * (before it is assembled), and the outcome returned. No generator between the adapter and the
 * log: a step pays one promise per adapter read instead of two more per item (benchmark B5). What
 * `onChunk` throws propagates (the adapter's stream is then closed, as when a `for await` over
 * `checkedStream` throws); anything else ends in the outcome, never a throw.
 */
export async function consumeCheckedStream(
  source: ModelAdapter | StreamFn,
  request: ModelRequest,
  signal: AbortSignal,
  onChunk: (chunk: StreamChunk) => void,
): Promise<StreamOutcome> {
  const c = new StreamCheck()
  if (signal.aborted) return c.fail(failureFromError(undefined, signal))
  const reader = new Reader(signal)
  try {
    const threw = reader.open(source, request)
    if (threw !== null) return c.fail(failureFromError(threw.error, signal))
    for (;;) {
      let r: IteratorResult<unknown> | typeof ABORT
      try {
        r = await reader.read()
      } catch (e) {
        reader.exhausted = true // a throwing iterator is finished
        if (c.grammar.finished) break // the response was complete before the adapter failed
        return c.fail(failureFromError(e, signal))
      }
      if (r === ABORT) {
        if (c.grammar.finished) break
        return c.fail(failureFromError(undefined, signal))
      }
      if (r.done) {
        reader.exhausted = true
        break
      }
      const checked = c.check(r.value)
      if (!checked.ok) return checked.outcome
      onChunk(checked.chunk)
      c.assembler.push(checked.chunk)
      if (signal.aborted && !c.grammar.finished) return c.fail(failureFromError(undefined, signal))
    }
    return c.end()
  } finally {
    reader.close()
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
