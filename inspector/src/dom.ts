/**
 * The only way the page builds DOM: `h(tag, props, ...children)` where children are nodes or
 * strings, and strings always become text nodes. Nothing here (or anywhere in the page) assigns
 * innerHTML/outerHTML or sets an event-handler attribute from data, so log text (messages, tool
 * arguments, ids, tool names) is shown as text, never parsed as HTML (issue "See a session", item 5).
 */
export type Child = Node | string | number | null | undefined | false | Child[]

export interface Props {
  class?: string
  title?: string
  /** data-* attributes (values are strings, set with setAttribute: never parsed as HTML). */
  data?: Record<string, string>
  style?: string
  onclick?: (ev: MouseEvent) => void
  role?: string
  tabindex?: number
  ariaLabel?: string
  /** An `<a>`'s target: only a sibling file name (`name.html`, the CLI's own report files), else dropped. */
  href?: string
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Props | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  if (props) {
    if (props.class) el.className = props.class
    if (props.title !== undefined) el.title = props.title
    if (props.style) el.setAttribute('style', props.style)
    if (props.role) el.setAttribute('role', props.role)
    if (props.ariaLabel) el.setAttribute('aria-label', props.ariaLabel)
    if (props.tabindex !== undefined) el.tabIndex = props.tabindex
    if (props.data) for (const [k, v] of Object.entries(props.data)) el.setAttribute(`data-${k}`, v)
    if (props.href !== undefined && tag === 'a' && /^[A-Za-z0-9._-]+\.html$/.test(props.href)) el.setAttribute('href', props.href)
    if (props.onclick) { const f = props.onclick; el.addEventListener('click', (ev) => f(ev as MouseEvent)) }
  }
  append(el, children)
  return el
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    if (Array.isArray(c)) append(el, c)
    else if (typeof c === 'string' || typeof c === 'number') el.appendChild(document.createTextNode(String(c)))
    else el.appendChild(c)
  }
}

/** Replaces the children of `el`. */
export function replace(el: Node, ...children: Child[]): void {
  while (el.firstChild) el.removeChild(el.firstChild)
  append(el, children)
}

const SVG = 'http://www.w3.org/2000/svg'

/** An SVG element; attribute values are numbers or fixed strings chosen by the page, text via `text`. */
export function s(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(SVG, tag) as SVGElement
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  if (text !== undefined) el.textContent = text
  return el
}

/** Log text for a one-line label: control characters shown as escapes, long text cut. */
export function oneLine(text: string, max = 160): string {
  // eslint-disable-next-line no-control-regex
  const t = text.replace(/[\u0000-\u001f\u007f]/g, (c) => (c === '\n' ? '⏎' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`))
  return t.length > max ? `${t.slice(0, max - 1)}…` : t
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '?'
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`
  const m = Math.floor(ms / 60_000)
  if (m < 60) return `${m}m ${Math.round((ms % 60_000) / 1000)}s`
  return `${Math.floor(m / 60)}h ${m % 60}m`
}

/** `12,345` (as `toLocaleString('en-US')` writes it) without Intl: its first call took ~100 ms. */
export function fmtInt(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US')
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}
