/**
 * `turnlog eval --report`: the golden and its re-run side by side, each as a full timeline (the
 * canvas of timeline.ts on a seq axis, so the two line up event for event) over its whole event
 * list, the first divergence marked in both. The two logs share their seqs up to the divergence (the
 * re-run is a fork of the golden), so one selected seq is shown in both panes; past the end of the
 * shorter log its pane shows its last event. Rows are text only (dom.ts), like every list of the page.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { Violation } from '../../events/invariants/types.js'
import { buildTimeline, str } from '../../replay/timeline.js'
import type { Compare, Divergence } from './data.js'
import { fmtInt, h, oneLine } from './dom.js'
import { eventSummary } from './format.js'
import { createTimeline, type TimelineView } from './timeline.js'
import { VirtualList } from './vlist.js'

export interface CompareView {
  readonly el: HTMLElement
  /** Selects `seq` in both panes (clamped to each log), scrolling the lists when asked. */
  select(seq: number, scroll: boolean): void
  readonly seq: number
}

interface Pane {
  readonly el: HTMLElement
  readonly events: readonly LogEvent[]
  readonly timeline: TimelineView
  readonly list: VirtualList
}

/**
 * The section: `golden` is the page's own log, `c` the re-run, `dv` their first divergence (null:
 * the two agree where both have events). `onPick(seq)` is told of a click in either pane.
 */
export function createCompare(golden: readonly LogEvent[], c: Compare, dv: Divergence | null, onPick: (seq: number) => void): CompareView {
  let seq = dv ? dv.seq : 0
  const pick = (s: number): void => {
    view.select(s, false)
    onPick(s)
  }
  const pane = (role: 'golden' | 'rerun', title: string, file: string, events: readonly LogEvent[]): Pane => {
    const timeline = createTimeline((s) => pick(s), () => 'seq')
    const list = new VirtualList(22, (i) => {
      const e = events[i]!
      const diverged = dv !== null && i === dv.seq
      return h('div', {
        class: diverged ? 'eline diverged' : dv !== null && i > dv.seq ? 'eline after' : 'eline',
        title: diverged ? `first divergence (${dv.kind})` : `seq ${i}`,
        ...(diverged ? { data: { testid: `diverged-${role}` } } : {}),
      },
      h('span', { class: 'seq' }, String(i)), diverged ? h('span', { class: 'vio' }, '≠') : null,
      h('span', { class: 'etype' }, oneLine(str(e.type), 40)), ' ', h('span', { class: 'muted' }, oneLine(eventSummary(e), 120)))
    }, (i) => pick(i), `${role} events`)
    const turns = events.filter((e) => e?.type === 'turn/start').length
    const el = h('div', { class: 'cmp-pane', data: { testid: `compare-${role}` } },
      h('h3', { title: file }, `${title} · ${oneLine(file, 60)} · ${fmtInt(events.length)} events · ${turns} turn${turns === 1 ? '' : 's'}`),
      timeline.canvas, list.el)
    return { el, events, timeline, list }
  }
  const left = pane('golden', c.goldenLabel ?? 'golden (expected)', c.goldenFile ?? '', golden)
  const right = pane('rerun', c.label, c.file, c.events)
  const panes = [left, right]
  for (const p of panes) {
    // the divergence as a mark on each timeline (a violation-shaped triangle where the logs part)
    const marks: Violation[] = dv ? [{ seq: Math.min(dv.seq, Math.max(0, p.events.length - 1)), invariant: 'P4', message: `first divergence (${dv.kind})` }] : []
    p.timeline.set(buildTimeline(p.events, marks), p.events.length)
    p.list.setCount(p.events.length)
  }
  const el = h('section', { class: 'compare', data: { testid: 'compare' } },
    h('h2', null, dv ? `Golden and re-run side by side · they part at seq ${dv.seq}` : 'Golden and re-run side by side · no divergence'),
    h('div', { class: 'cmp-panes' }, left.el, right.el))

  const view: CompareView = {
    el,
    select(s, scroll) {
      seq = Math.max(0, Math.round(s))
      for (const p of panes) {
        if (p.events.length === 0) continue
        const i = Math.min(seq, p.events.length - 1)
        p.list.select(i, scroll)
        p.timeline.setCursor(i)
      }
    },
    get seq() { return seq },
  }
  view.select(seq, true)
  return view
}
