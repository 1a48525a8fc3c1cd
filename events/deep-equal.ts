/**
 * `deepEqual`: structural equality for the values a log holds, without `node:util` (issue "See a
 * session", item 7: the root export runs in browsers and edge runtimes).
 *
 * It follows `util.isDeepStrictEqual` for the values that reach it here (JSON-like events, requests,
 * tool arguments and outputs): primitives by `Object.is` (so `NaN` equals `NaN`, `0` differs from
 * `-0`), the same prototype on both sides, own enumerable string keys compared as sets (a key
 * holding `undefined` differs from a missing key), arrays by length and index, `Date` by time,
 * typed arrays by bytes, `Map`/`Set` by entries in order-insensitive fashion for primitive keys.
 * Cycles are not expected (logs are JSON); a cycle is compared by identity once seen twice.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  return eq(a, b, undefined, 0)
}

/**
 * Pairs are recorded in `seen` (the cycle guard) only below `TRACK_FROM` levels: the small values
 * compared on every step (a request's config and tools) then allocate no map. Unrolling a cycle
 * that many levels before recording it gives the same answer (the comparison only ever assumes a
 * pair equal once it is seen again), and acyclic values are compared the same with or without it.
 */
const TRACK_FROM = 32

function eq(a: unknown, b: unknown, seen: Map<object, object> | undefined, depth: number): boolean {
  if (Object.is(a, b)) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false
  if (seen?.get(a) === b) return true
  if (depth >= TRACK_FROM) {
    seen ??= new Map()
    seen.set(a, b)
  }
  const d = depth + 1
  if (Array.isArray(a)) {
    const bb = b as unknown[]
    if (a.length !== bb.length) return false
    for (let i = 0; i < a.length; i++) if (!eq(a[i], bb[i], seen, d)) return false
    return sameKeys(a, bb, seen, d, true)
  }
  if (a instanceof Date) return a.getTime() === (b as Date).getTime()
  if (ArrayBuffer.isView(a)) {
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
    const bv = b as ArrayBufferView
    const y = new Uint8Array(bv.buffer, bv.byteOffset, bv.byteLength)
    if (x.length !== y.length) return false
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
    return true
  }
  if (a instanceof Map) {
    const bm = b as Map<unknown, unknown>
    if (a.size !== bm.size) return false
    for (const [k, v] of a) if (!bm.has(k) || !eq(v, bm.get(k), seen, d)) return false
    return true
  }
  if (a instanceof Set) {
    const bs = b as Set<unknown>
    if (a.size !== bs.size) return false
    for (const v of a) if (!bs.has(v)) return false
    return true
  }
  return sameKeys(a, b, seen, d, false)
}

function sameKeys(a: object, b: object, seen: Map<object, object> | undefined, depth: number, arrayIndexesDone: boolean): boolean {
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false
    if (arrayIndexesDone && isIndex(k)) continue
    if (!eq(ra[k], rb[k], seen, depth)) return false
  }
  return true
}

function isIndex(k: string): boolean {
  const c = k.charCodeAt(0)
  return c >= 48 && c <= 57
}
