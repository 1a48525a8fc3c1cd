/** What every benchmark module returns, and the small tools they share. */
import { runInNewContext } from 'node:vm'
import { setFlagsFromString } from 'node:v8'

/** One entry of bench/results.json (bench/README.md). */
export interface BenchResult {
  /** For a ratio: the ratio. */
  value: number
  /** e.g. "x baseline", "us/step". */
  unit: string
  /** e.g. "<= 2.0". */
  target: string
  detail: Record<string, unknown>
}

/** A benchmark function returns one result, or several keyed by id (`{ B2: …, B3: … }`). */
export type BenchOutput = BenchResult | Record<string, BenchResult>

export function isBenchResult(x: unknown): x is BenchResult {
  return typeof x === 'object' && x !== null && typeof (x as BenchResult).value === 'number' &&
    typeof (x as BenchResult).target === 'string'
}

/** Whether `value` meets a target written as "<= 2.0", "< 1", ">= 0.5", "> 3"; null when unparseable. */
export function meetsTarget(value: number, target: string): boolean | null {
  const m = /^\s*(<=|>=|<|>|≤|≥)\s*([0-9.]+)/.exec(target)
  if (!m) return null
  const t = Number(m[2])
  switch (m[1]) {
    case '<=': case '≤': return value <= t
    case '>=': case '≥': return value >= t
    case '<': return value < t
    case '>': return value > t
  }
  return null
}

let gcFn: (() => void) | null | undefined
/** A full GC between timed runs (exposed at runtime, so `node dist/bench/run.js` needs no flag). */
export function collectGarbage(): void {
  if (gcFn === undefined) {
    const g = (globalThis as { gc?: () => void }).gc
    if (typeof g === 'function') gcFn = g
    else {
      try {
        setFlagsFromString('--expose-gc')
        gcFn = runInNewContext('gc') as () => void
      } catch {
        gcFn = null
      }
    }
  }
  gcFn?.()
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

export function round(x: number, digits = 2): number {
  const f = 10 ** digits
  return Math.round(x * f) / f
}

/** An env var as a positive integer, or the default. */
export function envInt(name: string, dflt: number): number {
  const v = process.env[name]
  if (v === undefined || v.trim() === '') return dflt
  const n = Number(v.replace(/_/g, ''))
  if (!Number.isSafeInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got '${v}'`)
  return n
}
