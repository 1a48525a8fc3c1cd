/** A readable structural diff of two JSON values (for re-execution divergences). */
import { deepEqual as isDeepStrictEqual } from '../events/deep-equal.js'

/** One line per differing path: `  data.reason.kind: "completed" → "blocked"`. At most `max` lines. */
export function diffLines(expected: unknown, actual: unknown, max = 20): string[] {
  const out: string[] = []
  walk(expected, actual, '', out, max)
  if (out.length > max) return [...out.slice(0, max), `  … ${out.length - max} more`]
  return out
}

function show(v: unknown): string {
  if (v === undefined) return '(absent)'
  const s = JSON.stringify(v)
  return s.length > 160 ? `${s.slice(0, 160)}…` : s
}

function walk(a: unknown, b: unknown, path: string, out: string[], max: number): void {
  if (out.length > max) return
  if (isDeepStrictEqual(a, b)) return
  const bothObjects = typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b)
  if (!bothObjects) {
    out.push(`  ${path || '(event)'}: ${show(a)} → ${show(b)}`)
    return
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length)
    for (let i = 0; i < n; i++) walk(a[i], b[i], `${path}[${i}]`, out, max)
    return
  }
  const ao = a as Record<string, unknown>
  const bo = b as Record<string, unknown>
  const keys = [...new Set([...Object.keys(ao), ...Object.keys(bo)])]
  for (const k of keys) walk(ao[k], bo[k], path ? `${path}.${k}` : k, out, max)
}
