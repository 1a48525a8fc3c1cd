/**
 * `jsonSchema()`: a plain JSON Schema as a tool schema (draft 2020-12 and draft-07 as MCP servers
 * send them), its refusals of a schema that is not one, and its issues (one per problem, at the
 * field's path) through `validateArguments` (docs/spec/lifecycle.md §5: `INVALID_ARGS`).
 */
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/index.js'
import { defineTool, toolSpec, validateArguments } from '../../tools/define.js'
import { jsonSchema } from '../../tools/json-schema.js'
import type { AnyTool } from '../../tools/types.js'

const D07 = 'http://json-schema.org/draft-07/schema#'

function tool(parameters: ReturnType<typeof jsonSchema>): AnyTool {
  return defineTool({ name: 'mcp_edit', description: 'edit', parameters, execute: () => 'ok' }) as AnyTool
}

function problems(t: AnyTool, args: unknown): string {
  const r = validateArguments(t, args)
  if (r.ok) throw new Error('expected INVALID_ARGS')
  expect(r.error.code).toBe('INVALID_ARGS')
  return r.error.message
}

const refused = (f: () => unknown) => {
  try {
    f()
  } catch (e) {
    expect(TurnlogError.is(e)).toBe(true)
    return e as TurnlogError
  }
  throw new Error('did not throw')
}

describe('jsonSchema(): validation by the schema as given', () => {
  const edit = tool(jsonSchema({
    $schema: D07,
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1 },
      edits: { type: 'array', minItems: 1, items: { $ref: '#/definitions/edit' } },
      mode: { enum: ['replace', 'insert'] },
      'dry run': { type: 'boolean' },
    },
    required: ['path', 'edits'],
    additionalProperties: false,
    definitions: { edit: { type: 'object', properties: { oldText: { type: 'string' }, line: { type: 'integer', minimum: 1 } }, required: ['oldText'] } },
  }))

  it('valid arguments pass unchanged', () => {
    const args = { path: 'a.ts', edits: [{ oldText: 'x', line: 2 }], mode: 'insert' }
    expect(validateArguments(edit, args)).toEqual({ ok: true, args })
  })

  it('each problem is one line at its field: a missing required property, a nested index, a bad enum, an unknown key, a key that needs quoting', () => {
    const m = problems(edit, { edits: [{ oldText: 'x' }, { line: 0 }], mode: 'delete', extra: 1, 'dry run': 'yes' })
    expect(m.split('\n')[0]).toBe("Invalid arguments for tool 'mcp_edit':")
    const at = m.split('\n').filter((l) => l.startsWith('  → at ')).map((l) => l.slice(7)).sort()
    expect(at).toEqual(['["dry run"]', 'edits[1].line', 'edits[1].oldText', 'extra', 'mode', 'path'])
    // no "something inside failed" lines: every ✖ line is followed by its path
    expect(m.split('\n').filter((l) => l.startsWith('✖ ')).length).toBe(at.length)
    expect(m).toContain('✖ Required property is missing\n  → at path')
  })

  it('a value that is not an object at all: one problem without a path', () => {
    expect(problems(edit, 'not json')).toMatch(/^Invalid arguments for tool 'mcp_edit':\n✖ [^\n]+$/)
  })

  it('draft-07 and 2020-12 differ where they should: items as a tuple vs prefixItems', () => {
    const d07 = tool(jsonSchema({ $schema: D07, type: 'array', items: [{ type: 'string' }], additionalItems: false }))
    expect(validateArguments(d07, ['a']).ok).toBe(true)
    expect(validateArguments(d07, ['a', 'b']).ok).toBe(false)
    const d2020 = tool(jsonSchema({ type: 'array', prefixItems: [{ type: 'string' }], items: false }))
    expect(validateArguments(d2020, ['a']).ok).toBe(true)
    expect(problems(d2020, ['a', 2])).toContain('→ at [1]')
    // options.draft for a schema without $schema
    const legacy = tool(jsonSchema({ type: 'array', items: [{ type: 'string' }], additionalItems: false }, { draft: '07' }))
    expect(validateArguments(legacy, ['a', 'b']).ok).toBe(false)
  })

  it('formats are checked', () => {
    const t = tool(jsonSchema({ type: 'object', properties: { at: { type: 'string', format: 'date-time' } } }))
    expect(validateArguments(t, { at: '2026-01-02T03:04:05Z' }).ok).toBe(true)
    expect(problems(t, { at: 'yesterday' })).toContain('→ at at')
  })

  it('the model is sent the schema as written, without $schema; later changes to the caller\'s object change nothing', () => {
    const raw: Record<string, unknown> = { $schema: D07, type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }
    const t = tool(jsonSchema(raw))
    ;(raw.properties as Record<string, unknown>).q = { type: 'number' }
    expect(toolSpec(t).parameters).toEqual({ type: 'object', properties: { q: { type: 'string' } }, required: ['q'] })
    expect(validateArguments(t, { q: 'x' }).ok).toBe(true)
  })
})

describe('jsonSchema(): a schema that is not one is a coded INVALID_ARGUMENT naming the field', () => {
  it('not an object', () => {
    for (const s of [null, 'x', [], true]) {
      const e = refused(() => jsonSchema(s as never))
      expect(e.code).toBe('INVALID_ARGUMENT')
      expect(e.message).toBe('INVALID_ARGUMENT: jsonSchema: the schema must be a JSON object (field schema)')
    }
  })

  it('not JSON (the schema goes into the log)', () => {
    const e = refused(() => jsonSchema({ type: 'number', maximum: Number.NaN }))
    expect(e.field).toBe('schema.maximum')
    expect(e.message).toMatch(/^INVALID_ARGUMENT: jsonSchema: the schema is not JSON: .+ at schema\.maximum \(field schema\.maximum\)$/)
  })

  it('a $schema naming no draft it validates, and an unknown options.draft', () => {
    const e = refused(() => jsonSchema({ $schema: 'https://example.com/my-dialect', type: 'object' }))
    expect(e.field).toBe('schema.$schema')
    expect(e.message).toContain('"https://example.com/my-dialect" is not a JSON Schema draft turnlog validates')
    expect(refused(() => jsonSchema({ type: 'object' }, { draft: '3' as never })).field).toBe('options.draft')
  })
})
