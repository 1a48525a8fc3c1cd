/** The page's header (file, session, counts, verify badge, live badge) and the divergence section
 * of `turnlog reexec --report` (the diff, and the recorded and re-executed events side by side). */
import { givenUpText, str } from '../../replay/timeline.js'
import type { Divergence, PageData } from './data.js'
import { h, oneLine } from './dom.js'

export interface Header {
  readonly el: HTMLElement
  /** 'verifying…', then the verdict. */
  readonly status: HTMLElement
  readonly counts: HTMLElement
  setLive(text: string): void
}

export function createHeader(d: PageData): Header {
  const status = h('span', { class: 'badge', data: { testid: 'verify' } }, 'verifying…')
  const counts = h('span', { class: 'muted', data: { testid: 'counts' } })
  const sid = str(d.header?.id ?? '')
  const live = d.mode === 'live' ? h('span', { class: 'badge live', data: { testid: 'live' } }, '● live') : null
  // resume's give-ups (docs/spec/lifecycle.md §8): acknowledged messages left unanswered, named in the log
  const gaveUp = d.events.filter((e) => e?.type === 'resume/given-up')
  const unanswered = gaveUp.reduce((n, e) => n + (Array.isArray((e.data as { messages?: unknown })?.messages) ? (e.data as { messages: unknown[] }).messages.length : 0), 0)
  const givenUp = gaveUp.length === 0 ? null : h('span', {
    class: 'badge bad', data: { testid: 'given-up' },
    title: gaveUp.map((e) => `seq ${e.seq}: ${givenUpText((e.data ?? {}) as Record<string, unknown>)}`).join('\n'),
  }, `given up: ${unanswered} message${unanswered === 1 ? '' : 's'}`)
  const el = h('header', { class: 'top' },
    h('span', { class: 'brand' }, 'turnlog'),
    h('span', { class: 'file', title: d.file }, oneLine(d.file, 80)),
    sid ? h('span', { class: 'muted' }, `session ${oneLine(sid, 60)}`) : null,
    counts,
    status,
    givenUp,
    parentLink(d),
    live,
  )
  return { el, status, counts, setLive: (text) => { if (live) live.textContent = text } }
}

/** A child session's header names its parent's call (docs/spec/lifecycle.md §10): a link to the parent's report when the CLI wrote one. */
function parentLink(d: PageData): HTMLElement | null {
  const p = (d.header as { parent?: { session?: unknown; seq?: unknown; callId?: unknown } } | null)?.parent
  if (p === undefined || p === null || typeof p.callId !== 'string') return null
  const text = `child of ${oneLine(str(p.session), 60)} (call ${oneLine(p.callId, 40)}, seq ${str(p.seq)})`
  const href = d.family?.parent?.href
  return href !== undefined ? h('a', { class: 'muted', href, data: { testid: 'parent' } }, text) : h('span', { class: 'muted', data: { testid: 'parent' } }, text)
}

const shown = (v: unknown): string => (v === undefined || v === null ? '(nothing)' : JSON.stringify(v, null, 2))

export function divergenceSection(dv: Divergence): HTMLElement {
  return h('section', { class: 'divergence', data: { testid: 'divergence' } },
    h('h2', null, `First divergence at seq ${dv.seq} (${oneLine(dv.kind)})`),
    h('pre', { class: 'diff', data: { testid: 'diff' } }, dv.diff),
    h('div', { class: 'side' },
      h('div', null, h('h3', null, 'recorded (expected)'), h('pre', { data: { testid: 'expected' } }, shown(dv.expected))),
      h('div', null, h('h3', null, 're-executed (actual)'), h('pre', { data: { testid: 'actual' } }, shown(dv.actual))),
    ),
  )
}

/** `turnlog reexec --report` of a log that re-executed identically: says so. */
export function reexecOkSection(r: { ok: boolean; eventCount: number }): HTMLElement {
  return h('section', { class: 'reexec-ok', data: { testid: 'reexec-ok' } },
    h('h2', null, `Re-executed ${r.eventCount} events: identical to the recording (no divergence)`))
}
