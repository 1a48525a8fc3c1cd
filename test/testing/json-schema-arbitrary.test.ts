/**
 * The JSON Schema → fast-check arbitrary behind `fuzzAgent`'s arguments (testing/fuzz/args.ts):
 * every value it generates validates against the schema it came from, by the validator
 * `jsonSchema()` uses, for tool-sized schemas in draft 2020-12 and draft-07 covering the keywords
 * tool schemas use (type, properties, required, enum, const, items and tuples, min/max,
 * minLength/maxLength, anyOf/oneOf, nullable, $ref, formats, patterns).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { arbFromJsonSchema } from '../../testing/fuzz/args.js'
import { jsonSchema, type JsonSchemaObject } from '../../tools/json-schema.js'

const D07 = 'http://json-schema.org/draft-07/schema#'
const D2020 = 'https://json-schema.org/draft/2020-12/schema'

const SCHEMAS: Record<string, JsonSchemaObject> = {
  'scalars with bounds': {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 2, maxLength: 5 },
      n: { type: 'integer', minimum: -3, maximum: 3 },
      x: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      step: { type: 'number', multipleOf: 0.5, minimum: 0, maximum: 10 },
      flag: { type: 'boolean' },
      nothing: { type: 'null' },
    },
    required: ['name', 'n', 'x'],
    additionalProperties: false,
  },
  'enum, const, anyOf, oneOf': {
    type: 'object',
    properties: {
      unit: { enum: ['c', 'f', 1, null] },
      kind: { const: 'weather' },
      id: { anyOf: [{ type: 'string', minLength: 1 }, { type: 'integer', minimum: 0 }] },
      shape: { oneOf: [{ type: 'object', properties: { r: { type: 'number' } }, required: ['r'], additionalProperties: false }, { type: 'string' }] },
      either: { type: ['string', 'integer'] },
    },
    required: ['unit', 'kind', 'id', 'shape'],
  },
  'nullable (OpenAPI 3.0)': {
    type: 'object',
    properties: {
      note: { type: 'string', nullable: true },
      level: { type: 'string', enum: ['low', 'high'], nullable: true },
      count: { type: 'integer', minimum: 1, nullable: true },
    },
    required: ['note', 'level', 'count'],
  },
  'arrays (2020-12: items, prefixItems)': {
    $schema: D2020,
    type: 'object',
    properties: {
      tags: { type: 'array', items: { type: 'string', maxLength: 3 }, minItems: 1, maxItems: 3 },
      pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
      matrix: { type: 'array', items: { type: 'array', items: { type: 'integer' }, maxItems: 2 }, maxItems: 2 },
    },
    required: ['tags', 'pair'],
  },
  'arrays (draft-07: items as a tuple, additionalItems)': {
    $schema: D07,
    type: 'object',
    properties: {
      pair: { type: 'array', items: [{ type: 'string' }, { type: 'boolean' }], additionalItems: false, minItems: 2 },
      head: { type: 'array', items: [{ const: 'h' }], additionalItems: { type: 'integer' } },
    },
    required: ['pair', 'head'],
  },
  'refs (2020-12 $defs, recursive)': {
    $schema: D2020,
    type: 'object',
    properties: { root: { $ref: '#/$defs/node' } },
    required: ['root'],
    $defs: { node: { type: 'object', properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['label'], additionalProperties: false } },
  },
  'refs (draft-07 definitions)': {
    $schema: D07,
    type: 'object',
    properties: { a: { $ref: '#/definitions/point' }, b: { $ref: '#/definitions/point' } },
    required: ['a'],
    definitions: { point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] } },
  },
  'formats and patterns': {
    type: 'object',
    properties: {
      email: { type: 'string', format: 'email' },
      id: { type: 'string', format: 'uuid' },
      at: { type: 'string', format: 'date-time' },
      day: { type: 'string', format: 'date' },
      ip: { type: 'string', format: 'ipv4' },
      code: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{2}$' },
    },
    required: ['email', 'id', 'at', 'day', 'ip', 'code'],
  },
  'open objects (additionalProperties a schema, propertyNames)': {
    type: 'object',
    properties: { fixed: { type: 'integer' } },
    additionalProperties: { type: 'string' },
    propertyNames: { pattern: '^[a-z]+$' },
  },
}

describe('arbFromJsonSchema: generated values validate against their schema (jsonSchema() validator)', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`${name}: 300 values`, () => {
      const validate = jsonSchema(schema)['~standard'].validate
      fc.assert(fc.property(arbFromJsonSchema(schema), (value) => {
        // through JSON, as a model's arguments arrive
        const r = validate(JSON.parse(JSON.stringify(value))) as { issues?: unknown }
        if (r.issues) throw new Error(`${JSON.stringify(value)}: ${JSON.stringify(r.issues)}`)
      }), { numRuns: 300, seed: 5 })
    })
  }

  it('nullable: null is generated as well as the typed values', () => {
    const sample = fc.sample(arbFromJsonSchema({ type: 'string', nullable: true }), { numRuns: 200, seed: 1 })
    expect(sample).toContain(null)
    expect(sample.some((v) => typeof v === 'string')).toBe(true)
  })
})
