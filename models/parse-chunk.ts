/**
 * Reading one adapter chunk into the log's own copy: what `checkedStream` does with every value an
 * adapter yields, so its cost is paid for every chunk of every step (benchmark B5).
 *
 * The contract (zod is the source of truth): `parseChunk(v)` returns what
 * `StreamChunk.safeParse(v)` returns, with members set to `undefined` dropped (`{name: undefined}`
 * means no name). The result is a fresh object (never the adapter's), its keys in the schema's order.
 *
 * How: the hot shapes (every chunk type with primitive members, and `usage`) are copied by a
 * per-type key list read from the zod schemas themselves, reading each member once, and the copy
 * is checked by zod's compiled validator of `StreamChunk` (same accepted set, no output copy, no
 * error built). Anything else (a `finish` with a failure, a class instance, an extra key, a value
 * the copy does not accept) goes to `safeParse`, which also names the field of a refused chunk.
 * `test/models/parse-chunk.property.test.ts` checks the two paths agree on random chunk-like values.
 */
import { z } from 'zod'
import { StreamChunk, Usage } from '../events/index.js'

export type ParsedChunk =
  | { success: true; data: StreamChunk }
  | { success: false; error: z.ZodError }

/** The shape keys of each chunk type with one object schema (the first `finish` variant for finish). */
const ORDER = new Map<string, readonly string[]>()
for (const option of flatten(StreamChunk)) {
  const type = option.shape.type
  const value = type instanceof z.ZodLiteral ? type.value : undefined
  if (typeof value === 'string' && !ORDER.has(value)) ORDER.set(value, Object.keys(option.shape))
}
const USAGE_KEYS: readonly string[] = Object.keys(Usage.shape)

function flatten(schema: z.ZodType): z.ZodObject[] {
  if (schema instanceof z.ZodUnion) return (schema.options as z.ZodType[]).flatMap(flatten)
  if (schema instanceof z.ZodObject) return [schema]
  return []
}

let compiledChunk: z.ZodType | undefined

/** `StreamChunk.safeParse(v)` with `undefined` members dropped; see the file comment. */
export function parseChunk(v: unknown): ParsedChunk {
  const copy = copyChunk(v)
  if (copy !== null && (compiledChunk ??= z.compile(StreamChunk)).validate(copy)) {
    return { success: true, data: copy as StreamChunk }
  }
  return slowParseChunk(v)
}

/** The reference: zod's runtime parser, then `undefined` members dropped from its fresh copy. */
export function slowParseChunk(v: unknown): ParsedChunk {
  const parsed = StreamChunk.safeParse(v)
  return parsed.success ? { success: true, data: dropUndefined(parsed.data) } : parsed
}

/** A plain-object copy of a hot chunk shape in schema key order, or null for "not on the fast path". */
function copyChunk(v: unknown): Record<string, unknown> | null {
  if (!isPlainObject(v)) return null
  const src = v as Record<string, unknown>
  const type = src.type
  if (typeof type !== 'string') return null
  const keys = ORDER.get(type)
  if (keys === undefined) return null
  // a strict object refuses any other key (even one holding undefined); `for…in` is what zod reads
  for (const k in src) if (!keys.includes(k)) return null
  const out: Record<string, unknown> = {}
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!
    const x = k === 'type' ? type : src[k]
    if (x === undefined) continue
    if (typeof x === 'object' && x !== null) {
      if (k !== 'usage') return null
      const u = copyUsage(x)
      if (u === null) return null
      out[k] = u
    } else out[k] = x
  }
  return out
}

function copyUsage(v: object): Record<string, unknown> | null {
  if (!isPlainObject(v)) return null
  const src = v as Record<string, unknown>
  for (const k in src) if (!USAGE_KEYS.includes(k)) return null
  const out: Record<string, unknown> = {}
  for (let i = 0; i < USAGE_KEYS.length; i++) {
    const k = USAGE_KEYS[i]!
    const x = src[k]
    if (x === undefined) continue
    if (typeof x === 'object' && x !== null) return null
    out[k] = x
  }
  return out
}

function isPlainObject(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const proto = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** `{name: undefined}` means no name: drop such members (the log refuses `undefined`). The parsed
 * chunk is a fresh copy, so this mutates nothing of the adapter's. */
function dropUndefined<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const o = v as Record<string, unknown>
    for (const k of Object.keys(o)) {
      if (o[k] === undefined) delete o[k]
      else dropUndefined(o[k])
    }
  }
  return v
}
