/**
 * Tool definitions, argument validation and output conversion, exactly (issue 15 part 3): each
 * refused definition names its field (coded error naming the field, PREAMBLE), each error result
 * names the tool and the reason (the result text the model reads, L5), and the output rules of
 * ARCHITECTURE "Decisions: tools" hold value by value.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { TurnlogError } from '../../events/index.js'
import {
  defineTool, errorText, outputToContent, outputToOutcome, prepareCall, toolSpec, validateArguments,
} from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'

function refusal(def: unknown): TurnlogError {
  try {
    defineTool(def as never)
  } catch (e) {
    if (TurnlogError.is(e, 'INVALID_ARGUMENT')) return e
    throw e
  }
  throw new Error('defineTool accepted the definition')
}

const base = { name: 'grep', description: 'd', parameters: z.object({}), execute: () => '' }

describe('defineTool refuses malformed definitions, naming the field (INVALID_ARGUMENT)', () => {
  it('a definition that is not an object', () => {
    for (const def of [null, 3, 'grep']) {
      const e = refusal(def)
      expect(e.message).toBe('INVALID_ARGUMENT: a tool definition must be an object')
      expect(e.field).toBeUndefined()
    }
  })

  it.each([
    ['name', { name: '' }, 'a tool needs a non-empty name'],
    ['name', { name: 7 }, 'a tool needs a non-empty name'],
    ['description', { description: 3 }, "tool 'grep': description must be a string"],
    ['parameters', { parameters: {} }, "tool 'grep': parameters must be a schema (a Standard Schema such as zod, valibot or arktype, or jsonSchema({...}))"],
    // not a schema although it has a safeParse: zod 4 schemas carry `_zod`, the others `~standard`
    ['parameters', { parameters: { safeParse: () => ({ success: true }) } }, "tool 'grep': parameters must be a schema (a Standard Schema such as zod, valibot or arktype, or jsonSchema({...}))"],
    ['output', { output: 3 }, "tool 'grep': output must be a schema (a Standard Schema such as zod, valibot or arktype, or jsonSchema({...}))"],
    ['output', { output: { safeParse: () => ({ success: true }) } }, "tool 'grep': output must be a schema (a Standard Schema such as zod, valibot or arktype, or jsonSchema({...}))"],
    ['output', { output: { _zod: {} } }, "tool 'grep': output must be a schema (a Standard Schema such as zod, valibot or arktype, or jsonSchema({...}))"],
    ['execute', { execute: 'run' }, "tool 'grep': execute must be a function"],
    ['isConcurrencySafe', { isConcurrencySafe: true }, "tool 'grep': isConcurrencySafe must be a function"],
    ['timeoutMs', { timeoutMs: 0 }, "tool 'grep': timeoutMs must be a positive finite number"],
    ['timeoutMs', { timeoutMs: -5 }, "tool 'grep': timeoutMs must be a positive finite number"],
    ['timeoutMs', { timeoutMs: Number.POSITIVE_INFINITY }, "tool 'grep': timeoutMs must be a positive finite number"],
    ['timeoutMs', { timeoutMs: '50' }, "tool 'grep': timeoutMs must be a positive finite number"],
  ])('field %s: %j', (field, patch, message) => {
    const e = refusal({ ...base, ...patch })
    expect(e.field).toBe(field)
    expect(e.message).toBe(`INVALID_ARGUMENT: ${message} (field ${field})`)
  })

  it('accepts a positive timeoutMs, an output schema and a classifier', () => {
    const t = defineTool({ ...base, timeoutMs: 0.5, output: z.string(), isConcurrencySafe: () => true })
    expect(t.timeoutMs).toBe(0.5)
  })

  it('a schema JSON Schema cannot express: field parameters, the converter error as cause', () => {
    const e = refusal({ ...base, name: 'when', parameters: z.object({ at: z.date() }) })
    expect(e.field).toBe('parameters')
    expect(e.message).toMatch(/^INVALID_ARGUMENT: tool 'when': its parameters \(zod 4\) have no JSON Schema \(.+\): .+ \(field parameters\)$/)
    expect(e.cause).toBeInstanceOf(Error)
    expect(e.message).toContain((e.cause as Error).message)
  })
})

describe('toolSpec is cached per tool object, and follows a renamed tool (R3: the header is what the model saw)', () => {
  it('R3: the same object gives the same spec; a changed name or description gives a new one', () => {
    const t = defineTool({ ...base }) as unknown as AnyTool
    const first = toolSpec(t)
    expect(toolSpec(t)).toBe(first)
    t.name = 'find'
    expect(toolSpec(t)).toMatchObject({ name: 'find', description: 'd' })
    t.description = 'new words'
    expect(toolSpec(t)).toMatchObject({ name: 'find', description: 'new words' })
    const again = toolSpec(t)
    expect(toolSpec(t)).toBe(again)
  })
})

describe('arguments and outputs: the error texts name the tool and the reason (L5)', () => {
  it('L5: UNKNOWN_TOOL names the tool', () => {
    expect(prepareCall({ name: 'nope', arguments: '{}' }, new Map()).problem).toEqual({ code: 'UNKNOWN_TOOL', message: "Unknown tool 'nope'." })
  })

  it('L5: a parameters schema that cannot validate synchronously makes the call INVALID_ARGS (it never throws)', () => {
    const t = defineTool({ ...base, parameters: z.object({}).refine(async () => true) }) as unknown as AnyTool
    const r = validateArguments(t, {})
    expect(r.ok).toBe(false)
    if (!r.ok) {
      expect(r.error.code).toBe('INVALID_ARGS')
      expect(r.error.message).toMatch(/^Invalid arguments for tool 'grep': validation threw: ./)
    }
  })

  it('L5: an output schema that throws makes INVALID_TOOL_OUTPUT', () => {
    const t = defineTool({ ...base, output: z.string().refine(async () => true) }) as unknown as AnyTool
    const o = outputToOutcome(t, 'x')
    expect(o.error?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(o.error?.message).toMatch(/^Tool 'grep': output validation threw: ./)
    expect(o.content).toEqual([{ type: 'text', text: o.error?.message }])
  })

  it('L5: output that cannot be a result, or cannot be stored, is INVALID_TOOL_OUTPUT with the reason', () => {
    const t = defineTool({ ...base }) as unknown as AnyTool
    expect(outputToOutcome(t, { content: [{ type: 'nope' }] }).error?.message).toMatch(
      /^Tool 'grep' returned an output that cannot be a result: \{content\} is not a list of blocks:\n/,
    )
    expect(outputToOutcome(t, 10n).error?.message).toMatch(/^Tool 'grep' returned an output that cannot be a result: not JSON-serialisable \(.+\)$/)
    expect(outputToOutcome(t, Symbol('s')).error?.message).toBe("Tool 'grep' returned an output that cannot be a result: a symbol is not JSON")
    expect(outputToOutcome(t, 'lone \ud800').error?.message).toMatch(/^Tool 'grep' returned an output that cannot be stored: .+ at content\[0\]\.text$/)
  })
})

describe('outputToContent, value by value (ARCHITECTURE "Outputs")', () => {
  it('null is its JSON text', () => {
    expect(outputToContent(null)).toEqual({ content: [{ type: 'text', text: 'null' }] })
  })

  it('only a plain object with a content list is rich: an array or a function carrying `content` is not', () => {
    const arr = Object.assign([1], { content: [] })
    expect(outputToContent(arr)).toEqual({ content: [{ type: 'text', text: '[1]' }] })
    const fn = Object.assign(() => 1, { content: [{ type: 'text', text: 'x' }] })
    expect(outputToContent(fn)).toEqual({ error: 'a function is not JSON' })
  })

  it('malformed blocks, cycles, BigInt and values without JSON are errors, not content', () => {
    expect(outputToContent({ content: [{ type: 'nope' }] })).toEqual({ error: expect.stringMatching(/^\{content\} is not a list of blocks:\n./) })
    const cyc: Record<string, unknown> = {}
    cyc.self = cyc
    expect(outputToContent(cyc)).toEqual({ error: expect.stringMatching(/^not JSON-serialisable \([\s\S]+\)$/) })
    expect(outputToContent(10n)).toEqual({ error: expect.stringMatching(/^not JSON-serialisable \(.+\)$/) })
    expect(outputToContent(Symbol('s'))).toEqual({ error: 'a symbol is not JSON' })
  })
})

describe('errorText: the message of anything thrown', () => {
  it('an Error gives its message (or its name), anything else its String, an unprintable value a fixed text', () => {
    expect(errorText(new Error('kaput'))).toBe('kaput')
    expect(errorText(new TypeError(''))).toBe('TypeError')
    expect(errorText('plain words')).toBe('plain words')
    expect(errorText({ toString: () => 'custom' })).toBe('custom')
    expect(errorText({ toString: () => { throw new Error('no') } })).toBe('unprintable error')
  })
})
