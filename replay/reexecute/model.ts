/**
 * Serving the model: each request gets its step's recorded chunks, then ends as the step did
 * (returns, throws the recorded failure, or waits for the cancel); a compaction summary call is
 * served from its recorded bracket.
 */
import type { Failure, StreamChunk } from '../../events/index.js'
import { charTokenizer, estimateMessage } from '../../compaction/meter.js'
import { SUMMARY_PREFIX } from '../../compaction/summarise.js'
import { ModelError } from '../../models/errors.js'
import { shorthandChunks } from '../../models/scripted.js'
import type { ModelAdapter, ModelRequest } from '../../models/types.js'
import { afterFinishChunk, key2, NEVER } from './facts.js'
import type { Host, StreamServe } from './state.js'

/** Summariser decisions of compaction/summarise.ts (not model failures). */
const SUMMARISER_CODES = new Set(['EMPTY_SUMMARY', 'SUMMARY_NOT_SMALLER', 'SURFACE_CHANGED', 'SUMMARISER_ERROR'])

export function servedModel(rx: Host, name: string, contextWindow: number | undefined, gen: number, provider?: string): ModelAdapter {
  return {
    // the recorded provider (issue 23: request/header records it), so the headers come out equal
    info: { name, ...(contextWindow !== undefined ? { contextWindow } : {}), ...(provider !== undefined ? { provider } : {}) },
    stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamChunk> {
      if (gen !== rx.gen) return (async function* () { await NEVER })()
      if (request.purpose === 'compaction') return servedSummary(rx, signal)
      const l = rx.agent.lifecycle
      const rec = l.openTurn !== null && l.openStep !== null ? rx.steps.get(key2(l.openTurn, l.openStep)) ?? null : null
      const serve: StreamServe = { rec, i: 0, waiter: null }
      rx.streams.push(serve)
      const wait = (): Promise<void> => new Promise<void>((resolve) => {
        serve.waiter = resolve
        rx.schedule()
      })
      return (async function* () {
        try {
          if (rec === null) throw new ModelError({ code: 'UNKNOWN', message: 'reexecute: the recording has no such step' })
          while (serve.i < rec.chunks.length) {
            await wait()
            yield rec.chunks[serve.i++]!
          }
          if (rec.end.kind === 'hang') {
            await new Promise<void>((resolve) => {
              if (signal.aborted) resolve()
              else signal.addEventListener('abort', () => resolve(), { once: true })
            })
            throw new DOMException('aborted', 'AbortError')
          }
          await wait()
          if (rec.end.kind === 'throw') {
            const f = rec.end.failure.failure
            const last = rec.chunks[rec.chunks.length - 1]
            if (f.code === 'STREAM_GRAMMAR' && last?.type === 'finish' && f.message.startsWith('chunk after finish: ')) {
              yield afterFinishChunk(f.message.slice('chunk after finish: '.length))
              return
            }
            throw new ModelError(f)
          }
        } finally {
          serve.waiter = null
          const i = rx.streams.indexOf(serve)
          if (i >= 0) rx.streams.splice(i, 1)
        }
      })()
    },
  }
}

/**
 * A summary call, served from the open bracket's record once the pump reaches its outcome:
 * the recorded summary and usage; the recorded model failure; for `ABORTED`, a wait for the cancel
 * (the pump issues it); for the summariser's own decisions, a response that makes it decide the
 * same (whitespace for `EMPTY_SUMMARY`, a text of the recorded estimate for `SUMMARY_NOT_SMALLER`).
 */
export function servedSummary(rx: Host, signal: AbortSignal): AsyncIterable<StreamChunk> {
  const id = rx.agent.lifecycle.openCompaction
  const rec = id === null ? null : rx.brackets.get(id) ?? null
  const serve: StreamServe = { rec: null, i: 0, waiter: null, compaction: rec }
  rx.streams.push(serve)
  return (async function* () {
    try {
      if (rec === null || (rec.summary === null && rec.end === null)) {
        throw new ModelError({ code: 'UNKNOWN', message: 'reexecute: the recording has no such compaction bracket' })
      }
      const error = rec.summary === null ? rec.end?.data.error : undefined
      if (error?.code === 'ABORTED') {
        await new Promise<void>((resolve) => {
          if (signal.aborted) resolve()
          else signal.addEventListener('abort', () => resolve(), { once: true })
        })
        throw new DOMException('aborted', 'AbortError')
      }
      await new Promise<void>((resolve) => {
        serve.waiter = resolve
        rx.schedule()
      })
      if (rec.summary !== null) {
        const { summary, usage } = rec.summary.data
        yield* shorthandChunks({ text: summary, ...(usage !== undefined ? { usage } : {}) }, () => 'unused')
        return
      }
      if (error === undefined) throw new ModelError({ code: 'UNKNOWN', message: 'reexecute: the recorded bracket ended without a summary or an error' })
      if (!SUMMARISER_CODES.has(error.code)) throw new ModelError({ code: error.code, message: error.message } as Failure)
      yield* shorthandChunks({ text: decidedSummary(rx, error) }, () => 'unused')
    } finally {
      serve.waiter = null
      const i = rx.streams.indexOf(serve)
      if (i >= 0) rx.streams.splice(i, 1)
    }
  })()
}

/** A summary text for which the summariser decides as recorded. */
export function decidedSummary(rx: Host, error: { code: string; message: string }): string {
  if (error.code === 'EMPTY_SUMMARY') return ' '
  if (error.code === 'SUMMARY_NOT_SMALLER') {
    const m = /^the summary \((\d+) estimated tokens\)/.exec(error.message)
    if (m) return textOfEstimate(rx, Number(m[1]))
  }
  // SURFACE_CHANGED, SUMMARISER_ERROR: the model answered; any short text
  return 'summary'
}

/** A text whose summary message the tokenizer estimates at exactly `n` tokens (else the nearest above). */
export function textOfEstimate(rx: Host, n: number): string {
  const tokenizer = rx.opts.tokenizer ?? charTokenizer
  const est = (len: number) => estimateMessage({
    id: 'x', role: 'user', content: [{ type: 'text', text: SUMMARY_PREFIX + 'x'.repeat(len) }], source: { kind: 'compaction' },
  }, tokenizer)
  let lo = 1
  let hi = 1
  while (est(hi) < n && hi < 1 << 26) hi *= 2
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (est(mid) < n) lo = mid + 1
    else hi = mid
  }
  return 'x'.repeat(lo)
}
