/**
 * Argument generation: tool call arguments from each tool's JSON Schema, valid ones mixed with
 * deliberately invalid ones.
 *
 * Why JSON Schema and not a schema-library-to-fast-check bridge: a tool's schema may come from any
 * library (zod 3 or 4, valibot, arktype, or a plain `jsonSchema()` an MCP server sent), and the one
 * thing all of them have is the JSON Schema the model is sent (`toolSpec`), which is exactly what a
 * real model generates arguments from. (The maintained zod bridge, `zod-fast-check`, targets zod 3
 * and fast-check < 4; the JSON Schema fakers are not fast-check arbitraries: no shrinking, not driven
 * by the run's seed.) The generator covers the keywords tool schemas use, in draft 2020-12 and
 * draft-07: `type` (also as a list), `const`, `enum`, `nullable` (OpenAPI 3.0),
 * `properties`/`required`/`additionalProperties`/`propertyNames`, `items` (also draft-07's tuple
 * form with `additionalItems`), `prefixItems`, `minItems`/`maxItems`, `minLength`/`maxLength`,
 * `pattern`, `format` (email, uuid, uri, date-time, date, time, ipv4, ipv6), `minimum`/`maximum` and
 * their exclusive forms, `multipleOf`, `anyOf`/`oneOf`/`allOf` and `$ref` into `$defs` or
 * `definitions` (recursion bounded by depth).
 * What JSON Schema cannot say (a `.refine`, a transform's own checks) is handled by asking the
 * schema itself: `validArgs` draws a few candidates and keeps the first the tool's schema accepts.
 */
import fc from 'fast-check'
import { toolSpec } from '../../tools/define.js'
import { checkSchema } from '../../tools/schema.js'
import type { AnyTool } from '../../tools/types.js'

type Schema = Record<string, unknown>

/** A generated tool call as the scripted model takes it: parsed arguments, or raw (broken) text. */
export type GeneratedCall = { name: string; args: unknown } | { name: string; rawArgs: string }

/** Deeper than this, `$ref`s and arrays stop growing (a recursive schema still terminates). */
const MAX_DEPTH = 4
/** Candidates drawn per valid call: the first one the tool's own schema accepts is used. */
const CANDIDATES = 6

/**
 * An arbitrary of values satisfying `schema` (draft 2020-12 or draft-07, as the schema libraries and
 * MCP servers emit it); `root` holds `$defs`/`definitions`.
 */
export function arbFromJsonSchema(schema: unknown, root: Schema = schema as Schema, depth = 0): fc.Arbitrary<unknown> {
  if (schema === true || schema === undefined) return anyJson
  if (schema === false || typeof schema !== 'object' || schema === null) return fc.constant(null)
  const s = schema as Schema
  // OpenAPI 3.0's `nullable: true` (some MCP servers and converters emit it): null, or the rest
  if (s.nullable === true) {
    const { nullable: _n, ...rest } = s
    return fc.oneof(fc.constant(null), arbFromJsonSchema(rest, root, depth))
  }
  if (typeof s.$ref === 'string') {
    // arrays and optional properties stop growing at MAX_DEPTH; only a schema that requires
    // infinite nesting gets here twice as deep
    if (depth >= 2 * MAX_DEPTH) return fc.constant(null)
    return arbFromJsonSchema(resolveRef(s.$ref, root), root, depth)
  }
  if ('const' in s) return fc.constant(s.const)
  if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...(s.enum as unknown[]))
  for (const k of ['anyOf', 'oneOf'] as const) {
    const alts = s[k]
    if (Array.isArray(alts) && alts.length > 0) return fc.oneof(...alts.map((a) => arbFromJsonSchema(a, root, depth)))
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0) return arbFromJsonSchema(mergeAll(s.allOf as Schema[]), root, depth)
  const type = s.type
  if (Array.isArray(type)) return fc.oneof(...type.map((t) => arbFromJsonSchema({ ...s, type: t }, root, depth)))
  switch (type) {
    case 'string': return arbString(s)
    case 'integer': return arbInteger(s)
    case 'number': return arbNumber(s)
    case 'boolean': return fc.boolean()
    case 'null': return fc.constant(null)
    case 'array': return arbArray(s, root, depth)
    case 'object': return arbObject(s, root, depth)
    default:
      // no `type`: the keywords say which kind they constrain (they are ignored for the others)
      if (s.properties !== undefined || s.required !== undefined || s.additionalProperties !== undefined) return arbObject(s, root, depth)
      if (s.items !== undefined || s.prefixItems !== undefined || s.minItems !== undefined) return arbArray(s, root, depth)
      if (s.pattern !== undefined || s.format !== undefined || s.minLength !== undefined || s.maxLength !== undefined) return arbString(s)
      if (s.minimum !== undefined || s.maximum !== undefined || s.multipleOf !== undefined) return arbNumber(s)
      return anyJson
  }
}

const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 })

function resolveRef(ref: string, root: Schema): unknown {
  if (ref === '#') return root
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref)
  if (!m) return true
  return (root[m[1]!] as Record<string, unknown> | undefined)?.[decodeURIComponent(m[2]!)] ?? true
}

function mergeAll(parts: Schema[]): Schema {
  const out: Schema = {}
  const props: Record<string, unknown> = {}
  const required = new Set<string>()
  for (const p of parts) {
    Object.assign(out, p)
    Object.assign(props, (p.properties as Record<string, unknown> | undefined) ?? {})
    for (const r of (p.required as string[] | undefined) ?? []) required.add(r)
  }
  delete out.allOf
  if (Object.keys(props).length > 0) Object.assign(out, { type: 'object', properties: props, required: [...required] })
  return out
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

function arbString(s: Schema): fc.Arbitrary<string> {
  const minLength = num(s.minLength) ?? 0
  const maxLength = Math.max(minLength, num(s.maxLength) ?? Math.max(minLength, 16))
  // zod 4 emits its own regex with most formats; generating from it matches zod exactly
  if (typeof s.pattern === 'string') {
    try {
      return fc.stringMatching(new RegExp(s.pattern))
    } catch {
      // a pattern fast-check cannot generate from: by format, or plain strings, checked later
    }
  }
  switch (s.format) {
    case 'email': return fc.emailAddress()
    case 'uuid': return fc.uuid()
    case 'uri': return fc.webUrl()
    case 'date-time': return isoDate.map((d) => d.toISOString())
    case 'date': return isoDate.map((d) => d.toISOString().slice(0, 10))
    case 'time': return isoDate.map((d) => d.toISOString().slice(11, 19))
    case 'ipv4': return fc.ipV4()
    case 'ipv6': return fc.ipV6()
  }
  return fc.string({ minLength, maxLength, unit: 'grapheme-ascii' })
}

const isoDate = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
  .map((d) => new Date(Math.floor(d.getTime() / 1000) * 1000))

function bounds(s: Schema, integer: boolean): { min: number; max: number; minExcluded: boolean; maxExcluded: boolean } {
  const exMin = num(s.minimum) === undefined ? num(s.exclusiveMinimum) : undefined
  const exMax = num(s.maximum) === undefined ? num(s.exclusiveMaximum) : undefined
  let lo = num(s.minimum) ?? exMin
  let hi = num(s.maximum) ?? exMax
  if (integer) {
    if (lo !== undefined) lo = exMin !== undefined ? Math.floor(lo) + 1 : Math.ceil(lo)
    if (hi !== undefined) hi = exMax !== undefined ? Math.ceil(hi) - 1 : Math.floor(hi)
  }
  // Unbounded sides get a human range: the bodies under test see plausible numbers, not 1e308.
  const min = Math.max(lo ?? (hi !== undefined ? Math.min(hi, 0) - 1000 : -1000), Number.MIN_SAFE_INTEGER)
  const max = Math.min(Math.max(min, hi ?? min + 2000), Number.MAX_SAFE_INTEGER)
  return { min, max, minExcluded: !integer && exMin !== undefined, maxExcluded: !integer && exMax !== undefined }
}

function arbInteger(s: Schema): fc.Arbitrary<number> {
  const b = bounds(s, true)
  const m = num(s.multipleOf)
  if (m !== undefined && m > 0) return fc.integer({ min: Math.ceil(b.min / m), max: Math.max(Math.ceil(b.min / m), Math.floor(b.max / m)) }).map((k) => k * m)
  return fc.integer({ min: b.min, max: b.max })
}

function arbNumber(s: Schema): fc.Arbitrary<number> {
  const m = num(s.multipleOf)
  if (m !== undefined && m > 0) return arbInteger({ ...s, multipleOf: undefined }).map((k) => k * m).filter((v) => !(num(s.maximum) !== undefined && v > num(s.maximum)!))
  const b = bounds(s, false)
  const double = fc.double({ min: b.min, max: b.max, minExcluded: b.minExcluded, maxExcluded: b.maxExcluded, noNaN: true, noDefaultInfinity: true })
  // whole numbers too (most bodies are written for them), inside the open or closed range
  const lo = b.minExcluded ? Math.floor(b.min) + 1 : Math.ceil(b.min)
  const hi = b.maxExcluded ? Math.ceil(b.max) - 1 : Math.floor(b.max)
  const arb = lo <= hi ? fc.oneof(fc.integer({ min: lo, max: hi }), double) : double
  return arb.map((v) => (Object.is(v, -0) ? 0 : v))
}

function arbArray(s: Schema, root: Schema, depth: number): fc.Arbitrary<unknown[]> {
  const minLength = num(s.minItems) ?? 0
  const maxLength = depth >= MAX_DEPTH ? minLength : Math.max(minLength, Math.min(num(s.maxItems) ?? 4, minLength + 4))
  // draft-07's tuple form: `items` a list, `additionalItems` the rest
  const tuple = Array.isArray(s.items)
  const prefixes = tuple ? (s.items as unknown[]) : Array.isArray(s.prefixItems) ? (s.prefixItems as unknown[]) : []
  const prefix = prefixes.map((p) => arbFromJsonSchema(p, root, depth + 1))
  const restSchema = tuple ? s.additionalItems : s.items
  const rest = restSchema === false ? null : arbFromJsonSchema(restSchema ?? true, root, depth + 1)
  if (prefix.length > 0) {
    const extra = rest === null ? fc.constant([]) : fc.array(rest, { maxLength: Math.max(0, maxLength - prefix.length) })
    return fc.tuple(fc.tuple(...prefix), extra).map(([a, b]) => [...a, ...b])
  }
  if (rest === null) return fc.constant([])
  return fc.array(rest, { minLength, maxLength })
}

function arbObject(s: Schema, root: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = (s.properties as Record<string, unknown> | undefined) ?? {}
  const required = ((s.required as string[] | undefined) ?? []).filter((k) => k in props)
  const kept = depth >= MAX_DEPTH ? Object.entries(props).filter(([k]) => required.includes(k)) : Object.entries(props)
  const record = fc.record(
    Object.fromEntries(kept.map(([k, v]) => [k, arbFromJsonSchema(v, root, depth + 1)])),
    { requiredKeys: required },
  ) as fc.Arbitrary<Record<string, unknown>>
  const extra = s.additionalProperties
  if (extra === undefined || extra === false || depth >= MAX_DEPTH) return record
  const names = s.propertyNames
  const keys = typeof names === 'object' && names !== null ? arbFromJsonSchema({ type: 'string', ...names }, root, depth + 1).filter((k): k is string => typeof k === 'string') : fc.string({ minLength: 1, maxLength: 8 })
  const dict = fc.dictionary(keys.filter((k) => !(k in props) && k !== '__proto__'), arbFromJsonSchema(extra, root, depth + 1), { maxKeys: 3 })
  return fc.tuple(record, dict).map(([r, d]) => ({ ...d, ...r }))
}

/**
 * Valid arguments for `tool`: generated from its JSON Schema; of `CANDIDATES` draws, the first the
 * tool's own schema accepts (refinements included), else the first draw (then the call is an
 * `INVALID_ARGS` the generator could not avoid).
 */
export function validArgs(tool: AnyTool): fc.Arbitrary<unknown> {
  const schema = toolSpec(tool).parameters
  const one = arbFromJsonSchema(schema)
  const ok = (v: unknown) => {
    try {
      return checkSchema(tool.parameters, v).ok
    } catch {
      return false
    }
  }
  return fc.array(one, { minLength: CANDIDATES, maxLength: CANDIDATES }).map((cs) => cs.find(ok) ?? cs[0])
}

/**
 * Deliberately invalid arguments: not an object, a required property dropped, a property of the
 * wrong type, or text that is not JSON. (Not an unknown property: `z.object` and most libraries
 * strip those, so such arguments are valid.)
 */
export function invalidCall(tool: AnyTool): fc.Arbitrary<GeneratedCall> {
  const schema = toolSpec(tool).parameters as Schema
  const required = (schema.required as string[] | undefined) ?? []
  const props = Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {})
  const name = tool.name
  const mutations: Array<fc.Arbitrary<GeneratedCall>> = [
    fc.constantFrom<unknown>(null, 'text', 42, [1, 2]).map((args) => ({ name, args })),
    fc.constantFrom('{"unterminated', 'not json', '{"a":1}}').map((rawArgs) => ({ name, rawArgs })),
  ]
  const valid = validArgs(tool)
  if (required.length > 0) {
    mutations.push(fc.tuple(valid, fc.constantFrom(...required)).map(([v, k]) => ({ name, args: without(v, k) })))
  }
  if (props.length > 0) {
    mutations.push(fc.tuple(valid, fc.constantFrom(...props)).map(([v, k]) => ({ name, args: withWrongType(v, k) })))
  }
  return fc.oneof(...mutations)
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function without(v: unknown, k: string): unknown {
  if (!isObject(v)) return v
  const { [k]: _drop, ...rest } = v
  return rest
}

function withWrongType(v: unknown, k: string): unknown {
  if (!isObject(v)) return v
  const cur = v[k]
  // an object where a scalar (or nothing) is expected, a string where an object or array is
  const wrong = typeof cur === 'object' && cur !== null ? 'wrong' : { wrong: true }
  return { ...v, [k]: wrong }
}

/** Calls of a user tool: valid arguments four times out of five, invalid ones otherwise. */
export function arbUserCall(tool: AnyTool): fc.Arbitrary<GeneratedCall> {
  return fc.oneof(
    { weight: 4, arbitrary: validArgs(tool).map((args) => ({ name: tool.name, args })) },
    { weight: 1, arbitrary: invalidCall(tool) },
  )
}
