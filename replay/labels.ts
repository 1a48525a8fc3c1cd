/**
 * Labels shared by every view of a log (the `turnlog replay` printout, the inspector page, the
 * chrome-trace export): a budget end with its limit, a wait's length, who decided an approval.
 * Pure text from log values; a value of the wrong type (a hostile log) gives '?' rather than a throw.
 */

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/** 1200 → "1,200" (grouping by three, whatever the locale). */
export function grouped(n: number): string {
  const [int, frac] = String(Math.abs(n)).split('.')
  const g = int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${n < 0 ? '-' : ''}${g}${frac !== undefined ? `.${frac}` : ''}`
}

const LIMIT_NAMES: Record<string, string> = {
  totalTokens: 'tokens', inputTokens: 'input tokens', outputTokens: 'output tokens', toolCalls: 'tool calls', costUsd: 'cost',
}

function usd(v: number): string {
  return `$${v.toFixed(v !== 0 && Math.abs(v) < 1 ? 4 : 2)}`
}

/**
 * A `turn/end {kind: 'budget'}` reason as `budget: tokens 1,200/1,000 (turn)` (used/limit, scope);
 * cost in dollars, with the calls whose price was unknown.
 */
export function budgetText(r: Record<string, unknown>): string {
  const which = typeof r.which === 'string' ? r.which : '?'
  const used = num(r.used)
  const limit = num(r.limit)
  const cost = which === 'costUsd'
  const show = (v: number | undefined): string => (v === undefined ? '?' : cost ? usd(v) : grouped(v))
  const scope = typeof r.scope === 'string' ? ` (${r.scope})` : ''
  const unpriced = num(r.unpriced)
  return `budget: ${LIMIT_NAMES[which] ?? which} ${show(used)}/${show(limit)}${scope}${unpriced ? `, ${unpriced} call${unpriced === 1 ? '' : 's'} unpriced` : ''}`
}

/** A wait's length: "450 ms", "12 s", "3 min 5 s", "3 h 2 min", "2 d 4 h". */
export function durationText(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?'
  if (ms < 1000) return `${Math.round(ms)} ms`
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`
  const h = Math.floor(m / 60)
  if (h < 24) return `${h} h${m % 60 ? ` ${m % 60} min` : ''}`
  const d = Math.floor(h / 24)
  return `${d} d${h % 24 ? ` ${h % 24} h` : ''}`
}

/** Who decided an approval (`by` of `tool/approval-decided`): "ann", "a person", "the expiry", "a steer", "a cancel". */
/** How an input round was answered, as a past participle: `accept` → 'accepted' (docs/spec/lifecycle.md §11). */
export function inputActionText(action: string): string {
  return action === 'accept' ? 'accepted' : action === 'decline' ? 'declined' : action === 'cancel' ? 'cancelled' : '?'
}

export function decidedByText(by: unknown): string {
  const b = (by ?? {}) as { kind?: unknown; id?: unknown }
  switch (b.kind) {
    case 'user':
      return typeof b.id === 'string' && b.id !== '' ? b.id : 'a person'
    case 'expired':
      return 'the expiry'
    case 'superseded':
      return 'a steer (superseded)'
    case 'canceled':
      return 'a cancel'
    default:
      return '?'
  }
}
