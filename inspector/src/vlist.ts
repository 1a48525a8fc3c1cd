/**
 * A virtualized list: fixed-height rows, only the visible ones (plus a margin) exist in the DOM,
 * so a 100k-event log scrolls like a 10-event one. `render(i)` builds row i (text only, dom.ts).
 */
import { h } from './dom.js'

export class VirtualList {
  readonly el: HTMLDivElement
  readonly #inner: HTMLDivElement
  #count = 0
  #first = -1
  #last = -1
  #selected = -1
  #frame = 0

  constructor(
    private readonly rowHeight: number,
    private readonly render: (i: number) => HTMLElement,
    private readonly onPick: (i: number) => void,
    label: string,
  ) {
    this.#inner = h('div', { class: 'vlist-inner' })
    this.el = h('div', { class: 'vlist', role: 'listbox', ariaLabel: label, tabindex: 0 }, this.#inner)
    this.el.addEventListener('scroll', () => this.#schedule())
    this.el.addEventListener('click', (ev) => {
      const row = (ev.target as HTMLElement).closest<HTMLElement>('[data-row]')
      if (row) this.onPick(Number(row.dataset.row))
    })
    new ResizeObserver(() => this.#schedule()).observe(this.el)
  }

  setCount(n: number): void {
    this.#count = n
    this.#inner.style.height = `${n * this.rowHeight}px`
    this.refresh()
  }

  /** Rebuilds the visible rows (after the data behind them changed). */
  refresh(): void {
    this.#first = -1
    this.#draw()
  }

  select(i: number, scroll: boolean): void {
    this.#selected = i
    if (scroll && i >= 0) {
      const top = i * this.rowHeight
      const view = this.el.clientHeight
      if (top < this.el.scrollTop || top + this.rowHeight > this.el.scrollTop + view) {
        this.el.scrollTop = Math.max(0, top - view / 2)
      }
    }
    this.refresh()
  }

  #schedule(): void {
    if (this.#frame) return
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0
      this.#draw()
    })
  }

  #draw(): void {
    const view = this.el.clientHeight || 400
    const first = Math.max(0, Math.floor(this.el.scrollTop / this.rowHeight) - 10)
    const last = Math.min(this.#count, Math.ceil((this.el.scrollTop + view) / this.rowHeight) + 10)
    if (first === this.#first && last === this.#last) return
    this.#first = first
    this.#last = last
    const frag = document.createDocumentFragment()
    for (let i = first; i < last; i++) {
      const row = this.render(i)
      row.dataset.row = String(i)
      row.classList.add('vrow')
      if (i === this.#selected) row.classList.add('selected')
      row.style.top = `${i * this.rowHeight}px`
      row.style.height = `${this.rowHeight}px`
      frag.appendChild(row)
    }
    while (this.#inner.firstChild) this.#inner.removeChild(this.#inner.firstChild)
    this.#inner.appendChild(frag)
  }
}
