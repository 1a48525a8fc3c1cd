/**
 * The inspector page (issue "See a session"): a timeline tied to the state at any seq. Layout:
 * header · divergence (reexec) · golden and re-run side by side (eval --report, compare.ts) ·
 * timeline · tokens per request · scrubber · three columns: transcript | state at seq
 * (state-view.ts) | events (raw log, violations marked) and the selection.
 *
 * Order of work, so a big log paints before it is folded and scrubs in milliseconds (figures:
 * decision record "inspector" (docs/decisions/ in the repository), "The inspector on big logs"):
 * 1. inflate and parse the embedded log (data.ts), build the timeline (positions only, one pass, no
 *    fold) and paint the shell, the timeline, the tokens chart and the events list: first paint;
 * 2. in the background (background.ts, slices between frames): fold the log into state checkpoints
 *    every N events (cursor.ts), showing the selected seq as soon as its checkpoint exists; then the
 *    transcript from the final state; then `verify` (incremental), whose violations mark the
 *    timeline and the events list.
 * A scrub folds at most N events from the nearest checkpoint, then redraws the panels.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { Violation } from '../../events/invariants/types.js'
import { Verifier } from '../../replay/verify.js'
import { buildTimeline, str, type Timeline } from '../../replay/timeline.js'
import { Background } from './background.js'
import { createCompare, type CompareView } from './compare.js'
import { checkpointEveryFor, StateCursor } from './cursor.js'
import { readPageData, type PageData } from './data.js'
import { fmtInt, h, oneLine, replace } from './dom.js'
import { cls, eventSummary } from './format.js'
import { createHeader, divergenceSection, reexecOkSection } from './header.js'
import { follow } from './live.js'
import { createScrubber } from './scrubber.js'
import { StateView } from './state-view.js'
import { createTimeline } from './timeline.js'
import { createTokens } from './tokens.js'
import { transcriptLines, type Line } from './transcript.js'
import { VirtualList } from './vlist.js'

declare global {
  interface Window {
    /** For tests, the benchmark and the console. */
    turnlogInspector?: {
      select(seq: number): void
      readonly seq: number
      readonly count: number
      readonly violations: number
      /** How long the last state display took (fold + DOM), ms. */
      readonly lastShowMs: number
      /** How many events the last state display folded (≤ checkpointEvery once the fold is done). */
      readonly lastFolded: number
      readonly checkpointEvery: number
      readonly checkpoints: number
      /** The timeline's bars and marks as drawn, in page coordinates. */
      bars(): Array<{ x: number; y: number; seq: number; kind: string; label: string; mark?: string; shown: string }>
      /** The timeline's axis labels as drawn (value, text, left and right edge, canvas width). */
      ticks(): Array<{ value: number; label: string; left: number; right: number; width: number }>
      /** `eval --report`: the seq selected in the side-by-side panes (null without a re-run). */
      readonly compareSeq: number | null
    }
  }
}

const app = document.getElementById('app')!
/** Milestones in ms since navigation start, as data-* of <body> (the benchmark reads them). */
const mark = (name: string): void => { document.body.dataset[name] = performance.now().toFixed(1) }
mark('scriptMs')
readPageData().then(
  (data) => {
    mark('parsedMs')
    if (data) start(data)
    else replace(app, h('div', { class: 'empty' }, 'No log embedded. Run: turnlog report LOG -o report.html, or turnlog inspect LOG.'))
  },
  (err: unknown) => replace(app, h('div', { class: 'empty' }, `The embedded log could not be read: ${(err as Error)?.message ?? String(err)}`)),
)

function start(d: PageData): void {
  const events: LogEvent[] = d.events
  const t0 = typeof events[0]?.time === 'number' ? events[0].time : null
  let violations: Violation[] = []
  let violationAt = new Map<number, Violation[]>()
  let timeline: Timeline
  let seq = events.length ? Math.min(Math.max(0, d.select ?? events.length - 1), events.length - 1) : -1
  let follows = d.mode === 'live' && d.select === undefined
  let axis: 'time' | 'seq' = 'time'
  const cursor = new StateCursor(() => events, d.checkpointEvery ?? checkpointEveryFor(events.length, d.mode === 'live'))
  const verifier = new Verifier(d.verifyOptions ?? {})
  const calls = new Map<string, { call?: number; result?: number }>()
  let indexed = 0
  const indexCalls = (): void => {
    for (; indexed < events.length; indexed++) {
      const e = events[indexed]!
      if (e.type !== 'tool/call' && e.type !== 'tool/result') continue
      const id = str((e.data as { callId?: unknown }).callId)
      const x = calls.get(id) ?? {}
      if (e.type === 'tool/call') x.call = indexed
      else x.result = indexed
      calls.set(id, x)
    }
  }

  const select = (s: number): void => {
    if (events.length === 0) return
    seq = Math.min(Math.max(0, Math.round(Number.isFinite(s) ? s : 0)), events.length - 1)
    follows = d.mode === 'live' && seq === events.length - 1
    compare?.select(seq, true)
    scheduleShow(true)
  }
  // a click in the re-run's pane past the golden's end selects it there; the golden shows its last
  const compare: CompareView | null = d.compare ? createCompare(events, d.compare, d.divergence ?? null, (s) => {
    seq = Math.min(Math.max(0, s), events.length - 1)
    scheduleShow(true)
  }) : null
  if (compare) {
    document.body.classList.add('with-compare')
    compare.select(seq, true)
  }

  const header = createHeader(d)
  const tlView = createTimeline((s) => select(s), () => axis)
  const tokens = createTokens(select)
  const scrubber = createScrubber({
    select, seq: () => seq, count: () => events.length,
    prevTurn: () => { let r = 0; for (const s of timeline.turnStarts) if (s < seq) r = s; return r },
    nextTurn: () => timeline.turnStarts.find((s) => s > seq) ?? events.length - 1,
    toggleAxis: () => { axis = axis === 'time' ? 'seq' : 'time'; tlView.set(timeline, events.length); tlView.setCursor(seq); return axis },
  })
  let lines: Line[] = []
  const lineOfSeq: number[] = []
  const transcript = new VirtualList(22, (i) => {
    const l = lines[i]!
    return h('div', { class: `tline k-${cls(l.kind)}`, style: `padding-left:${8 + l.depth * 16}px`, title: `seq ${l.seq}` },
      h('span', { class: 'seq' }, String(l.seq)), h('span', { class: 'kind' }, l.kind), ' ', l.text)
  }, (i) => select(lines[i]!.seq), 'transcript')
  const transcriptNote = h('div', { class: 'muted', data: { testid: 'transcript-note' } }, 'folding the log…')
  const eventsList = new VirtualList(22, (i) => {
    const e = events[i]!
    const v = violationAt.get(i)
    return h('div', { class: v ? 'eline violation' : 'eline', title: v ? v.map((x) => `${x.invariant}: ${x.message}`).join('\n') : `seq ${i}` },
      h('span', { class: 'seq' }, String(i)), h('span', { class: 'etype' }, oneLine(str(e.type), 40)),
      v ? h('span', { class: 'vio' }, v.map((x) => x.invariant).join(' ')) : null,
      ' ', h('span', { class: 'muted' }, oneLine(eventSummary(e), 140)))
  }, (i) => select(i), 'events')
  const kids = d.family?.children ?? {}
  const state = new StateView({
    select, events, calls, violationsAt: (s) => violationAt.get(s),
    childLink: (id) => (Object.hasOwn(kids, id) ? kids[id] : undefined),
  })

  replace(app,
    header.el,
    d.divergence ? divergenceSection(d.divergence) : d.reexec?.ok ? reexecOkSection(d.reexec) : null,
    compare?.el,
    h('section', { class: 'tl-wrap' }, tlView.canvas, tokens.canvas, scrubber.el),
    h('main', { class: 'cols' },
      h('section', { class: 'col' }, h('h2', null, 'Transcript'), transcriptNote, transcript.el),
      state.column,
      h('section', { class: 'col' }, h('h2', null, 'Events'), eventsList.el, ...state.selectionEls),
    ),
  )

  /** After new events (or violations): the timeline, the lists' lengths, the counts. No fold. */
  function layout(): void {
    indexCalls()
    timeline = buildTimeline(events, violations)
    eventsList.setCount(events.length)
    scrubber.setMax(events.length - 1)
    header.counts.textContent = `${fmtInt(events.length)} events · ${timeline.turnStarts.length} turn${timeline.turnStarts.length === 1 ? '' : 's'}`
    tlView.set(timeline, events.length)
    tokens.set(timeline)
  }

  let frame = 0
  let scrollNext = false
  function scheduleShow(scroll: boolean): void {
    scrollNext ||= scroll
    if (frame) return
    frame = requestAnimationFrame(() => {
      frame = 0
      show(scrollNext)
      scrollNext = false
    })
  }

  let lastShowMs = 0
  let shownSeq = -1
  function show(scroll: boolean): void {
    if (seq < 0) return
    const began = performance.now()
    scrubber.setValue(seq)
    tlView.setCursor(seq)
    tokens.setCursor(seq)
    eventsList.select(seq, scroll)
    let li = -1
    for (let s = seq; s >= 0 && li < 0; s--) li = lineOfSeq[s] ?? -1
    transcript.select(li, scroll)
    if (!cursor.ready(seq)) {
      // the background fold shows it when the checkpoint before it exists
      state.folding(seq, cursor.covered, events.length)
      return
    }
    state.show(seq, cursor.at(seq), t0)
    shownSeq = seq
    // tests wait for this: the panels show the state at this seq
    document.body.dataset.seq = String(seq)
    if (document.body.dataset.stateMs === undefined) mark('stateMs')
    lastShowMs = performance.now() - began
  }

  // ---- background: checkpoints, then the transcript, then verify
  let transcriptAt = -1
  let verifiedAt = -1
  function work(): boolean {
    if (cursor.step()) {
      if (shownSeq !== seq && cursor.ready(seq)) scheduleShow(false)
      return true
    }
    if (shownSeq !== seq) scheduleShow(false)
    if (transcriptAt !== events.length && events.length > 0) {
      transcriptAt = events.length
      lines = transcriptLines(cursor.at(events.length - 1).transcript)
      lineOfSeq.length = 0
      lines.forEach((l, i) => { if (lineOfSeq[l.seq] === undefined) lineOfSeq[l.seq] = i })
      transcriptNote.remove()
      transcript.setCount(lines.length)
      mark('transcriptMs')
      scheduleShow(false)
      return true
    }
    if (verifier.eventCount < events.length) {
      const end = Math.min(events.length, verifier.eventCount + cursor.every)
      for (let i = verifier.eventCount; i < end; i++) verifier.push(events[i])
      return true
    }
    if (verifiedAt !== events.length) {
      verifiedAt = events.length
      showVerdict()
      mark('verifiedMs')
      document.body.dataset.ready = '1'
    }
    return false
  }
  const background = new Background(work)

  function showVerdict(): void {
    const r = verifier.result()
    violations = r.violations
    violationAt = new Map()
    for (const v of violations) {
      const a = violationAt.get(v.seq) ?? []
      a.push(v)
      violationAt.set(v.seq, a)
    }
    const n = violations.length
    header.status.textContent = r.ok ? 'verify: ok' : `verify: ${n} violation${n === 1 ? '' : 's'}`
    header.status.className = r.ok ? 'badge ok' : 'badge bad'
    header.status.title = violations.slice(0, 20).map((v) => `${v.invariant} at seq ${v.seq}: ${v.message}`).join('\n')
    if (n > 0) {
      timeline = buildTimeline(events, violations)
      tlView.set(timeline, events.length)
    }
    eventsList.refresh()
    scheduleShow(false)
  }

  window.turnlogInspector = {
    select,
    get seq() { return seq },
    get count() { return events.length },
    get violations() { return violations.length },
    get lastShowMs() { return lastShowMs },
    get lastFolded() { return cursor.lastFolded },
    get checkpointEvery() { return cursor.every },
    get checkpoints() { return cursor.checkpoints },
    bars: () => tlView.boxes(),
    ticks: () => tlView.ticks(),
    get compareSeq() { return compare ? compare.seq : null },
  }

  layout()
  show(true)
  // the first frame with the shell, the timeline and the lists (before any fold): "first paint"
  // the fold starts after that frame, so it never delays the first paint
  requestAnimationFrame(() => {
    mark('firstPaintMs')
    setTimeout(() => background.kick(), 0)
  })

  if (d.mode === 'live') {
    let pending = 0
    follow(events, () => {
      // coalesce bursts: one layout per 100 ms of appends
      if (pending) return
      pending = window.setTimeout(() => {
        pending = 0
        layout()
        if (follows) seq = events.length - 1
        scheduleShow(follows)
        background.kick()
      }, 100)
    }, header.setLive)
  }
}
