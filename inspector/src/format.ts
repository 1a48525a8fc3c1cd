/** Small formatting helpers of the page: key/value rows, one-line summaries of events. */
import type { LogEvent } from '../../events/envelope.js'
import { str } from '../../replay/timeline.js'
import { fmtMs, h } from './dom.js'
import { contentLines } from './transcript.js'

export function kv(k: string, v: string | number, field: string): HTMLElement {
  return h('div', { class: 'kvrow' }, h('span', { class: 'k' }, k), h('span', { class: 'v', data: { field } }, String(v)))
}

/** A CSS class fragment from log text (anything but [a-z0-9-] becomes '-'). */
export function cls(s: string): string {
  return s.replace(/[^a-z0-9-]/gi, '-').slice(0, 30)
}

/** JSON text pretty-printed, or the text as it is. */
export function pretty(s: string): string {
  try {
    return JSON.stringify(JSON.parse(s), null, 2)
  } catch {
    return s
  }
}

export function fmtTime(t: unknown): string {
  return typeof t === 'number' && Number.isFinite(t) ? new Date(t).toISOString().replace('T', ' ').replace('Z', ' UTC') : '?'
}

/** ` (+1.20 s)` since `t0` (the first event's time). */
export function relTime(t: unknown, t0: number | null): string {
  return typeof t === 'number' && t0 !== null ? ` (+${fmtMs(t - t0)})` : ''
}

export function eventSummary(e: LogEvent): string {
  const d = (e.data ?? {}) as Record<string, unknown>
  switch (e.type) {
    case 'turn/start': return `turn ${str(d.turn)}`
    case 'turn/end': return `turn ${str(d.turn)} · ${str((d.reason as { kind?: unknown })?.kind)}`
    case 'step/start': return `step ${str(d.turn)}.${str(d.step)}`
    case 'step/end': return `step ${str(d.turn)}.${str(d.step)} · ${str((d.outcome as { kind?: unknown })?.kind)}`
    case 'user/message': return contentLines(d.message).join(' ')
    case 'assistant/message': return contentLines(d.message).join(' ')
    case 'assistant/chunk': {
      const c = (d.chunk ?? {}) as Record<string, unknown>
      return `${str(c.type)} ${c.text !== undefined ? str(c.text) : c.argumentsDelta !== undefined ? str(c.argumentsDelta) : ''}`
    }
    case 'tool/call': return `${str(d.name)}(${str(d.arguments)}) ${str(d.callId)}`
    case 'tool/result': return `${str(d.callId)} → ${contentLines(d.message).join(' ')}`
    case 'agent/inbox/spliced': return `${str(d.target)} at ${str(d.start)} −${str(d.removedCount ?? 0)} +${Array.isArray(d.inserted) ? d.inserted.length : 0}`
    default: return JSON.stringify(d)
  }
}
