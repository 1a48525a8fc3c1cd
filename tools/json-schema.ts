/**
 * `jsonSchema()`: a plain JSON Schema as a tool's `parameters` or `output` (an MCP server's
 * `inputSchema`/`outputSchema`, an OpenAPI operation's body), validated by `@cfworker/json-schema`
 * (why that validator: decision record "json-schema-validator" (docs/decisions/ in the repository)). The result is a Standard Schema v1
 * (`~standard.validate`) that also implements Standard JSON Schema (`~standard.jsonSchema`), so it
 * goes wherever a zod or valibot schema goes.
 */
import { Validator, type Schema as CfSchema, type SchemaDraft } from '@cfworker/json-schema'
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec'
import { TurnlogError, findLossy } from '../events/index.js'
import { walkSchema } from './schema-walk.js'

/** A JSON Schema document (an object; `true`/`false` are not tool schemas). */
export type JsonSchemaObject = Record<string, unknown>

/** The drafts `jsonSchema()` validates by. */
export type JsonSchemaDraft = '2020-12' | '2019-09' | '07' | '06' | '04'

export interface JsonSchemaOptions {
  /**
   * The draft to validate by when the schema has no `$schema` member. Default `'2020-12'` (the
   * dialect MCP assumes when `$schema` is absent). A `$schema` naming a known draft wins.
   */
  draft?: JsonSchemaDraft
}

/** What `jsonSchema()` returns: a Standard Schema of `T` carrying its JSON Schema. */
export interface JsonSchema<T = unknown> extends StandardSchemaV1<T, T> {
  readonly '~standard': StandardSchemaV1.Props<T, T> & StandardJSONSchemaV1.Props<T, T>
  /** The schema as given (a deep copy: later changes to the caller's object change nothing). */
  readonly jsonSchema: JsonSchemaObject
  /** The draft it validates by. */
  readonly draft: JsonSchemaDraft
}

const DRAFTS: ReadonlyArray<[RegExp, JsonSchemaDraft]> = [
  [/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, '2020-12'],
  [/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/, '2019-09'],
  [/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/, '07'],
  [/^https?:\/\/json-schema\.org\/draft-06\/schema#?$/, '06'],
  [/^https?:\/\/json-schema\.org\/draft-04\/schema#?$/, '04'],
]

/** @internal Marks the values `jsonSchema()` made (the schema itself is the tool's JSON Schema). */
export const JSON_SCHEMA: unique symbol = Symbol.for('turnlog.jsonSchema')

/**
 * A plain JSON Schema as a tool schema: `defineTool({ parameters: jsonSchema({...}), ... })`.
 *
 * The model is sent the schema as given (without its `$schema` member, like every tool schema);
 * arguments are validated against it by draft 2020-12 or 2019-09, or draft-07, -06 or -04 when
 * `$schema` names one (or `options.draft` says so), formats included. A value that fails is the
 * call's `INVALID_ARGS` result, one line per problem with the path of the field (`→ at a.b`).
 * `T` is the arguments' type as `execute` sees them; nothing checks it against the schema.
 *
 * Throws `INVALID_ARGUMENT` when `schema` is not a JSON object (a function, a `Date`, a cycle, a
 * `NaN`: the schema goes into the log, which holds only lossless JSON), or `$schema` names a
 * dialect that is not one of the drafts above.
 */
export function jsonSchema<T = unknown>(schema: JsonSchemaObject, options: JsonSchemaOptions = {}): JsonSchema<T> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new TurnlogError('INVALID_ARGUMENT', 'jsonSchema: the schema must be a JSON object', { field: 'schema' })
  }
  const lossy = findLossy(schema, 'schema', { depth: 6 }) // as deep as it sits in `request/header`
  if (lossy) throw new TurnlogError('INVALID_ARGUMENT', `jsonSchema: the schema is not JSON: ${lossy.why} at ${lossy.path}`, { field: lossy.path })
  const copy = JSON.parse(JSON.stringify(schema)) as JsonSchemaObject
  const draft = draftOf(copy, options.draft)
  const validator = new Validator(withNullable(JSON.parse(JSON.stringify(copy)) as JsonSchemaObject) as CfSchema, CF_DRAFT[draft], false)
  const validate = (value: unknown): StandardSchemaV1.Result<T> => {
    const r = validator.validate(value)
    return r.valid ? { value: value as T } : { issues: issuesOf(r.errors) }
  }
  const described = (): JsonSchemaObject => {
    const { $schema: _drop, ...rest } = JSON.parse(JSON.stringify(copy)) as JsonSchemaObject
    return rest
  }
  return {
    [JSON_SCHEMA]: true,
    jsonSchema: copy,
    draft,
    '~standard': {
      version: 1,
      vendor: 'turnlog',
      validate,
      // the same document for input and output: a JSON Schema has one side
      jsonSchema: { input: described, output: described },
    },
  } as JsonSchema<T>
}

/**
 * OpenAPI 3.0's `nullable: true`, which converters and MCP servers built on OpenAPI emit: null is
 * accepted where it says so (`type` gains `'null'`, an `enum` gains `null`). JSON Schema itself
 * ignores the keyword; the model is sent the schema as written.
 */
function withNullable(schema: JsonSchemaObject): JsonSchemaObject {
  walkSchema(schema, (node) => {
    if (node.nullable !== true) return
    if (typeof node.type === 'string') node.type = [node.type, 'null']
    else if (Array.isArray(node.type) && !node.type.includes('null')) node.type = [...(node.type as unknown[]), 'null']
    if (Array.isArray(node.enum) && !node.enum.includes(null)) node.enum = [...(node.enum as unknown[]), null]
  })
  return schema
}

const CF_DRAFT: Record<JsonSchemaDraft, SchemaDraft> = { '2020-12': '2020-12', '2019-09': '2019-09', '07': '7', '06': '7', '04': '4' }

function draftOf(schema: JsonSchemaObject, fallback: JsonSchemaDraft | undefined): JsonSchemaDraft {
  if (fallback !== undefined && !(fallback in CF_DRAFT)) {
    throw new TurnlogError('INVALID_ARGUMENT', `jsonSchema: options.draft must be one of ${Object.keys(CF_DRAFT).join(', ')}`, { field: 'options.draft' })
  }
  const id = schema.$schema
  if (id === undefined) return fallback ?? '2020-12'
  const hit = typeof id === 'string' ? DRAFTS.find(([re]) => re.test(id)) : undefined
  if (!hit) {
    throw new TurnlogError('INVALID_ARGUMENT', `jsonSchema: $schema ${JSON.stringify(id)} is not a JSON Schema draft turnlog validates (2020-12, 2019-09, draft-07, -06, -04)`, { field: 'schema.$schema' })
  }
  return hit[1]
}

/** @internal True for the values `jsonSchema()` made. */
export function isJsonSchema(v: unknown): v is JsonSchema {
  return typeof v === 'object' && v !== null && (v as { [JSON_SCHEMA]?: unknown })[JSON_SCHEMA] === true
}

interface CfError { instanceLocation: string; keyword: string; error: string }

/**
 * The validator's output units as Standard Schema issues. It reports every failing keyword down the
 * tree (`properties` failed because `days` failed because `maximum` failed); only the innermost
 * are problems worth a line. A missing required property is reported at the property's own path,
 * as the schema libraries do.
 */
function issuesOf(errors: readonly CfError[]): StandardSchemaV1.Issue[] {
  const deeper = (loc: string) => errors.some((e) => e.instanceLocation.startsWith(`${loc}/`))
  const out: StandardSchemaV1.Issue[] = []
  for (const e of errors) {
    if (CONTAINERS.has(e.keyword) && deeper(e.instanceLocation)) continue
    const path = pointerPath(e.instanceLocation)
    if (e.keyword === 'required') {
      const m = /"((?:[^"\\]|\\.)*)"/.exec(e.error)
      out.push({ message: 'Required property is missing', path: m ? [...path, m[1]!] : path })
    } else if (e.keyword === 'false') {
      out.push({ message: 'No value is allowed here (unknown property?)', path })
    } else {
      out.push({ message: e.error, path })
    }
  }
  return out.length > 0 ? out : [{ message: 'Invalid value' }]
}

/** Keywords whose failure only says "something inside failed". */
const CONTAINERS = new Set([
  'properties', 'patternProperties', 'additionalProperties', 'unevaluatedProperties', 'items', 'prefixItems',
  'additionalItems', 'unevaluatedItems', 'contains', '$ref', '$recursiveRef', '$dynamicRef', 'allOf', 'dependentSchemas',
  'dependencies', 'propertyNames', 'if', 'then', 'else',
])

/** `#/a/0/b~1c` → `['a', 0, 'b/c']` (digits become indices: the value's shape decides nothing here). */
function pointerPath(loc: string): PropertyKey[] {
  const p = loc.startsWith('#') ? loc.slice(1) : loc
  if (p === '' || p === '/') return []
  return p.slice(1).split('/').map((s) => {
    let k = s
    try {
      k = decodeURIComponent(s) // the validator URI-encodes the pointer
    } catch {
      // a key with a literal '%': kept as is
    }
    k = k.replace(/~1/g, '/').replace(/~0/g, '~')
    return /^(0|[1-9]\d*)$/.test(k) ? Number(k) : k
  })
}
