/**
 * The one place that validates a value against a JSON Schema (a form's schema, docs/spec/lifecycle.md
 * §11). Behind this small module so that the validator can be swapped; today it is Ajv, loaded on
 * first use (importing `turnlog` does not load it). Compiled validators are cached per schema text.
 */
type Validate = ((value: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string; params?: Record<string, unknown> }> | null }

let ajv: Promise<{ compile(schema: object): Validate }> | null = null
const cache = new Map<string, Validate>()
const CACHE_MAX = 256

function load(): Promise<{ compile(schema: object): Validate }> {
  ajv ??= import('ajv').then((m) => {
    const mod = m as unknown as { default: unknown }
    const Ajv = ((mod.default as { default?: unknown }).default ?? mod.default) as new (o: object) => { compile(schema: object): Validate }
    // strict: false: schemas come from tools and servers, which use keywords Ajv's strict mode refuses
    return new Ajv({ allErrors: false, strict: false })
  })
  return ajv
}

async function compiled(schema: Record<string, unknown>): Promise<Validate> {
  const key = JSON.stringify(schema)
  const hit = cache.get(key)
  if (hit !== undefined) return hit
  const v = (await load()).compile(schema)
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!)
  cache.set(key, v)
  return v
}

/** Whether `schema` is a JSON Schema the validator can use: null when it is, else why not. */
export async function schemaProblem(schema: Record<string, unknown>): Promise<string | null> {
  try {
    await compiled(schema)
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
  let v: Validate
  try {
    v = await compiled(schema)
  } catch (err) {
    return { pointer: '', message: `the schema cannot be used: ${err instanceof Error ? err.message : String(err)}` }
  }
  if (v(value)) return null
  const e = v.errors?.[0]
  if (e === undefined) return { pointer: '', message: 'does not match the schema' }
  const missing = e.params?.missingProperty
  const pointer = typeof missing === 'string' ? `${e.instancePath}/${missing}` : e.instancePath
  return { pointer, message: e.message ?? 'does not match the schema' }
}
