/**
 * `defineTool` refuses a malformed definition at definition time with a coded `INVALID_ARGUMENT`
 * that names the tool and the field (never a `TypeError` from deep inside, never later in a
 * turn), and `toolSpec` (what the model sees, R3) is cached per tool object but follows a
 * renamed or re-described tool. Written against the survivors of the mutation run on
 * tools/define.ts (issue 15 part 3).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { TurnlogError } from '../../events/index.js'
import { defineTool, toolSpec } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'

/** What `f` threw (fails the test when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f()
  } catch (e) {
    return e
  }
  throw new Error('expected a throw')
}

/** Asserts a coded `INVALID_ARGUMENT` with this exact message (before the place) and field. */
function expectInvalid(err: unknown, message: string, field: string | undefined): void {
  expect(TurnlogError.is(err, 'INVALID_ARGUMENT')).toBe(true)
  const e = err as TurnlogError
  expect(e.field).toBe(field)
  expect(e.message).toBe(field === undefined ? `INVALID_ARGUMENT: ${message}` : `INVALID_ARGUMENT: ${message} (field ${field})`)
}

const ok = { name: 'x', description: 'd', parameters: z.object({}), execute: () => '' }
const define = (over: Record<string, unknown>) => () => defineTool({ ...ok, ...over } as unknown as Parameters<typeof defineTool>[0])

/** Values that are not zod schemas, including near misses (half the duck type, a function). */
const notSchemas: Array<[string, unknown]> = [
  ['null', null],
  ['a string', 'z.string()'],
  ['a plain object', {}],
  ['safeParse without _zod', { safeParse: () => ({ success: true, data: {} }) }],
  ['_zod without safeParse', { _zod: { def: { type: 'object' } } }],
  ['_zod with a non-function safeParse', { _zod: { def: { type: 'object' } }, safeParse: 1 }],
  ['a function with _zod and safeParse', Object.assign(() => {}, { _zod: { def: { type: 'object' } }, safeParse: () => ({ success: true, data: {} }) })],
  // near misses of Standard Schema v1
  ['~standard of another version', { '~standard': { version: 2, vendor: 'x', validate: () => ({ value: 1 }) } }],
  ['~standard without validate', { '~standard': { version: 1, vendor: 'x' } }],
  ['~standard with a non-function validate', { '~standard': { version: 1, vendor: 'x', validate: 'yes' } }],
  ['~standard that is null', { '~standard': null }],
]

describe('defineTool: a malformed definition is a coded INVALID_ARGUMENT naming the tool and field', () => {
  it('a definition that is not an object', () => {
    for (const def of [null, undefined, 3, 'weather']) {
      expectInvalid(thrown(() => defineTool(def as never)), 'a tool definition must be an object', undefined)
    }
  })

  it('a missing or empty name', () => {
    expectInvalid(thrown(define({ name: '' })), 'a tool needs a non-empty name', 'name')
    expectInvalid(thrown(define({ name: 7 })), 'a tool needs a non-empty name', 'name')
    expectInvalid(thrown(define({ name: undefined })), 'a tool needs a non-empty name', 'name')
  })

  it('a description that is not a string', () => {
    expectInvalid(thrown(define({ description: undefined })), "tool 'x': description must be a string", 'description')
    expectInvalid(thrown(define({ description: 1 })), "tool 'x': description must be a string", 'description')
  })

  it('parameters that are not a schema (near misses of the duck type included)', () => {
    for (const [what, v] of notSchemas) {
      const err = thrown(define({ parameters: v }))
      expect(TurnlogError.is(err), what).toBe(true)
      expectInvalid(err, "tool 'x': parameters must be a schema (a Standard Schema such as zod, valibot or arktype, or jsonSchema({...}))", 'parameters')
    }
  })

  it('an output that is declared but is not a schema', () => {
    for (const [what, v] of notSchemas) {
      const err = thrown(define({ output: v }))
      expect(TurnlogError.is(err), what).toBe(true)
      expectInvalid(err, "tool 'x': output must be a schema (a Standard Schema such as zod, valibot or arktype, or jsonSchema({...}))", 'output')
    }
    // declared as a zod schema, or not declared: accepted
    expect(define({ output: z.object({ n: z.number() }) })()).toHaveProperty('name', 'x')
    expect(define({ output: undefined })()).toHaveProperty('name', 'x')
  })

  it('an execute that is not a function', () => {
    expectInvalid(thrown(define({ execute: 3 })), "tool 'x': execute must be a function", 'execute')
    expectInvalid(thrown(define({ execute: undefined })), "tool 'x': execute must be a function", 'execute')
  })

  it('an isConcurrencySafe that is not a function (absent is fine)', () => {
    expectInvalid(thrown(define({ isConcurrencySafe: true })), "tool 'x': isConcurrencySafe must be a function", 'isConcurrencySafe')
    expect(define({ isConcurrencySafe: undefined })()).toHaveProperty('name', 'x')
    expect(define({ isConcurrencySafe: () => true })()).toHaveProperty('name', 'x')
  })

  it('a timeoutMs that is not a positive finite number (absent is fine)', () => {
    // a symbol, and an object whose valueOf throws, make `> 0` throw: the type is checked first
    const hostile = { valueOf: () => { throw new Error('valueOf') } }
    for (const t of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '5', null, 5n, Symbol('t'), hostile]) {
      expectInvalid(thrown(define({ timeoutMs: t })), "tool 'x': timeoutMs must be a positive finite number", 'timeoutMs')
    }
    expect(define({ timeoutMs: 0.5 })()).toHaveProperty('timeoutMs', 0.5)
    expect(define({ timeoutMs: undefined })()).toHaveProperty('name', 'x')
  })

  it('a schema JSON Schema cannot express: the message carries the converter\'s reason, the cause is kept', () => {
    const err = thrown(define({ name: 'd', parameters: z.object({ when: z.date() }) }))
    expectInvalid(err, "tool 'd': its parameters (zod 4) have no JSON Schema (Date cannot be represented in JSON Schema): use only types JSON Schema can express on the input side (no z.date(), z.custom(), z.bigint()…), or give the JSON Schema with jsonSchema()", 'parameters')
    const cause = (err as Error).cause
    expect(cause).toBeInstanceOf(Error)
    expect((cause as Error).message).toBe('Date cannot be represented in JSON Schema')
  })

  it("the message's tool label is never empty, even for a name getter that answers differently on each read", () => {
    // A hostile definition: the name reads '' once (so the label falls back to 'tool'), then 'a'.
    let reads = 0
    const def = {
      ...ok,
      get name() {
        reads++
        return reads === 2 ? '' : 'a'
      },
      description: 1,
    }
    const err = thrown(() => defineTool(def as never))
    expect(TurnlogError.is(err, 'INVALID_ARGUMENT')).toBe(true)
    expect((err as TurnlogError).field).toBe('description')
    expect((err as Error).message).toMatch(/^INVALID_ARGUMENT: tool(?: 'a')?: description must be a string/)
  })
})

describe('toolSpec cache per tool object (R3: the spec is what the model sees)', () => {
  it('gives the same spec object for an unchanged tool', () => {
    const t = defineTool({ ...ok, name: 'c' }) as unknown as AnyTool
    expect(toolSpec(t)).toBe(toolSpec(t))
  })

  it('follows a tool renamed after its first spec', () => {
    const t = defineTool({ ...ok, name: 'before' }) as unknown as AnyTool
    expect(toolSpec(t).name).toBe('before')
    ;(t as { name: string }).name = 'after'
    expect(toolSpec(t)).toEqual({ name: 'after', description: 'd', parameters: toolSpec(t).parameters })
    expect(toolSpec(t).name).toBe('after')
  })

  it('follows a tool re-described after its first spec', () => {
    const t = defineTool({ ...ok, name: 'r', description: 'old' }) as unknown as AnyTool
    expect(toolSpec(t).description).toBe('old')
    ;(t as { description: string }).description = 'new'
    expect(toolSpec(t).description).toBe('new')
    expect(toolSpec(t).name).toBe('r')
  })
})
