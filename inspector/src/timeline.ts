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
  /** What is drawn now, in page coordinates (tests click them). */
  boxes(): Array<{ x: number; y: number; seq: number; kind: string; label: string; mark?: string }>
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
  let hits: Array<{ x0: number; x1: number; y0: number; y1: number; seq: number; bar: Bar | null; mark?: Mark }> = []
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
    // axis ticks
    g.fillStyle = '#64748b'
    const ticks = 8
    for (let k = 0; k <= ticks; k++) {
      const v = view.x0 + ((view.x1 - view.x0) * k) / ticks
      const x = px(v, w)
      g.fillRect(x, 12, 1, 4)
      g.fillText(axis() === 'seq' ? `#${Math.round(v)}` : fmtAxis(v), x + 2, 7)
    }
    const rowIndex = new Map(rows.map((r, i) => [r, i]))
    const painted: Array<{ x1: number; color: string } | undefined> = []
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
      hits.push({ x0, x1, y0: y, y1: y + ROW_H - 6, seq: b.seq, bar: b })
      // zoomed out, thousands of bars share a few pixels: one that adds no pixel of a new colour
      // to its row is not painted again (its hit box stays)
      const seen = painted[ri]
      if (seen && x1 <= seen.x1 + 0.5 && seen.color === color && b.status !== 'open') continue
      if (!seen || x1 > seen.x1 || seen.color !== color) painted[ri] = { x1, color }
      g.fillStyle = color
      g.globalAlpha = b.status === 'open' ? 0.55 : 0.9
      g.fillRect(x0, y, x1 - x0, ROW_H - 6)
      g.globalAlpha = 1
      if (x1 - x0 > 40) {
        g.save()
        g.beginPath()
        g.rect(x0, y, x1 - x0 - 2, ROW_H - 6)
        g.clip()
        g.fillStyle = '#fff'
        g.fillText(oneLine(b.label, 80), x0 + 4, y + (ROW_H - 6) / 2)
        g.restore()
      }
    }
    const mi = rowIndex.get('marks')!
    const my = 18 + mi * ROW_H + ROW_H / 2
    for (const m of tl.marks) {
      const v = pos(m.seq)
      if (v < view.x0 || v > view.x1) continue
      const x = px(v, w)
      g.fillStyle = MARK_COLORS[m.kind]
      g.beginPath()
      if (m.kind === 'violation') { g.moveTo(x, my - 7); g.lineTo(x + 6, my + 6); g.lineTo(x - 6, my + 6) } else if (m.kind === 'gap') { g.rect(x - 1, 18, 2, nRows * ROW_H) } else { g.arc(x, my, 5, 0, Math.PI * 2) }
      g.fill()
      hits.push({ x0: x - 6, x1: x + 6, y0: my - 8, y1: my + 8, seq: m.seq, bar: null, mark: m })
    }
  }

  function fmtAxis(v: number): string {
    return v < 1000 ? `${Math.round(v)}ms` : v < 60_000 ? `${(v / 1000).toFixed(1)}s` : `${(v / 60_000).toFixed(1)}m`
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
    if (!drag) return
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
        ...(hh.mark !== undefined ? { mark: hh.mark.kind } : {}),
      }))
    },
  }
}
