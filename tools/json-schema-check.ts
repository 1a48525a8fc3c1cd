/**
 * The one place that validates a value against a form's JSON Schema (docs/spec/lifecycle.md §11):
 * the same validator as `jsonSchema()` tool schemas, so a form and a tool accept the same
 * documents. Validators are cached per schema text (an app asks the same form many times).
 */
import { jsonSchema, type JsonSchema } from './json-schema.js'

const cache = new Map<string, JsonSchema>()
const CACHE_MAX = 256

function compiled(schema: Record<string, unknown>): JsonSchema {
  const key = JSON.stringify(schema)
  const hit = cache.get(key)
  if (hit !== undefined) return hit
  const v = jsonSchema(schema)
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!)
  cache.set(key, v)
  return v
}

/** Whether `schema` is a JSON Schema the validator can use: null when it is, else why not. */
export async function schemaProblem(schema: Record<string, unknown>): Promise<string | null> {
  try {
    compiled(schema)
    return null
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  }
}

/**
 * Validates `value` against `schema`: null when valid, else the first problem with its JSON
 * pointer (`/address/city`, `` for the value itself).
 */
export async function jsonSchemaProblem(schema: Record<string, unknown>, value: unknown): Promise<{ pointer: string; message: string } | null> {
  let v: JsonSchema
  try {
    v = compiled(schema)
  } catch (err) {
    return { pointer: '', message: `the schema cannot be used: ${err instanceof Error ? err.message : String(err)}` }
  }
  const r = v['~standard'].validate(value)
  if (r instanceof Promise || !('issues' in r) || r.issues === undefined) return null
  const e = r.issues[0]
  if (e === undefined) return { pointer: '', message: 'does not match the schema' }
  const path = (e.path ?? []).map((p) => String(typeof p === 'object' && p !== null ? p.key : p).replace(/~/g, '~0').replace(/\//g, '~1'))
  return { pointer: path.length === 0 ? '' : `/${path.join('/')}`, message: e.message }
}
