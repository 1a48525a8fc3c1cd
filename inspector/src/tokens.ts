/**
 * Tokens per request over the session (input stacked with output), compaction summaries in violet,
 * compaction ends as violet lines; requests up to the selected seq bright, later ones pale. Both
 * colourings are painted once per data/size into two layers; moving the cursor composites them
 * (bright left of the cursor, pale right), so a scrub does not repaint thousands of bars.
 */
import type { Timeline } from '../../replay/timeline.js'
import { fmtInt } from './dom.js'

const LABEL_W = 84

export interface TokensView {
  readonly canvas: HTMLCanvasElement
  set(tl: Timeline): void
  setCursor(seq: number): void
}

export function createTokens(onPick: (seq: number) => void): TokensView {
  const canvas = document.createElement('canvas')
  canvas.className = 'tokens'
  canvas.setAttribute('aria-label', 'tokens per request; violet: compaction')
  const bright = document.createElement('canvas')
  const pale = document.createElement('canvas')
  let tl: Timeline | null = null
  let cursor = 0
  let key = ''
  let version = 0
  let hits: Array<{ x0: number; x1: number; seq: number }> = []
  let bw = 1

  canvas.addEventListener('click', (ev) => {
    const hit = hits.find((t) => ev.offsetX >= t.x0 && ev.offsetX <= t.x1)
    if (hit) onPick(hit.seq)
  })

  function paint(layer: HTMLCanvasElement, lit: boolean, dpr: number, w: number, hgt: number): void {
    layer.width = canvas.width
    layer.height = canvas.height
    const g = layer.getContext('2d')!
    g.setTransform(dpr, 0, 0, dpr, 0, 0)
    g.font = '11px system-ui, sans-serif'
    g.fillStyle = '#475569'
    g.fillText('tokens per', 6, 12)
    g.fillText('request', 6, 25)
    const pts = tl?.tokens ?? []
    if (pts.length === 0) {
      g.fillText('no requests yet', LABEL_W, hgt / 2)
      canvas.setAttribute('aria-label', 'tokens per request: no requests yet')
      return
    }
    let max = 0
    for (const p of pts) max = Math.max(max, p.input + p.output)
    if (max === 0) {
      // requests without usage (an imported log, a provider that reports none): nothing to scale
      const note = `${fmtInt(pts.length)} request${pts.length === 1 ? '' : 's'}, no token usage recorded`
      g.fillText(note, LABEL_W, hgt / 2)
      canvas.setAttribute('aria-label', `tokens per request: ${note}`)
      return
    }
    canvas.setAttribute('aria-label', `tokens per request (max ${fmtInt(max)}); violet: compaction`)
    g.fillText(`max ${fmtInt(max)}`, 6, 38)
    bw = Math.min(28, (w - LABEL_W - 8) / pts.length)
    const top = 8
    const base = hgt - 4
    let ci = 0
    const compactions = tl!.compactionSeqs
    const out: typeof hits = []
    // more requests than pixels: one column per pixel, the tallest request of the column (and
    // violet if any of them is a compaction): ~1,400 rectangles instead of 2 × 12,000 at 100k events
    const cols = bw < 1
    let col = -1
    let peak = { input: 0, output: 0, compaction: false, seq: 0, x: 0 }
    const bar = (p: { input: number; output: number; compaction: boolean }, x: number, width: number): void => {
      const hi = (p.input / max) * (base - top)
      const ho = (p.output / max) * (base - top)
      g.fillStyle = p.compaction ? '#7c3aed' : lit ? '#3b82f6' : '#bfdbfe'
      g.fillRect(x, base - hi, width, hi)
      g.fillStyle = p.compaction ? '#c4b5fd' : lit ? '#0891b2' : '#a5f3fc'
      g.fillRect(x, base - hi - ho, width, ho)
    }
    pts.forEach((p, i) => {
      const x = LABEL_W + i * bw
      if (cols) {
        const c = Math.floor(i * bw)
        if (c !== col) {
          if (col >= 0) bar(peak, peak.x, 1)
          col = c
          peak = { input: 0, output: 0, compaction: false, seq: p.seq, x: LABEL_W + c }
          out.push({ x0: LABEL_W + c, x1: LABEL_W + c + 1, seq: p.seq })
        }
        if (p.input + p.output > peak.input + peak.output) { peak.input = p.input; peak.output = p.output }
        peak.compaction ||= p.compaction
      } else {
        bar(p, x, Math.max(1, bw - 1))
        out.push({ x0: x, x1: x + Math.max(2, bw), seq: p.seq })
      }
      while (ci < compactions.length && compactions[ci]! <= p.seq) {
        g.fillStyle = '#7c3aed'
        g.fillRect(x - 1, top, 2, base - top)
        ci++
      }
    })
    if (cols && col >= 0) bar(peak, peak.x, 1)
    hits = out
  }

  // sizes from the ResizeObserver: reading clientWidth/Height forces a layout on every scrub
  let size: { w: number; h: number } | null = null
  function draw(): void {
    const dpr = window.devicePixelRatio || 1
    size ??= { w: canvas.clientWidth, h: canvas.clientHeight }
    const w = size.w || 800
    const hgt = size.h || 90
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(hgt * dpr)) {
      canvas.width = Math.round(w * dpr)
      canvas.height = Math.round(hgt * dpr)
    }
    const k = `${canvas.width}x${canvas.height}|${dpr}|${version}`
    if (k !== key) {
      paint(bright, true, dpr, w, hgt)
      paint(pale, false, dpr, w, hgt)
      key = k
    }
    const g = canvas.getContext('2d')!
    g.setTransform(1, 0, 0, 1, 0, 0)
    g.clearRect(0, 0, canvas.width, canvas.height)
    g.drawImage(pale, 0, 0)
    // requests are in log order: the lit ones are a prefix, so bright is a clip from the left
    const pts = tl?.tokens ?? []
    let lo = 0
    let hi = pts.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (pts[mid]!.seq <= cursor) lo = mid + 1
      else hi = mid
    }
    const cut = Math.round((LABEL_W + lo * bw) * dpr)
    if (lo > 0) g.drawImage(bright, 0, 0, cut, canvas.height, 0, 0, cut, canvas.height)
  }

  new ResizeObserver((entries) => {
    const r = entries[entries.length - 1]?.contentRect
    if (r) size = { w: r.width, h: r.height }
    draw()
  }).observe(canvas)

  return {
    canvas,
    set(t) {
      tl = t
      version++
      draw()
    },
    setCursor(seq) {
      cursor = seq
      draw()
    },
  }
}
