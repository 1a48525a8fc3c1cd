/**
 * A virtualized list: fixed-height rows, only the visible ones (plus a margin) exist in the DOM,
 * so a 100k-event log scrolls like a 10-event one. `render(i)` builds row i (text only, dom.ts).
 *
 * The viewport height (ResizeObserver) and the scroll offset (scroll events, and our own writes)
 * are cached: reading `clientHeight`/`scrollTop` after the page changed forces a synchronous layout
 * of the whole page, and three lists did it on every scrub (≈ 70% of a scrub on a 100k-event log).
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
  #viewH = 400
  #top = 0
  #scrollQueued = false

  constructor(
    private readonly rowHeight: number,
    private readonly render: (i: number) => HTMLElement,
    private readonly onPick: (i: number) => void,
    label: string,
  ) {
    this.#inner = h('div', { class: 'vlist-inner' })
    this.el = h('div', { class: 'vlist', role: 'listbox', ariaLabel: label, tabindex: 0 }, this.#inner)
    this.el.addEventListener('scroll', () => {
      // a scroll event of an earlier write, arriving while a newer reveal waits for its frame, must
      // not move #top back (the initial selection was left out of view that way)
      if (this.#scrollQueued) return
      this.#top = this.el.scrollTop
      this.#schedule()
    })
    this.el.addEventListener('click', (ev) => {
      const row = (ev.target as HTMLElement).closest<HTMLElement>('[data-row]')
      if (row) this.onPick(Number(row.dataset.row))
    })
    new ResizeObserver((entries) => {
      const h = entries[entries.length - 1]?.contentRect.height
      if (h && h !== this.#viewH) {
        this.#viewH = h
        // the selection was placed for the height assumed before the first layout: keep it in view
        if (this.#selected >= 0) this.#reveal(this.#selected)
      }
      this.#schedule()
    }).observe(this.el)
  }

  setCount(n: number): void {
    this.#count = n
    this.#top = Math.min(this.#top, Math.max(0, n * this.rowHeight - this.#viewH))
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
    if (scroll && i >= 0) this.#reveal(i)
    this.refresh()
  }

  /** Scrolls row i into the middle of the view unless it is wholly visible. */
  #reveal(i: number): void {
    const top = i * this.rowHeight
    const view = this.#viewH
    if (top >= this.#top && top + this.rowHeight <= this.#top + view) return
    this.#top = Math.max(0, Math.min(top - view / 2, this.#count * this.rowHeight - view))
    // the rows are placed from #top now; the element scrolls in the next frame, when the page is
    // laid out anyway (writing scrollTop here forced one layout per list per scrub)
    if (!this.#scrollQueued) {
      this.#scrollQueued = true
      requestAnimationFrame(() => {
        this.#scrollQueued = false
        this.el.scrollTop = this.#top
      })
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
    const view = this.#viewH
    const first = Math.max(0, Math.floor(this.#top / this.rowHeight) - 10)
    const last = Math.min(this.#count, Math.ceil((this.#top + view) / this.rowHeight) + 10)
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
