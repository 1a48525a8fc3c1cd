/**
 * The timeline on a canvas: rows for turns, steps, model streams, compactions, parked times (a
 * session that waited for people), one lane per concurrently running tool call, and a row of marks
 * (retries, cancels, failures, repairs, prunes, idle gaps, verify violations, approval requests and
 * decisions, wakeups, child sessions). Wheel zooms around the pointer, drag pans, a click on a bar or a
 * mark selects its seq. Text is drawn with fillText (never parsed). Only what is on screen is drawn.
 */
import type { Bar, Mark, Timeline } from '../../replay/timeline.js'
import { oneLine } from './dom.js'

const ROW_H = 22
const LABEL_W = 84
const COLORS: Record<string, string> = {
  ok: '#3b82f6', failed: '#dc2626', aborted: '#f59e0b', interrupted: '#a855f7', open: '#94a3b8', error: '#dc2626', warn: '#eab308',
}
const KIND_COLORS: Record<string, string> = { turn: '#1e40af', step: '#2563eb', model: '#0891b2', tool: '#059669', compaction: '#7c3aed', parked: '#ca8a04' }
const MARK_COLORS: Record<Mark['kind'], string> = {
  retry: '#f59e0b', cancel: '#ea580c', repair: '#a855f7', prune: '#7c3aed', failure: '#dc2626', violation: '#be123c', steer: '#0ea5e9', resume: '#16a34a', gap: '#64748b',
  approval: '#ca8a04', decision: '#65a30d', schedule: '#0d9488', child: '#4f46e5',
}

export interface TimelineView {
  readonly canvas: HTMLCanvasElement
  set(tl: Timeline, count: number): void
  setCursor(seq: number): void
  draw(): void
  /** What is drawn now, in page coordinates (tests click them). `shown`: the label text painted for it ('' when none). */
  boxes(): Array<{ x: number; y: number; seq: number; kind: string; label: string; mark?: string; shown: string }>
  /** The axis labels drawn now: their value, and their text's left and right edge in canvas pixels (tests check them). */
  ticks(): Array<{ value: number; label: string; left: number; right: number; width: number }>
}

export function createTimeline(onPick: (seq: number, bar: Bar | null) => void, axis: () => 'time' | 'seq'): TimelineView {
  const canvas = document.createElement('canvas')
  canvas.className = 'timeline'
  canvas.tabIndex = -1
  canvas.setAttribute('aria-label', 'timeline: click a bar or a mark to select its seq; wheel zooms, drag pans')
  let tl: Timeline | null = null
  let count = 0
  let cursor = 0
  let view = { x0: 0, x1: 1 } // visible axis range
  let fitted = false
  let rows: string[] = []
  let hits: Array<{ x0: number; x1: number; y0: number; y1: number; seq: number; bar: Bar | null; mark?: Mark; shown: string }> = []
  let tickList: Array<{ value: number; label: string; left: number; right: number; width: number }> = []
  // bars and marks are painted once per view (zoom, pan, size, data) into `base`; moving the cursor
  // only copies it back and draws the cursor line (a scrub on a 100k-event log redrew ~30k bars)
  const base = document.createElement('canvas')
  let baseKey = ''
  let version = 0

  const pos = (seq: number): number => (axis() === 'seq' || !tl ? seq : tl.tx[seq] ?? 0)
  const span = (): { lo: number; hi: number } => {
    if (!tl || count === 0) return { lo: 0, hi: 1 }
    const hi = pos(count - 1)
    return { lo: 0, hi: hi > 0 ? hi : 1 }
  }

  function fit(): void {
    const { lo, hi } = span()
    const pad = (hi - lo) * 0.01 + 0.5
    view = { x0: lo - pad, x1: hi + pad }
  }

  function px(v: number, w: number): number {
    return LABEL_W + ((v - view.x0) / (view.x1 - view.x0)) * (w - LABEL_W - 8)
  }

  // the canvas width, from the ResizeObserver (reading clientWidth forces a layout on every scrub)
  let cssW = 0
  function draw(): void {
    const dpr = window.devicePixelRatio || 1
    const w = cssW || (cssW = canvas.clientWidth) || 800
    const hgt = 18 + rows.length * ROW_H + 4
    canvas.style.height = `${hgt}px`
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(hgt * dpr)) {
      canvas.width = Math.round(w * dpr)
      canvas.height = Math.round(hgt * dpr)
    }
    const key = `${canvas.width}x${canvas.height}|${dpr}|${view.x0}|${view.x1}|${axis()}|${version}`
    if (key !== baseKey) {
      base.width = canvas.width
      base.height = canvas.height
      paintBase(base.getContext('2d')!, dpr, w, hgt)
      baseKey = key
    }
    const g = canvas.getContext('2d')!
    g.setTransform(1, 0, 0, 1, 0, 0)
    g.clearRect(0, 0, canvas.width, canvas.height)
    g.drawImage(base, 0, 0)
    if (!tl) return
    g.setTransform(dpr, 0, 0, dpr, 0, 0)
    const cx = px(pos(cursor), w)
    g.fillStyle = '#e11d48'
    g.fillRect(cx - 1, 14, 2, hgt - 14)
  }

  function paintBase(g: CanvasRenderingContext2D, dpr: number, w: number, hgt: number): void {
    const nRows = rows.length
    g.setTransform(dpr, 0, 0, dpr, 0, 0)
    g.clearRect(0, 0, w, hgt)
    g.font = '11px system-ui, sans-serif'
    g.textBaseline = 'middle'
    hits = []
    // row bands and labels
    rows.forEach((r, i) => {
      const y = 18 + i * ROW_H
      g.fillStyle = i % 2 ? '#f8fafc' : '#f1f5f9'
      g.fillRect(0, y, w, ROW_H)
      g.fillStyle = '#475569'
      g.fillText(r.startsWith('tool') ? `tools ${r === 'tool0' ? '' : `#${Number(r.slice(4)) + 1}`}`.trim() : r, 6, y + ROW_H / 2)
    })
    if (!tl) return
    // axis ticks: round values, none before the session's start (0), each label kept inside the
    // canvas (the last one is drawn left of its tick rather than cut by the edge)
    g.fillStyle = '#64748b'
    tickList = []
    const step = niceStep((view.x1 - view.x0) / 8, axis() === 'seq')
    for (let v = Math.max(0, Math.ceil(view.x0 / step) * step); v <= view.x1; v += step) {
      const x = px(v, w)
      if (x < LABEL_W - 0.5) continue
      const label = axis() === 'seq' ? `#${Math.round(v)}` : fmtAxis(v, step)
      const tw = g.measureText(label).width
      const left = x + 2 + tw <= w - 2 ? x + 2 : x - 2 - tw
      g.fillRect(x, 12, 1, 4)
      g.fillText(label, left, 7)
      tickList.push({ value: v, label, left, right: left + tw, width: w })
    }
    const rowIndex = new Map(rows.map((r, i) => [r, i]))
    const painted: Array<{ x1: number; color: string } | undefined> = []
    // where the next bar of the same row starts: a label drawn beside a short bar stops before it
    const nextStart = new Map<Bar, number>()
    const lastOfRow = new Map<string, Bar>()
    for (const b of [...tl.bars].sort((a, c) => pos(a.seq) - pos(c.seq))) {
      const prev = lastOfRow.get(b.row)
      if (prev !== undefined) nextStart.set(prev, pos(b.seq))
      lastOfRow.set(b.row, b)
    }
    for (const b of tl.bars) {
      const ri = rowIndex.get(b.row)
      if (ri === undefined) continue
      const a = pos(b.seq)
      const z = pos(b.endSeq)
      if (z < view.x0 || a > view.x1) continue
      let x0 = px(a, w)
      let x1 = px(z, w)
      if (x1 - x0 < 3) x1 = x0 + 3
      x0 = Math.max(x0, LABEL_W - 2)
      const y = 18 + ri * ROW_H + 3
      const color = b.status === 'ok' ? KIND_COLORS[b.kind]! : COLORS[b.status] ?? '#64748b'
      const hit = { x0, x1, y0: y, y1: y + ROW_H - 6, seq: b.seq, bar: b, shown: '' }
      hits.push(hit)
      // zoomed out, thousands of bars share a few pixels: one that adds no pixel of a new colour
      // to its row is not painted again (its hit box stays)
      const seen = painted[ri]
      if (seen && x1 <= seen.x1 + 0.5 && seen.color === color && b.status !== 'open') continue
      if (!seen || x1 > seen.x1 || seen.color !== color) painted[ri] = { x1, color }
      g.fillStyle = color
      g.globalAlpha = b.status === 'open' ? 0.55 : 0.9
      g.fillRect(x0, y, x1 - x0, ROW_H - 6)
      g.globalAlpha = 1
      const text = oneLine(b.label, 80)
      if (x1 - x0 > 40) {
        // inside the bar; a label longer than the bar ends in an ellipsis (the whole one is the tooltip)
        const fitted = fitText(g, text, x1 - x0 - 8)
        g.fillStyle = '#fff'
        g.fillText(fitted, x0 + 4, y + (ROW_H - 6) / 2)
        hit.shown = fitted
      } else if (b.status !== 'ok' || b.kind === 'turn') {
        // a short bar that says something (a blocked or failed turn, an aborted call): its label beside it
        const next = nextStart.get(b)
        const limit = next === undefined ? w - 6 : Math.min(w - 6, px(next, w) - 4)
        const fitted = limit - x1 - 3 >= 24 ? fitText(g, text, Math.min(220, limit - x1 - 3)) : ''
        if (fitted !== '') {
          g.fillStyle = '#334155'
          g.fillText(fitted, x1 + 3, y + (ROW_H - 6) / 2)
          hit.shown = fitted
        }
      }
    }
    const mi = rowIndex.get('marks')!
    const my = 18 + mi * ROW_H + ROW_H / 2
    const visible = tl.marks.filter((m) => { const v = pos(m.seq); return v >= view.x0 && v <= view.x1 })
    visible.forEach((m, i) => {
      const x = px(pos(m.seq), w)
      g.fillStyle = MARK_COLORS[m.kind]
      g.beginPath()
      if (m.kind === 'violation') { g.moveTo(x, my - 7); g.lineTo(x + 6, my + 6); g.lineTo(x - 6, my + 6) } else if (m.kind === 'gap') { g.rect(x - 1, 18, 2, nRows * ROW_H) } else { g.arc(x, my, 5, 0, Math.PI * 2) }
      g.fill()
      // its label beside it, as far as the next mark leaves room (the whole label is the tooltip)
      const next = visible[i + 1]
      const room = (next !== undefined ? px(pos(next.seq), w) - 8 : w - 4) - (x + 8)
      const shown = room >= 24 ? fitText(g, oneLine(m.label || m.kind, 60), room) : ''
      if (shown !== '') {
        g.fillStyle = '#334155'
        g.fillText(shown, x + 8, my)
      }
      hits.push({ x0: x - 6, x1: x + 6, y0: my - 8, y1: my + 8, seq: m.seq, bar: null, mark: m, shown })
    })
  }

  /** `text`, cut to `max` pixels with an ellipsis ('' when not even that fits). */
  function fitText(g: CanvasRenderingContext2D, text: string, max: number): string {
    if (g.measureText(text).width <= max) return text
    let lo = 0
    let hi = text.length
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (g.measureText(`${text.slice(0, mid)}…`).width <= max) lo = mid
      else hi = mid - 1
    }
    return lo === 0 ? '' : `${text.slice(0, lo)}…`
  }

  /** A round step near `raw`: 1, 2 or 5 × 10^n (whole seqs on the seq axis). */
  function niceStep(raw: number, whole: boolean): number {
    const r = raw > 0 && Number.isFinite(raw) ? raw : 1
    const p = Math.pow(10, Math.floor(Math.log10(r)))
    const m = r / p
    const step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p
    return whole ? Math.max(1, Math.round(step)) : step
  }

  /** The bar or mark under a point, or null. */
  function hitAt(x: number, y: number): (typeof hits)[number] | null {
    for (let i = hits.length - 1; i >= 0; i--) {
      const hh = hits[i]!
      if (x >= hh.x0 && x <= hh.x1 && y >= hh.y0 && y <= hh.y1) return hh
    }
    return null
  }

  function fmtAxis(v: number, step: number): string {
    if (v < 1000 || step < 100) return `${Math.round(v)}ms`
    return v < 60_000 ? `${(v / 1000).toFixed(step < 1000 ? 1 : 0)}s` : `${(v / 60_000).toFixed(1)}m`
  }

  canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault()
    const w = canvas.clientWidth
    const f = (ev.offsetX - LABEL_W) / (w - LABEL_W - 8)
    const at = view.x0 + f * (view.x1 - view.x0)
    const k = ev.deltaY > 0 ? 1.25 : 0.8
    view = { x0: at - (at - view.x0) * k, x1: at + (view.x1 - at) * k }
    draw()
  }, { passive: false })
  let drag: { x: number; v0: number; v1: number; moved: boolean } | null = null
  canvas.addEventListener('pointerdown', (ev) => { drag = { x: ev.clientX, v0: view.x0, v1: view.x1, moved: false } })
  canvas.addEventListener('pointermove', (ev) => {
    if (!drag) {
      // the tooltip: the whole label of the bar or mark under the pointer
      const hh = hitAt(ev.offsetX, ev.offsetY)
      const tip = hh === null ? '' : hh.mark !== undefined ? `${hh.mark.kind}: ${hh.mark.label} (seq ${hh.seq})` : `${hh.bar?.label ?? ''} (seq ${hh.seq})`
      if (canvas.title !== tip) canvas.title = tip
      return
    }
    const dx = ev.clientX - drag.x
    if (Math.abs(dx) > 3) drag.moved = true
    if (!drag.moved) return
    const per = (drag.v1 - drag.v0) / (canvas.clientWidth - LABEL_W - 8)
    view = { x0: drag.v0 - dx * per, x1: drag.v1 - dx * per }
    draw()
  })
  canvas.addEventListener('pointerup', (ev) => {
    const moved = drag?.moved
    drag = null
    if (moved) return
    const r = canvas.getBoundingClientRect()
    const x = ev.clientX - r.left
    const y = ev.clientY - r.top
    // the topmost (last drawn) hit wins; marks are drawn after bars
    for (let i = hits.length - 1; i >= 0; i--) {
      const hh = hits[i]!
      if (x >= hh.x0 && x <= hh.x1 && y >= hh.y0 && y <= hh.y1) return onPick(hh.seq, hh.bar)
    }
    if (x > LABEL_W && count > 0) {
      // a click on the axis moves the cursor to the nearest seq
      const v = view.x0 + ((x - LABEL_W) / (canvas.clientWidth - LABEL_W - 8)) * (view.x1 - view.x0)
      let lo = 0
      let hi = count - 1
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if (pos(mid) < v) lo = mid + 1
        else hi = mid
      }
      onPick(lo, null)
    }
  })
  new ResizeObserver((entries) => {
    cssW = entries[entries.length - 1]?.contentRect.width ?? 0
    draw()
  }).observe(canvas)

  return {
    canvas,
    set(t, n) {
      const wasAtEnd = !fitted || view.x1 >= span().hi
      tl = t
      count = n
      version++
      // the parked row only for a session that waited for people (docs/spec/lifecycle.md §9)
      const parked = t.bars.some((b) => b.row === 'parked') ? ['parked'] : []
      rows = ['turn', 'step', 'model', 'compaction', ...parked, ...Array.from({ length: t.lanes }, (_, i) => `tool${i}`), 'marks']
      if (!fitted || wasAtEnd) fit()
      fitted = true
      draw()
    },
    setCursor(seq) {
      cursor = seq
      // keep the cursor on screen
      const v = pos(seq)
      if (v < view.x0 || v > view.x1) {
        const half = (view.x1 - view.x0) / 2
        view = { x0: v - half, x1: v + half }
      }
      draw()
    },
    draw,
    boxes() {
      const r = canvas.getBoundingClientRect()
      return hits.map((hh) => ({
        x: r.left + window.scrollX + (hh.x0 + hh.x1) / 2, y: r.top + window.scrollY + (hh.y0 + hh.y1) / 2,
        seq: hh.seq, kind: hh.bar?.kind ?? 'mark', label: hh.bar?.label ?? hh.mark?.label ?? '',
        ...(hh.mark !== undefined ? { mark: hh.mark.kind } : {}), shown: hh.shown,
      }))
    },
    ticks() {
      return tickList.slice()
    },
  }
}
