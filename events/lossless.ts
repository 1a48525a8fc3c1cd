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
  // The common case (a small, plain, lossless value) is decided by a recursive walk that allocates
  // nothing but symbol-key lists; anything it does not accept (or a stack overflow) is decided again
  // by the explicit-stack walk below, which names the path. Accepting here implies that walk accepts.
  try {
    if (losslessFast(value, base)) return null
  } catch {
    // fall through: the walk below decides (and rethrows what the value itself throws)
  }
  return walkLossy(value, path, base)
}

/**
 * `findLossy` without its fast path: the explicit-stack walk that names the first lossy value.
 * Exported for the property test that proves the fast path agrees with it.
 */
export function walkLossy(value: object, path: string, base: number): { path: string; why: string } | null {
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

/**
 * True when `v` (a container at nesting level `level`) is lossless JSON. Refuses, by returning
 * false, everything `findLossy`'s walk refuses: a cycle recurses until the nesting limit and is
 * refused there (the walk then names it a cycle). Own enumerable string keys are read by `for…in`:
 * the prototype is `Object.prototype` or null, so it can only see more keys than `Object.keys`
 * (making it stricter, never laxer).
 */
function losslessFast(v: object, level: number): boolean {
  if (level > MAX_NESTING) return false
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) return false
      const x: unknown = v[i]
      if (typeof x === 'object' && x !== null) {
        if (!losslessFast(x, level + 1)) return false
      } else if (!primitiveOk(x)) return false
    }
    return true
  }
  const proto = Object.getPrototypeOf(v)
  if (proto !== Object.prototype && proto !== null) return false
  for (const k in v) {
    const x: unknown = (v as Record<string, unknown>)[k]
    if (typeof x === 'object' && x !== null) {
      if (!losslessFast(x, level + 1)) return false
    } else if (!primitiveOk(x)) return false
  }
  return Object.getOwnPropertySymbols(v).length === 0
}

/** `primitiveLoss(v) === null`, without building a reason. */
function primitiveOk(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
      return v.isWellFormed()
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(v) && !(v === 0 && 1 / v < 0)
    default:
      return v === null
  }
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

/**
 * Freezes a JSON value and everything inside it. Returns the same value. An already frozen object
 * is taken as deeply frozen (the log freezes only whole values). Small values are frozen by a
 * recursive walk that freezes a container only after everything inside it (so a walk cut short
 * leaves no frozen object with unfrozen contents); values nested deeper than `MAX_NESTING` (or a
 * stack overflow) finish on the iterative walk.
 */
export function deepFreeze<T>(v: T): T {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return v
  let done = false
  try {
    done = freezeFast(v as object, 0)
  } catch {
    done = false
  }
  if (!done) freezeIterative(v as object)
  return v
}

/** Post-order: children first, then `o`. False when cut short by the depth limit. */
function freezeFast(o: object, level: number): boolean {
  if (level > MAX_NESTING) return false
  if (Array.isArray(o)) {
    for (let i = 0; i < o.length; i++) {
      const x: unknown = o[i]
      if (typeof x === 'object' && x !== null && !Object.isFrozen(x) && !freezeFast(x, level + 1)) return false
    }
  } else {
    // `for…in` allocates no key array; `hasOwn` keeps it to own keys (as `Object.keys`)
    for (const k in o) {
      if (!Object.hasOwn(o, k)) continue
      const x = (o as Record<string, unknown>)[k]
      if (typeof x === 'object' && x !== null && !Object.isFrozen(x) && !freezeFast(x, level + 1)) return false
    }
  }
  Object.freeze(o)
  return true
}

function freezeIterative(v: object): void {
  if (Object.isFrozen(v)) return
  const stack: object[] = [v]
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
}
