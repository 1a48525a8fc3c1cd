/** The scrubber row (range, ±1, ±turn, a seq box, the axis switch) and the keyboard: ← → ±1,
 * ⇧ ±10, PgUp/PgDn ±100, [ ] turns, Home/End. Every move goes through `select`. */
import { h } from './dom.js'

export interface ScrubberDeps {
  select(seq: number): void
  seq(): number
  count(): number
  prevTurn(): number
  nextTurn(): number
  toggleAxis(): 'time' | 'seq'
}

export interface Scrubber {
  readonly el: HTMLElement
  setMax(max: number): void
  setValue(seq: number): void
}

export function createScrubber(d: ScrubberDeps): Scrubber {
  const range = h('input', { class: 'range', ariaLabel: 'seq scrubber' })
  range.type = 'range'
  range.min = '0'
  range.step = '1'
  range.addEventListener('input', () => d.select(Number(range.value)))
  const seqBox = h('input', { class: 'seqbox', ariaLabel: 'seq', data: { testid: 'seq-input' } })
  seqBox.type = 'number'
  seqBox.addEventListener('change', () => d.select(Number(seqBox.value)))
  const axisBtn = h('button', { onclick: () => { axisBtn.textContent = `axis: ${d.toggleAxis()}` } }, 'axis: time')
  const el = h('div', { class: 'scrub' },
    h('button', { onclick: () => d.select(d.prevTurn()), title: 'previous turn ([)' }, '« turn'),
    h('button', { onclick: () => d.select(d.seq() - 1), title: 'previous event (←)' }, '◀'),
    range,
    h('button', { onclick: () => d.select(d.seq() + 1), title: 'next event (→)' }, '▶'),
    h('button', { onclick: () => d.select(d.nextTurn()), title: 'next turn (])' }, 'turn »'),
    h('label', { class: 'muted' }, 'seq ', seqBox),
    axisBtn,
    h('span', { class: 'muted keys' }, '← → ±1 · ⇧ ±10 · PgUp/PgDn ±100 · [ ] turns · Home/End'),
  )
  document.addEventListener('keydown', (ev) => {
    const target = ev.target as HTMLInputElement | null
    if (target?.tagName === 'INPUT' && target.type === 'number') return
    const seq = d.seq()
    const by = ev.shiftKey ? 10 : 1
    const to: Record<string, () => number> = {
      ArrowRight: () => seq + by, ArrowLeft: () => seq - by, PageDown: () => seq + 100, PageUp: () => seq - 100,
      Home: () => 0, End: () => d.count() - 1, ']': d.nextTurn, '[': d.prevTurn,
    }
    const f = to[ev.key]
    if (!f) return
    ev.preventDefault()
    d.select(f())
  })
  return {
    el,
    setMax: (max) => { range.max = String(Math.max(0, max)) },
    setValue: (seq) => {
      range.value = String(seq)
      seqBox.value = String(seq)
    },
  }
}
