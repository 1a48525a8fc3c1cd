/** A walk over a JSON Schema's subschemas (draft-04 to 2020-12 keywords). */

type Json = Record<string, unknown>

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Keywords holding one subschema, a list of them, or a map of them. */
const ONE = ['items', 'additionalItems', 'contains', 'not', 'if', 'then', 'else', 'additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties']
const LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems', 'items']
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']

/**
 * Calls `visit` on `schema` and every subschema below it, parents first (in place: `visit` may
 * change a node). `skip` names keywords not to descend into. Stops 64 levels down.
 */
export function walkSchema(schema: Json, visit: (node: Json) => void, skip: ReadonlySet<string> = new Set(), depth = 0): void {
  if (depth > 64) return
  visit(schema)
  for (const k of ONE) if (!skip.has(k) && isObj(schema[k])) walkSchema(schema[k], visit, skip, depth + 1)
  for (const k of LIST) if (!skip.has(k) && Array.isArray(schema[k])) for (const s of schema[k] as unknown[]) if (isObj(s)) walkSchema(s, visit, skip, depth + 1)
  for (const k of MAP) if (!skip.has(k) && isObj(schema[k])) for (const s of Object.values(schema[k] as Json)) if (isObj(s)) walkSchema(s, visit, skip, depth + 1)
}
