/**
 * Lossless JSON: what `JSON.stringify` then `JSON.parse` gives back unchanged. Appends refuse
 * anything else (undefined, NaN, ±Infinity, -0, BigInt, cycles, sparse arrays, Map, Date, class
 * instances, lone surrogates, nesting deeper than `MAX_NESTING`), because a log that cannot
 * round-trip is not a source of truth. The walks here use an explicit stack, never recursion: a
 * value from outside may nest a million levels deep.
 */
import { MAX_NESTING } from './jsonl/depth.js'

export { MAX_NESTING }

export interface FindLossyOptions {
  /** The nesting level of `value` itself, the record being level 1 (default 2: `data` of an event). */
  depth?: number
}

/** Returns the path of the first lossy value (`data.message.content[2]`), or null when lossless. */
export function findLossy(value: unknown, path = 'data', opts: FindLossyOptions = {}): { path: string; why: string } | null {
  if (typeof value !== 'object' || value === null) {
    const why = primitiveLoss(value)
    return why === null ? null : { path, why }
  }
  const base = opts.depth ?? 2
  // the containers being walked, outermost first; `seg` is the path segment from the parent
  const objs: object[] = []
  const keys: (string[] | null)[] = []
  const pos: number[] = []
  const segs: string[] = []
  const ancestors = new Set<object>()
  const at = (seg: string): string => {
    let p = path
    for (let i = 1; i < segs.length && p.length <= 200; i++) p += segs[i]
    p += seg
    return abbreviate(p.startsWith('.') ? p.slice(1) : p)
  }
  const enter = (v: object, seg: string): { path: string; why: string } | null => {
    if (ancestors.has(v)) return { path: at(seg), why: 'cycle' }
    if (!Array.isArray(v)) {
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) {
        return { path: at(seg), why: `${(v as object).constructor?.name ?? 'class'} instance is not plain JSON` }
      }
    }
    if (base + objs.length > MAX_NESTING) {
      return { path: at(seg), why: `nested deeper than ${MAX_NESTING} levels` }
    }
    objs.push(v)
    keys.push(Array.isArray(v) ? null : Object.keys(v))
    pos.push(0)
    segs.push(seg)
    ancestors.add(v)
    return null
  }
  const r0 = enter(value, '')
  if (r0) return r0
  while (objs.length > 0) {
    const top = objs.length - 1
    const v = objs[top]!
    const ks = keys[top]!
    const i = pos[top]!
    const n = ks === null ? (v as unknown[]).length : ks.length
    if (i >= n) {
      if (ks !== null && Object.getOwnPropertySymbols(v).length) return { path: at(''), why: 'symbol keys' }
      objs.pop()
      keys.pop()
      pos.pop()
      segs.pop()
      ancestors.delete(v)
      continue
    }
    pos[top] = i + 1
    let x: unknown
    let seg: string
    if (ks === null) {
      seg = `[${i}]`
      if (!(i in v)) return { path: at(seg), why: 'sparse array' }
      x = (v as unknown[])[i]
    } else {
      seg = `.${ks[i]}`
      x = (v as Record<string, unknown>)[ks[i]!]
    }
    if (typeof x === 'object' && x !== null) {
      const r = enter(x, seg)
      if (r) return r
    } else {
      const why = primitiveLoss(x)
      if (why !== null) return { path: at(seg), why }
    }
  }
  return null
}

function primitiveLoss(v: unknown): string | null {
  switch (typeof v) {
    case 'string':
      return v.isWellFormed() ? null : 'string has a lone surrogate'
    case 'boolean':
      return null
    case 'number':
      if (!Number.isFinite(v)) return `${v} is not JSON`
      if (Object.is(v, -0)) return '-0 does not survive JSON'
      return null
    case 'object':
      return null // null
    case 'undefined':
      return 'undefined is not JSON'
    default:
      return `${typeof v} is not JSON`
  }
}

/** Paths of very deep values are cut after a few hundred characters. */
function abbreviate(p: string): string {
  return p.length <= 200 ? p : `${p.slice(0, 200)}…`
}

/** Freezes a JSON value and everything inside it (iteratively). Returns the same value. */
export function deepFreeze<T>(v: T): T {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return v
  const stack: object[] = [v as object]
  Object.freeze(v)
  while (stack.length > 0) {
    const o = stack.pop()!
    const ks = Object.keys(o)
    for (let i = 0; i < ks.length; i++) {
      const x = (o as Record<string, unknown>)[ks[i]!]
      if (typeof x === 'object' && x !== null && !Object.isFrozen(x)) {
        Object.freeze(x)
        stack.push(x)
      }
    }
  }
  return v
}
