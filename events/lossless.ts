/**
 * Lossless JSON: what `JSON.stringify` then `JSON.parse` gives back unchanged. Appends refuse
 * anything else (undefined, NaN, ±Infinity, -0, BigInt, cycles, sparse arrays, Map, Date, class
 * instances, lone surrogates), because a log that cannot round-trip is not a source of truth.
 */

/** Returns the path of the first lossy value (`data.message.content[2]`), or null when lossless. */
export function findLossy(value: unknown, path = 'data'): { path: string; why: string } | null {
  return walk(value, path, new Set())
}

function walk(v: unknown, path: string, ancestors: Set<object>): { path: string; why: string } | null {
  switch (typeof v) {
    case 'string':
      return v.isWellFormed() ? null : { path, why: 'string has a lone surrogate' }
    case 'boolean':
      return null
    case 'number':
      if (!Number.isFinite(v)) return { path, why: `${v} is not JSON` }
      if (Object.is(v, -0)) return { path, why: '-0 does not survive JSON' }
      return null
    case 'object': {
      if (v === null) return null
      if (ancestors.has(v)) return { path, why: 'cycle' }
      if (Array.isArray(v)) {
        ancestors.add(v)
        for (let i = 0; i < v.length; i++) {
          if (!(i in v)) return { path: `${path}[${i}]`, why: 'sparse array' }
          const r = walk(v[i], `${path}[${i}]`, ancestors)
          if (r) return r
        }
        ancestors.delete(v)
        return null
      }
      const proto = Object.getPrototypeOf(v)
      if (proto !== Object.prototype && proto !== null) {
        return { path, why: `${(v as object).constructor?.name ?? 'class'} instance is not plain JSON` }
      }
      ancestors.add(v)
      for (const k of Object.keys(v)) {
        const r = walk((v as Record<string, unknown>)[k], `${path}.${k}`, ancestors)
        if (r) return r
      }
      if (Object.getOwnPropertySymbols(v).length) return { path, why: 'symbol keys' }
      ancestors.delete(v)
      return null
    }
    case 'undefined':
      return { path, why: 'undefined is not JSON' }
    default:
      return { path, why: `${typeof v} is not JSON` }
  }
}

/** Freezes a JSON value and everything inside it. Returns the same value. */
export function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v)
    for (const k of Object.keys(v)) deepFreeze((v as Record<string, unknown>)[k])
  }
  return v
}
