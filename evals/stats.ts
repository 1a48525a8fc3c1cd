/**
 * pass@k and pass^k from n trials with c passes (unbiased estimators, drawing k of the n without
 * replacement): pass@k = 1 − C(n−c, k)/C(n, k) (at least one of k passes), pass^k = C(c, k)/C(n, k)
 * (all k pass: the reliability measure of τ-bench). Products of ratios, so no factorial overflows.
 */

/** C(a, k) / C(n, k) for a <= n. */
function ratio(a: number, n: number, k: number): number {
  if (k > a) return 0
  let r = 1
  for (let i = 0; i < k; i++) r *= (a - i) / (n - i)
  return r
}

export function passAtK(n: number, c: number, k: number): number {
  if (k < 1 || k > n) throw new RangeError(`k must be in 1..${n}, got ${k}`)
  return 1 - ratio(n - c, n, k)
}

export function passHatK(n: number, c: number, k: number): number {
  if (k < 1 || k > n) throw new RangeError(`k must be in 1..${n}, got ${k}`)
  return ratio(c, n, k)
}

/** Both, for k = 1..n, keyed by k. */
export function passRates(n: number, c: number): { passAtK: Record<string, number>; passHatK: Record<string, number> } {
  const at: Record<string, number> = {}
  const hat: Record<string, number> = {}
  for (let k = 1; k <= n; k++) {
    at[k] = passAtK(n, c, k)
    hat[k] = passHatK(n, c, k)
  }
  return { passAtK: at, passHatK: hat }
}
