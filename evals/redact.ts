/**
 * `redactLog(log, redact)`: a golden without secrets. `redact(text, ctx)` is called on every piece
 * of message text and tool data — user and assistant text, reasoning, tool-call arguments, tool
 * results, the system prompt, compaction summaries — and its answer replaces it. The same text of
 * the same kind is redacted once (memoised), so what the log repeats stays equal (a tool call's
 * arguments in the assistant message and in `tool/call`, a message in its send and in
 * `user/message`). A step's streamed chunks are rewritten to stay lossless: the first delta of a
 * block carries the redacted block, later deltas of it carry '' (no event is removed: seqs and
 * citations hold). The result is checked with `verify`; a redaction that breaks the log (tool
 * arguments that are no longer JSON, say) is an `INVALID_ARGUMENT` naming the invariant and seq.
 * The input is never changed.
 */
import { TurnlogError } from '../events/errors.js'
import type { LogEvent } from '../events/index.js'
import type { LogHeader } from '../events/jsonl.js'
import { verify } from '../replay/verify.js'

export type RedactKind = 'user' | 'assistant' | 'reasoning' | 'tool-arguments' | 'tool-result' | 'system' | 'summary'

/** Returns the text to keep. A throw is reported with the seq and kind; the log is not written. */
export type Redactor = (text: string, ctx: { kind: RedactKind; seq: number }) => string

type Json = Record<string, unknown>

export function redactLog<L extends { header?: LogHeader; events: readonly LogEvent[] }>(log: L, redact: Redactor): L {
  if (typeof redact !== 'function') throw new TurnlogError('INVALID_ARGUMENT', 'redact must be a function (text, { kind, seq }) => text', { field: 'redact' })
  const memo = new Map<string, string>()
  let seq = -1
  const r = (text: string, kind: RedactKind): string => {
    const key = `${kind}\u0000${text}`
    const hit = memo.get(key)
    if (hit !== undefined) return hit
    let out: unknown
    try {
      out = redact(text, { kind, seq })
    } catch (err) {
      throw new TurnlogError('INVALID_ARGUMENT', `the redaction threw on ${kind} text: ${(err as Error)?.message ?? String(err)}`, { seq, field: 'redact' }, { cause: err })
    }
    if (typeof out !== 'string') throw new TurnlogError('INVALID_ARGUMENT', `the redaction returned ${typeof out} for ${kind} text, not a string`, { seq, field: 'redact' })
    memo.set(key, out)
    return out
  }
  const blocks = (content: unknown[], text: RedactKind): unknown[] => content.map((b) => {
    const x = b as Json
    if (x.type === 'text') return { ...x, text: r(x.text as string, text) }
    if (x.type === 'reasoning') return { ...x, text: r(x.text as string, 'reasoning') }
    if (x.type === 'tool-call') return { ...x, arguments: r(x.arguments as string, 'tool-arguments') }
    return x
  })
  const message = (m: Json, kind: RedactKind): Json => ({ ...m, content: blocks(m.content as unknown[], kind) })

  // the streamed blocks of each step, to rewrite their deltas: `turn.step` → block index → full text
  const streamed = new Map<string, Map<number, { kind: RedactKind; text: string; first: number }>>()
  for (const e of log.events) {
    if (e.type !== 'assistant/chunk') continue
    const d = e.data as { turn: number; step: number; chunk: Json }
    const c = d.chunk
    const kind: RedactKind | null = c.type === 'text-delta' ? 'assistant' : c.type === 'reasoning-delta' ? 'reasoning' : c.type === 'tool-call-delta' ? 'tool-arguments' : null
    if (kind === null) continue
    const k = `${d.turn}.${d.step}`
    const m = streamed.get(k) ?? new Map()
    streamed.set(k, m)
    const b = m.get(c.index as number) ?? { kind, text: '', first: e.seq }
    b.text += (kind === 'tool-arguments' ? c.argumentsDelta : c.text) as string ?? ''
    m.set(c.index as number, b)
  }

  const events = log.events.map((e): LogEvent => {
    seq = e.seq
    const d = e.data as Json
    switch (e.type) {
      case 'user/message':
        return { ...e, data: { ...d, message: message(d.message as Json, 'user') } } as LogEvent
      case 'agent/inbox/spliced':
        return { ...e, data: { ...d, inserted: (d.inserted as Json[]).map((m) => message(m, 'user')) } } as LogEvent
      case 'assistant/message':
        return { ...e, data: { ...d, message: message(d.message as Json, 'assistant') } } as LogEvent
      case 'tool/call':
        return { ...e, data: { ...d, arguments: r(d.arguments as string, 'tool-arguments') } } as LogEvent
      case 'tool/result':
        return { ...e, data: { ...d, message: message(d.message as Json, 'tool-result') } } as LogEvent
      case 'request/header':
        return { ...e, data: { ...d, system: r(d.system as string, 'system') } } as LogEvent
      case 'compaction/summary':
        return { ...e, data: { ...d, summary: r(d.summary as string, 'summary') } } as LogEvent
      case 'assistant/chunk': {
        const c = d.chunk as Json
        const b = streamed.get(`${d.turn}.${d.step}`)?.get(c.index as number)
        if (!b || !['text-delta', 'reasoning-delta', 'tool-call-delta'].includes(c.type as string)) return e
        const text = e.seq === b.first ? r(b.text, b.kind) : ''
        const chunk = c.type === 'tool-call-delta' ? { ...c, argumentsDelta: text } : { ...c, text }
        return { ...e, data: { ...d, chunk } } as LogEvent
      }
      default:
        return e
    }
  })
  const v = verify(events)
  if (!v.ok) {
    const f = v.violations[0]!
    throw new TurnlogError('INVALID_ARGUMENT', `the redacted log breaks ${f.invariant} at seq ${f.seq}: ${f.message}`, { seq: f.seq, field: 'redact', invariant: f.invariant })
  }
  return { ...log, events }
}
