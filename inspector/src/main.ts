/**
 * The inspector page (issue "See a session"): a timeline tied to the state at any seq. Layout:
 * header · divergence (reexec) · timeline · tokens per request · scrubber · three columns:
 * transcript | state at seq (statecharts, lifecycle, usage, pending calls, inbox, history) |
 * events (raw log, violations marked) and the selection (tool call arguments and result, raw JSON).
 */
import type { LogEvent } from '../../events/envelope.js'
import type { Violation } from '../../events/invariants/types.js'
import type { ReplayState } from '../../reducers/index.js'
import { verify } from '../../replay/verify.js'
import { StateCursor } from './cursor.js'
import { readPageData, type PageData } from './data.js'
import { fmtInt, fmtMs, h, oneLine, replace } from './dom.js'
import { drawMachines, machineStates } from './machines.js'
import { buildTimeline, str, type Timeline } from '../../replay/timeline.js'
import { createTimeline, drawTokens } from './timeline.js'
import { contentLines, transcriptLines, type Line } from './transcript.js'
import { VirtualList } from './vlist.js'

declare global {
  interface Window {
    /** For tests and the console: the selected seq, and a way to move it. */
    turnlogInspector?: {
      select(seq: number): void
      readonly seq: number
      readonly count: number
      readonly violations: number
      /** How long the last state display took (fold + DOM), ms. */
      readonly lastShowMs: number
      /** The timeline's bars and marks as drawn, in page coordinates. */
      bars(): Array<{ x: number; y: number; seq: number; kind: string; label: string }>
    }
  }
}

const app = document.getElementById('app')!
let data: PageData | null = null
try {
  data = readPageData()
} catch (err) {
  replace(app, h('div', { class: 'empty' }, `The embedded log could not be read: ${(err as Error).message}`))
}
if (data) start(data)
else if (!app.firstChild) replace(app, h('div', { class: 'empty' }, 'No log embedded. Run: turnlog report LOG -o report.html, or turnlog inspect LOG.'))

function start(d: PageData): void {
  const events: LogEvent[] = d.events
  t0 = typeof events[0]?.time === 'number' ? events[0].time : null
  let violations: Violation[] = []
  let violationAt = new Map<number, Violation[]>()
  let timeline: Timeline = buildTimeline(events, [])
  let seq = events.length ? Math.min(Math.max(0, d.select ?? events.length - 1), events.length - 1) : -1
  let follow = d.mode === 'live' && d.select === undefined
  let axis: 'time' | 'seq' = 'time'
  const cursor = new StateCursor(() => events)
  const callIndex = new Map<string, { call?: number; result?: number }>()
  const indexCalls = (from: number): void => {
    for (let i = from; i < events.length; i++) {
      const e = events[i]!
      if (e.type !== 'tool/call' && e.type !== 'tool/result') continue
      const id = str((e.data as { callId?: unknown }).callId)
      const x = callIndex.get(id) ?? {}
      if (e.type === 'tool/call') x.call = i
      else x.result = i
      callIndex.set(id, x)
    }
  }
  indexCalls(0)

  // ---- header
  const status = h('span', { class: 'badge', data: { testid: 'verify' } }, 'verifying…')
  const counts = h('span', { class: 'muted', data: { testid: 'counts' } })
  const sid = str(d.header?.id ?? '')
  const head = h('header', { class: 'top' },
    h('span', { class: 'brand' }, 'turnlog'),
    h('span', { class: 'file', title: d.file }, oneLine(d.file, 80)),
    sid ? h('span', { class: 'muted' }, `session ${oneLine(sid, 60)}`) : null,
    counts,
    status,
    d.mode === 'live' ? h('span', { class: 'badge live', data: { testid: 'live' } }, '● live') : null,
  )

  // ---- divergence (reexec --report)
  let divergence: HTMLElement | null = null
  if (d.divergence) {
    const dv = d.divergence
    divergence = h('section', { class: 'divergence', data: { testid: 'divergence' } },
      h('h2', null, `First divergence at seq ${dv.seq} (${oneLine(dv.kind)})`),
      h('pre', { class: 'diff' }, dv.diff),
      h('div', { class: 'side' },
        h('div', null, h('h3', null, 'recorded (expected)'), h('pre', { data: { testid: 'expected' } }, dv.expected === undefined || dv.expected === null ? '(nothing)' : JSON.stringify(dv.expected, null, 2))),
        h('div', null, h('h3', null, 're-executed (actual)'), h('pre', { data: { testid: 'actual' } }, dv.actual === undefined || dv.actual === null ? '(nothing)' : JSON.stringify(dv.actual, null, 2))),
      ),
    )
  }

  // ---- timeline, tokens, scrubber
  const tlView = createTimeline((s) => select(s, true), () => axis)
  const tokens = h('canvas', { class: 'tokens', ariaLabel: 'tokens per request; violet: compaction' })
  let tokenHits: Array<{ x0: number; x1: number; seq: number }> = []
  tokens.addEventListener('click', (ev) => {
    const hit = tokenHits.find((t) => ev.offsetX >= t.x0 && ev.offsetX <= t.x1)
    if (hit) select(hit.seq, true)
  })
  const range = h('input', { class: 'range', ariaLabel: 'seq scrubber' })
  range.type = 'range'
  range.min = '0'
  range.step = '1'
  range.addEventListener('input', () => select(Number(range.value), true))
  const seqBox = h('input', { class: 'seqbox', ariaLabel: 'seq', data: { testid: 'seq-input' } })
  seqBox.type = 'number'
  seqBox.addEventListener('change', () => select(Number(seqBox.value), true))
  const axisBtn = h('button', { onclick: () => { axis = axis === 'time' ? 'seq' : 'time'; axisBtn.textContent = `axis: ${axis}`; tlView.set(timeline, events.length); tlView.setCursor(seq) } }, 'axis: time')
  const scrub = h('div', { class: 'scrub' },
    h('button', { onclick: () => select(prevTurn(), true), title: 'previous turn ([)' }, '« turn'),
    h('button', { onclick: () => select(seq - 1, true), title: 'previous event (←)' }, '◀'),
    range,
    h('button', { onclick: () => select(seq + 1, true), title: 'next event (→)' }, '▶'),
    h('button', { onclick: () => select(nextTurn(), true), title: 'next turn (])' }, 'turn »'),
    h('label', { class: 'muted' }, 'seq ', seqBox),
    axisBtn,
    h('span', { class: 'muted keys' }, '← → ±1 · ⇧ ±10 · PgUp/PgDn ±100 · [ ] turns · Home/End'),
  )

  // ---- columns
  let lines: Line[] = []
  const lineOfSeq: number[] = []
  const transcript = new VirtualList(22, (i) => {
    const l = lines[i]!
    return h('div', { class: `tline k-${cls(l.kind)}`, style: `padding-left:${8 + l.depth * 16}px`, title: `seq ${l.seq}` },
      h('span', { class: 'seq' }, String(l.seq)), h('span', { class: 'kind' }, l.kind), ' ', l.text)
  }, (i) => select(lines[i]!.seq, true), 'transcript')
  const eventsList = new VirtualList(22, (i) => {
    const e = events[i]!
    const v = violationAt.get(i)
    return h('div', { class: v ? 'eline violation' : 'eline', title: v ? v.map((x) => `${x.invariant}: ${x.message}`).join('\n') : `seq ${i}` },
      h('span', { class: 'seq' }, String(i)), h('span', { class: 'etype' }, oneLine(str(e.type), 40)),
      v ? h('span', { class: 'vio' }, v.map((x) => x.invariant).join(' ')) : null,
      ' ', h('span', { class: 'muted' }, oneLine(eventSummary(e), 140)))
  }, (i) => select(i, true), 'events')
  let current: ReplayState | null = null
  const history = new VirtualList(22, (i) => {
    const m = current!.history.messages[i]!
    const s = current!.history.seqs[i]!
    return h('div', { class: `hline r-${cls(m.role)}` }, h('span', { class: 'seq' }, String(s)), h('span', { class: 'kind' }, m.role), ' ', oneLine(contentLines(m).join(' '), 300))
  }, (i) => select(current!.history.seqs[i]!, true), 'history')

  const machines = h('div', { class: 'machines', data: { testid: 'machines' } })
  const stateHead = h('div', { class: 'state-head', data: { testid: 'state-head' } })
  const lifecycle = h('div', { class: 'kv', data: { testid: 'lifecycle' } })
  const usage = h('div', { class: 'kv', data: { testid: 'usage' } })
  const pending = h('div', { class: 'list', data: { testid: 'pending' } })
  const inbox = h('div', { class: 'list', data: { testid: 'inbox' } })
  const historyTitle = h('h3', { data: { testid: 'history-count' } }, 'history')
  const selection = h('div', { class: 'selection', data: { testid: 'selection' } })
  const raw = h('pre', { class: 'raw', data: { testid: 'raw' } })

  replace(app,
    head,
    divergence,
    h('section', { class: 'tl-wrap' }, tlView.canvas, tokens, scrub),
    h('main', { class: 'cols' },
      h('section', { class: 'col' }, h('h2', null, 'Transcript'), transcript.el),
      h('section', { class: 'col state' }, h('h2', null, 'State at seq'), stateHead, machines,
        h('div', { class: 'grid2' },
          h('div', null, h('h3', null, 'lifecycle'), lifecycle),
          h('div', null, h('h3', null, 'usage so far'), usage)),
        h('h3', null, 'pending tool calls'), pending,
        h('h3', null, 'inbox'), inbox,
        historyTitle, history.el),
      h('section', { class: 'col' }, h('h2', null, 'Events'), eventsList.el, h('h2', null, 'Selected'), selection, raw),
    ),
  )

  // ---- behaviour
  function rebuild(from: number): void {
    indexCalls(from)
    timeline = buildTimeline(events, violations)
    const final = cursor.at(events.length - 1)
    lines = transcriptLines(final.transcript)
    lineOfSeq.length = 0
    lines.forEach((l, i) => { if (lineOfSeq[l.seq] === undefined) lineOfSeq[l.seq] = i })
    // the state cursor now sits at the end: the next select() folds back from 0 (or stays, if at end)
    transcript.setCount(lines.length)
    eventsList.setCount(events.length)
    range.max = String(Math.max(0, events.length - 1))
    counts.textContent = `${fmtInt(events.length)} events · ${timeline.turnStarts.length} turn${timeline.turnStarts.length === 1 ? '' : 's'}`
    tlView.set(timeline, events.length)
  }

  function select(s: number, scroll: boolean): void {
    if (events.length === 0) return
    const t = Math.min(Math.max(0, Math.round(Number.isFinite(s) ? s : 0)), events.length - 1)
    seq = t
    follow = d.mode === 'live' && t === events.length - 1
    scheduleShow(scroll)
  }

  let frame = 0
  let pendingScroll = false
  function scheduleShow(scroll: boolean): void {
    pendingScroll ||= scroll
    if (frame) return
    frame = requestAnimationFrame(() => {
      frame = 0
      show(pendingScroll)
      pendingScroll = false
    })
  }

  let lastShowMs = 0
  function show(scroll: boolean): void {
    if (seq < 0) return
    const began = performance.now()
    const e = events[seq]!
    const st = cursor.at(seq)
    current = st
    range.value = String(seq)
    seqBox.value = String(seq)
    document.body.dataset.seq = String(seq)
    replace(stateHead, h('b', null, `seq ${seq}`), ` · ${oneLine(str(e.type), 40)} · `, fmtTime(e.time), relTime(e.time))
    drawMachines(machines, machineStates(st, e))
    const lc = st.lifecycle
    replace(lifecycle,
      kv('open turn', lc.openTurn ?? '—', 'openTurn'), kv('open step', lc.openStep ?? '—', 'openStep'),
      kv('streaming', lc.streaming ? 'yes' : 'no', 'streaming'),
      kv('last step outcome', lc.lastStepOutcome?.kind ?? '—', 'lastStepOutcome'),
      kv('last turn end', lc.lastTurnEndReason?.kind ?? '—', 'lastTurnEndReason'),
      kv('compaction open', lc.openCompaction ?? '—', 'openCompaction'))
    const u = st.usage.total
    replace(usage,
      kv('requests', fmtInt(u.requests), 'usage.requests'), kv('input tokens', fmtInt(u.inputTokens), 'usage.inputTokens'),
      kv('output tokens', fmtInt(u.outputTokens), 'usage.outputTokens'), kv('cache read', fmtInt(u.cacheReadTokens), 'usage.cacheReadTokens'),
      kv('reasoning', fmtInt(u.reasoningTokens), 'usage.reasoningTokens'),
      kv('failed requests', fmtInt(st.usage.failed.requests), 'usage.failed.requests'),
      kv('compaction requests', fmtInt(st.usage.compaction.requests), 'usage.compaction.requests'))
    replace(pending, lc.pendingToolCalls.length === 0 ? h('div', { class: 'muted' }, 'none') : lc.pendingToolCalls.map((c) =>
      h('div', { class: 'item', data: { callid: c.callId }, onclick: () => select(c.seq, true) }, h('span', { class: 'seq' }, String(c.seq)), h('b', null, oneLine(c.name, 60)), ` ${oneLine(c.callId, 60)} `, h('span', { class: 'muted' }, oneLine(c.arguments, 160)))))
    replace(inbox,
      h('div', { class: 'inbox-list', data: { testid: 'next-turn', count: String(st.inbox.nextTurn.length) } }, h('span', { class: 'label' }, `next-turn (${st.inbox.nextTurn.length})`),
        st.inbox.nextTurn.map((m) => h('div', { class: 'item' }, h('b', null, oneLine(m.id, 40)), ' ', oneLine(contentLines(m).join(' '), 160)))),
      h('div', { class: 'inbox-list', data: { testid: 'next-step', count: String(st.inbox.nextStep.length) } }, h('span', { class: 'label' }, `next-step (${st.inbox.nextStep.length})`),
        st.inbox.nextStep.map((m) => h('div', { class: 'item' }, h('b', null, oneLine(m.id, 40)), ' ', oneLine(contentLines(m).join(' '), 160)))))
    historyTitle.textContent = `history (model-visible): ${st.history.messages.length} messages`
    historyTitle.dataset.count = String(st.history.messages.length)
    history.setCount(st.history.messages.length)
    // selection
    showSelection(e)
    raw.textContent = JSON.stringify(e, null, 2)
    // links
    tlView.setCursor(seq)
    tokenHits = drawTokens(tokens, timeline, seq)
    eventsList.select(seq, scroll)
    let li = -1
    for (let s = seq; s >= 0 && li < 0; s--) li = lineOfSeq[s] ?? -1
    transcript.select(li, scroll)
    lastShowMs = performance.now() - began
  }

  function showSelection(e: LogEvent): void {
    const dd = (e.data ?? {}) as Record<string, unknown>
    const vs = violationAt.get(e.seq)
    const parts: HTMLElement[] = []
    if (vs) parts.push(h('div', { class: 'vio-box' }, vs.map((v) => h('div', null, h('b', null, v.invariant), ` ${v.message}`))))
    if (e.type === 'tool/call' || e.type === 'tool/result') {
      const id = str(dd.callId)
      const pair = callIndex.get(id) ?? {}
      const call = pair.call !== undefined ? events[pair.call] : undefined
      const res = pair.result !== undefined ? events[pair.result] : undefined
      const cd = (call?.data ?? {}) as Record<string, unknown>
      const rd = (res?.data ?? {}) as Record<string, unknown>
      const dur = call && res ? ` · ${fmtMs(Number(res.time) - Number(call.time))}` : ''
      parts.push(h('div', { class: 'tool', data: { testid: 'tool-detail' } },
        h('div', null, 'tool call ', h('b', { data: { testid: 'tool-name' } }, str(cd.name ?? dd.name)), ` ${id}${dur}`),
        h('h3', null, 'arguments'), h('pre', { data: { testid: 'tool-args' } }, pretty(str(cd.arguments ?? ''))),
        h('h3', null, 'result'), h('pre', { data: { testid: 'tool-result' } }, res ? contentLines(rd.message).join('\n') : '(no result yet)'),
        rd.error ? h('div', { class: 'vio-box' }, `error: ${str((rd.error as { message?: unknown }).message)}`) : null))
    }
    replace(selection, parts.length ? parts : h('div', { class: 'muted' }, `${oneLine(str(e.type), 40)} at seq ${e.seq}`))
  }

  function prevTurn(): number {
    let r = 0
    for (const s of timeline.turnStarts) if (s < seq) r = s
    return r
  }
  function nextTurn(): number {
    for (const s of timeline.turnStarts) if (s > seq) return s
    return events.length - 1
  }

  document.addEventListener('keydown', (ev) => {
    const tag = (ev.target as HTMLElement | null)?.tagName
    if (tag === 'INPUT' && (ev.target as HTMLInputElement).type === 'number') return
    const k = ev.key
    const stepBy = ev.shiftKey ? 10 : 1
    let to: number | null = null
    if (k === 'ArrowRight') to = seq + stepBy
    else if (k === 'ArrowLeft') to = seq - stepBy
    else if (k === 'PageDown') to = seq + 100
    else if (k === 'PageUp') to = seq - 100
    else if (k === 'Home') to = 0
    else if (k === 'End') to = events.length - 1
    else if (k === ']') to = nextTurn()
    else if (k === '[') to = prevTurn()
    if (to === null) return
    ev.preventDefault()
    select(to, true)
  })

  function runVerify(): void {
    const r = verify(events, d.verifyOptions ?? {})
    violations = r.violations
    violationAt = new Map()
    for (const v of violations) {
      const a = violationAt.get(v.seq) ?? []
      a.push(v)
      violationAt.set(v.seq, a)
    }
    status.textContent = r.ok ? 'verify: ok' : `verify: ${violations.length} violation${violations.length === 1 ? '' : 's'}`
    status.className = r.ok ? 'badge ok' : 'badge bad'
    status.title = violations.slice(0, 20).map((v) => `${v.invariant} at seq ${v.seq}: ${v.message}`).join('\n')
    timeline = buildTimeline(events, violations)
    tlView.set(timeline, events.length)
    eventsList.refresh()
    scheduleShow(false)
  }

  window.turnlogInspector = {
    select: (s) => select(s, true),
    get seq() { return seq },
    get count() { return events.length },
    get violations() { return violations.length },
    get lastShowMs() { return lastShowMs },
    bars: () => tlView.boxes(),
  }

  rebuild(0)
  show(true)
  // the first frame with the state shown: the benchmark's "first paint" (ms since navigation start)
  requestAnimationFrame(() => { document.body.dataset.firstPaintMs = performance.now().toFixed(1) })
  // first paint first; verify (the slowest pass: 1.6 s for 100k events) right after
  setTimeout(() => {
    runVerify()
    document.body.dataset.ready = '1'
  }, 0)

  if (d.mode === 'live') follow_(events.length)

  function follow_(from: number): void {
    let verifyTimer = 0
    let rebuildTimer = 0
    let known = from
    const es = new EventSource(`events?from=${from}`)
    es.addEventListener('message', (m) => {
      let batch: unknown
      try {
        batch = JSON.parse(m.data as string)
      } catch {
        return
      }
      for (const e of Array.isArray(batch) ? batch : [batch]) {
        const ev = e as LogEvent
        if (ev && typeof ev === 'object' && ev.seq === events.length) events.push(ev)
      }
      if (rebuildTimer) return
      rebuildTimer = window.setTimeout(() => {
        rebuildTimer = 0
        const start = known
        known = events.length
        rebuild(start)
        if (follow) seq = events.length - 1
        scheduleShow(follow)
        if (!verifyTimer) verifyTimer = window.setTimeout(() => { verifyTimer = 0; runVerify() }, 500)
      }, 100)
    })
    es.addEventListener('error', () => {
      head.querySelector('.live')?.replaceChildren(document.createTextNode(es.readyState === EventSource.CLOSED ? '○ disconnected' : '● reconnecting'))
    })
    es.addEventListener('open', () => {
      head.querySelector('.live')?.replaceChildren(document.createTextNode('● live'))
    })
  }
}

function kv(k: string, v: string | number, field: string): HTMLElement {
  return h('div', { class: 'kvrow' }, h('span', { class: 'k' }, k), h('span', { class: 'v', data: { field } }, String(v)))
}

function cls(s: string): string {
  return s.replace(/[^a-z0-9-]/gi, '-').slice(0, 30)
}

function pretty(s: string): string {
  try {
    return JSON.stringify(JSON.parse(s), null, 2)
  } catch {
    return s
  }
}

function fmtTime(t: unknown): string {
  return typeof t === 'number' && Number.isFinite(t) ? new Date(t).toISOString().replace('T', ' ').replace('Z', ' UTC') : '?'
}

let t0: number | null = null
function relTime(t: unknown): string {
  return typeof t === 'number' && t0 !== null ? ` (+${fmtMs(t - t0)})` : ''
}

function eventSummary(e: LogEvent): string {
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
