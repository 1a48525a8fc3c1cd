/**
 * Measures the JSON Schema validators considered for `jsonSchema()` (docs/decisions/json-schema-validator.md):
 * cold compile (schema object → ready validator, a fresh validator instance each time, as a tool
 * set built per agent or an MCP server's tool list would) and validation throughput on three
 * tool-sized schemas, and whether each answers draft 2020-12 and draft-07 keyword checks right.
 * Run: `npx tsx scripts/measure-json-schema-validators.ts` (a quiet machine gives steadier figures).
 */
import { Ajv } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsImport from 'ajv-formats'
import { Validator } from '@cfworker/json-schema'
import * as hj2020 from '@hyperjump/json-schema/draft-2020-12'
import '@hyperjump/json-schema/draft-07'
import '@hyperjump/json-schema/formats'

const addFormats = addFormatsImport as unknown as (ajv: unknown) => void
type Schema = Record<string, unknown>
const D2020 = 'https://json-schema.org/draft/2020-12/schema'
const D07 = 'http://json-schema.org/draft-07/schema#'

/** Three tool-sized schemas: a flat one, one with enums/arrays/anyOf, a nested one with $defs/$ref. */
const weather: Schema = { type: 'object', properties: { city: { type: 'string', minLength: 1 }, days: { type: 'integer', minimum: 1, maximum: 7 }, units: { enum: ['c', 'f'] } }, required: ['city'], additionalProperties: false }
const search: Schema = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 200 },
    limit: { type: 'integer', minimum: 1, maximum: 50 },
    sort: { type: 'string', enum: ['relevance', 'date', 'stars'] },
    filters: { type: 'array', maxItems: 5, items: { type: 'object', properties: { field: { type: 'string' }, value: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] } }, required: ['field', 'value'], additionalProperties: false } },
    since: { type: 'string', format: 'date-time' },
  },
  required: ['query'],
  additionalProperties: false,
}
const editDefs = { edit: { type: 'object', properties: { oldText: { type: 'string' }, newText: { type: 'string' }, line: { type: ['integer', 'null'], minimum: 1 } }, required: ['oldText', 'newText'], additionalProperties: false } }
const edit = (draft: '07' | '2020'): Schema => ({
  $schema: draft === '07' ? D07 : D2020,
  type: 'object',
  properties: {
    path: { type: 'string', pattern: '^[^\\0]+$' },
    edits: { type: 'array', minItems: 1, items: { $ref: draft === '07' ? '#/definitions/edit' : '#/$defs/edit' } },
    dryRun: { type: 'boolean' },
    author: { type: 'object', properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } }, required: ['name'], additionalProperties: false },
  },
  required: ['path', 'edits'],
  additionalProperties: false,
  [draft === '07' ? 'definitions' : '$defs']: editDefs,
})
const SCHEMAS: Array<{ name: string; schema: Schema; valid: unknown; invalid: unknown }> = [
  { name: 'weather', schema: { $schema: D2020, ...weather }, valid: { city: 'Paris', days: 3, units: 'c' }, invalid: { city: '', days: 9 } },
  { name: 'search', schema: { $schema: D07, ...search }, valid: { query: 'x', limit: 5, filters: [{ field: 'lang', value: 'ts' }, { field: 'n', value: null }], since: '2026-01-02T03:04:05Z' }, invalid: { query: 'x', filters: [{ field: 'lang', value: {} }] } },
  { name: 'edit (2020-12)', schema: edit('2020'), valid: { path: 'a.ts', edits: [{ oldText: 'a', newText: 'b', line: 3 }], author: { name: 'n', email: 'a@b.co' } }, invalid: { path: 'a.ts', edits: [{ oldText: 'a', line: 0 }] } },
  { name: 'edit (draft-07)', schema: edit('07'), valid: { path: 'a.ts', edits: [{ oldText: 'a', newText: 'b', line: null }] }, invalid: { path: 'a.ts', edits: [] } },
]

/** Keyword checks that differ between the drafts: [draft, schema, instance, expected validity]. */
const DRAFT_CHECKS: Array<[string, string, Schema, unknown, boolean]> = [
  ['2020-12', 'prefixItems', { $schema: D2020, prefixItems: [{ type: 'string' }], items: false }, ['a', 1], false],
  ['2020-12', '$defs/$ref', { $schema: D2020, $defs: { n: { type: 'number' } }, $ref: '#/$defs/n' }, 'x', false],
  ['2020-12', 'dependentRequired', { $schema: D2020, dependentRequired: { a: ['b'] } }, { a: 1 }, false],
  ['2020-12', 'unevaluatedProperties', { $schema: D2020, allOf: [{ properties: { a: {} } }], unevaluatedProperties: false }, { a: 1, b: 2 }, false],
  ['2020-12', 'format date-time', { $schema: D2020, type: 'string', format: 'date-time' }, 'not a date', false],
  ['draft-07', 'items (tuple) + additionalItems', { $schema: D07, items: [{ type: 'string' }], additionalItems: false }, ['a', 1], false],
  ['draft-07', 'definitions/$ref', { $schema: D07, definitions: { n: { type: 'number' } }, properties: { x: { $ref: '#/definitions/n' } } }, { x: 'y' }, false],
  ['draft-07', 'dependencies', { $schema: D07, dependencies: { a: ['b'] } }, { a: 1 }, false],
  ['draft-07', 'format email', { $schema: D07, type: 'string', format: 'email' }, 'nope', false],
]

interface Candidate {
  name: string
  /** schema → (value → valid?) ready to call synchronously (compile may be async). */
  compile(schema: Schema): Promise<(v: unknown) => boolean> | ((v: unknown) => boolean)
}

let uri = 0
const shared = { ajv07: new Ajv({ allErrors: true, strict: false }), ajv2020: new Ajv2020({ allErrors: true, strict: false }) }
addFormats(shared.ajv07)
addFormats(shared.ajv2020)
const candidates: Candidate[] = [
  {
    name: 'ajv 8 + ajv-formats',
    compile(schema) {
      const ajv = schema.$schema === D07 ? new Ajv({ allErrors: true, strict: false }) : new Ajv2020({ allErrors: true, strict: false })
      addFormats(ajv)
      const v = ajv.compile(schema)
      return (x) => v(x) as boolean
    },
  },
  {
    // one instance per draft for the process (how a library would hold it): compile only
    name: 'ajv 8 + ajv-formats, shared instances',
    compile(schema) {
      const ajv = schema.$schema === D07 ? shared.ajv07 : shared.ajv2020
      const v = ajv.compile(schema)
      ajv.removeSchema(schema) // else every compiled schema stays cached for the process
      return (x) => v(x) as boolean
    },
  },
  {
    name: '@cfworker/json-schema',
    compile(schema) {
      const v = new Validator(schema as never, schema.$schema === D07 ? '7' : '2020-12', false)
      return (x) => v.validate(x).valid
    },
  },
  {
    name: '@hyperjump/json-schema',
    async compile(schema) {
      const id = `https://turnlog.invalid/s/${uri++}`
      hj2020.registerSchema(schema as never, id)
      hj2020.setShouldValidateFormat(true)
      const v = await hj2020.validate(id)
      return (x) => v(x as never).valid
    },
  },
]

const now = () => performance.now()
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function main() {
  console.log(`node ${process.version}`)
  for (const c of candidates) {
    // first compile in the process (module warm-up), then the steady cold compile of a fresh instance
    let t = now()
    await c.compile(SCHEMAS[0]!.schema)
    const first = now() - t
    const compileMs: number[] = []
    for (let i = 0; i < 60; i++) {
      for (const s of SCHEMAS) {
        t = now()
        await c.compile(s.schema)
        compileMs.push(now() - t)
      }
    }
    const rows: string[] = []
    let opsTotal = 0
    for (const s of SCHEMAS) {
      const v = await c.compile(s.schema)
      if (v(s.valid) !== true || v(s.invalid) !== false) rows.push(`${s.name}: WRONG ANSWER`)
      const n = 20_000
      t = now()
      for (let i = 0; i < n; i++) { v(s.valid); v(s.invalid) }
      const ops = (2 * n) / ((now() - t) / 1000)
      opsTotal += ops
      rows.push(`${s.name}: ${Math.round(ops / 1000)}k validations/s`)
    }
    let right = 0
    const wrong: string[] = []
    for (const [draft, kw, schema, inst, expected] of DRAFT_CHECKS) {
      try {
        const v = await c.compile(schema)
        if (v(inst) === expected) right++
        else wrong.push(`${draft} ${kw}`)
      } catch (e) {
        wrong.push(`${draft} ${kw} (threw: ${(e as Error).message.slice(0, 60)})`)
      }
    }
    console.log(`\n${c.name}\n  first compile ${first.toFixed(1)} ms; cold compile median ${median(compileMs).toFixed(3)} ms per schema`)
    console.log(`  ${rows.join('; ')}; mean ${Math.round(opsTotal / SCHEMAS.length / 1000)}k/s`)
    console.log(`  draft checks ${right}/${DRAFT_CHECKS.length}${wrong.length ? ` — wrong: ${wrong.join(', ')}` : ''}`)
  }
}

await main()
