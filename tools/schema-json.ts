/**
 * The JSON Schema a model is sent for a tool schema, whatever library wrote it:
 * - `jsonSchema()`: the schema as given;
 * - zod 4 and zod 3.25's `zod/v4`: zod 4's `z.toJSONSchema` of the input side, closed objects;
 * - a library implementing Standard JSON Schema (`~standard.jsonSchema`, e.g. arktype): its own
 *   converter, draft 2020-12, input side;
 * - zod 3 classic: `zod-to-json-schema`, valibot: `@valibot/to-json-schema` (optional peers of
 *   turnlog, loaded when such a schema shows up; the user who writes valibot has valibot).
 * Never with a `$schema` member (the shape of the log's `request/header` tools). Objects a library
 * leaves without `additionalProperties` are closed (`false`) as zod 4's are: the model is told to
 * send only the declared keys (decision record "tool-schemas" (docs/decisions/ in the repository)).
 */
import { z } from 'zod'
import { TurnlogError } from '../events/index.js'
import { isJsonSchema } from './json-schema.js'
import { isStandard, isZod3, isZod4, schemaLibrary } from './schema.js'
import { walkSchema } from './schema-walk.js'

type Json = Record<string, unknown>

/**
 * `require` of this module, made on first use through `process.getBuiltinModule` (Node ≥ 22.3)
 * rather than a static `node:module` import, so that the root export bundles for a browser
 * (test/browser/bundle.test.ts), where an optional peer is simply not there.
 */
let requireHere: ((name: string) => unknown) | undefined
function requirePeer(name: string): unknown {
  if (requireHere === undefined) {
    const mod = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:module') as
      | { createRequire(url: string): (name: string) => unknown } | undefined
    if (mod === undefined) throw new Error(`cannot load ${name} here (no node:module)`)
    requireHere = mod.createRequire(import.meta.url)
  }
  return requireHere(name)
}

/**
 * @internal How an optional peer is loaded (synchronously: `defineTool` is). Tests replace `load`
 * to see a peer missing.
 */
export const peers = { load: (name: string): unknown => requirePeer(name) }

/**
 * The JSON Schema of `schema` (input side, no `$schema`). `where` names it in errors:
 * `tool 'x': parameters`. Throws `INVALID_ARGUMENT` (field `field`) naming the library and what to
 * do when it cannot be had.
 */
export function toJsonSchema(schema: unknown, where: string, field: string): Json {
  try {
    return convert(schema, where, field)
  } catch (err) {
    if (TurnlogError.is(err)) throw err
    // the schema object itself misbehaved (a getter that throws on a second read, a proxy)
    const why = err instanceof Error ? err.message : 'a value that is not an Error was thrown'
    throw new TurnlogError('INVALID_ARGUMENT', `${where} (${schemaLibrary(schema)}) have no JSON Schema (reading the schema threw: ${why})`, { field }, { cause: err })
  }
}

function convert(schema: unknown, where: string, field: string): Json {
  const lib = schemaLibrary(schema)
  const fail = (why: string, todo: string, cause?: unknown): never => {
    throw new TurnlogError('INVALID_ARGUMENT', `${where} (${lib}) have no JSON Schema (${why}): ${todo}`, { field }, cause === undefined ? undefined : { cause })
  }
  const threw = (err: unknown) => (err instanceof Error ? err.message : String(err))
  let out: Json
  if (isJsonSchema(schema)) return strip(schema['~standard'].jsonSchema.input({ target: 'draft-2020-12' }))
  if (isZod4(schema)) {
    try {
      out = z.toJSONSchema(schema, { io: 'input', override: closeZodObjects }) as Json
    } catch (err) {
      return fail(threw(err), 'use only types JSON Schema can express on the input side (no z.date(), z.custom(), z.bigint()…), or give the JSON Schema with jsonSchema()', err)
    }
    return strip(out)
  }
  const std = isStandard(schema) ? (schema['~standard'] as { jsonSchema?: { input?: unknown } }).jsonSchema : undefined
  if (std !== undefined && typeof std.input === 'function') {
    try {
      out = (std.input as (o: { target: string }) => Json)({ target: 'draft-2020-12' })
    } catch (err) {
      return fail(threw(err), `use only types JSON Schema can express, or give the JSON Schema with jsonSchema()`, err)
    }
    return strip(close(out))
  }
  if (isZod3(schema)) {
    const mod = loadPeer('zod-to-json-schema') as { zodToJsonSchema?: (s: unknown, o: unknown) => Json } | undefined
    if (typeof mod?.zodToJsonSchema !== 'function') {
      return fail('zod 3 has no converter of its own', "install zod-to-json-schema (an optional peer of turnlog), or write the schema with zod 4 (`import { z } from 'zod/v4'`)")
    }
    try {
      out = mod.zodToJsonSchema(schema, { target: 'jsonSchema2019-09', pipeStrategy: 'input', effectStrategy: 'input' })
    } catch (err) {
      return fail(threw(err), 'use only types JSON Schema can express, or give the JSON Schema with jsonSchema()', err)
    }
    return strip(close(out))
  }
  if (isStandard(schema) && schema['~standard'].vendor === 'valibot') {
    const mod = loadPeer('@valibot/to-json-schema') as { toJsonSchema?: (s: unknown, o: unknown) => Json } | undefined
    if (typeof mod?.toJsonSchema !== 'function') {
      return fail('valibot has no converter of its own', 'install @valibot/to-json-schema (an optional peer of turnlog)')
    }
    try {
      out = mod.toJsonSchema(schema, { target: 'draft-2020-12', typeMode: 'input', errorMode: 'throw' })
    } catch (err) {
      return fail(threw(err), 'use only schemas and actions @valibot/to-json-schema converts, or give the JSON Schema with jsonSchema()', err)
    }
    return strip(close(out))
  }
  return fail(
    'the library does not implement Standard JSON Schema, `~standard.jsonSchema`',
    'use a version of the library that does, or give the JSON Schema with jsonSchema()',
  )
}

function loadPeer(name: string): unknown {
  try {
    return peers.load(name)
  } catch {
    return undefined
  }
}

/** Without `$schema`, as a fresh JSON copy (the converters may share nodes between calls). */
function strip(schema: Json): Json {
  const { $schema: _drop, ...rest } = JSON.parse(JSON.stringify(schema)) as Json
  return rest
}

function closeZodObjects({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: Json }): void {
  const def = (zodSchema as { _zod: { def: { type: string; catchall?: unknown } } })._zod.def
  if (def.type === 'object' && def.catchall === undefined && jsonSchema.additionalProperties === undefined) {
    jsonSchema.additionalProperties = false
  }
}

/** Not into `allOf`: closing both sides of an intersection would refuse everything. */
const NOT_ALLOF = new Set(['allOf'])

/**
 * Closes every object schema that declares `properties` and says nothing of other keys (no
 * `additionalProperties`, `patternProperties` or `unevaluatedProperties`). In place; returns it.
 */
function close(schema: Json): Json {
  walkSchema(schema, (node) => {
    const props = node.properties
    if (typeof props === 'object' && props !== null && !Array.isArray(props) && !('additionalProperties' in node) && !('patternProperties' in node) && !('unevaluatedProperties' in node)) {
      node.additionalProperties = false
    }
  }, NOT_ALLOF)
  return schema
}
