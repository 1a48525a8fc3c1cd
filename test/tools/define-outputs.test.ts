/**
 * The exact results of the argument and output rules of tools/define.ts: errors are results with
 * a code and a message that says what went wrong (docs/spec/lifecycle.md §5, L5: every call gets exactly one
 * result), and only storable content reaches a `tool/result` (P3: the log is lossless JSON).
 * Written against the survivors of the mutation run on tools/define.ts (issue 15 part 3).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, errorText, outputToContent, outputToOutcome, prepareCall, validateArguments } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'

const plain = defineTool({ name: 'w', description: '', parameters: z.object({}), execute: () => 1 }) as unknown as AnyTool

/** An output that is an error outcome: the result text is the message (errorOutcome's rule). */
function expectError(outcome: ReturnType<typeof outputToOutcome>, code: string, message: string): void {
  expect(outcome).toEqual({ content: [{ type: 'text', text: message }], error: { code, message } })
}

describe('arguments (docs/spec/lifecycle.md §5, L5: UNKNOWN_TOOL and INVALID_ARGS are results)', () => {
  it("UNKNOWN_TOOL names the tool the model asked for, and keeps the parsed arguments", () => {
    expect(prepareCall({ name: 'nope', arguments: '{"a":1}' }, new Map())).toEqual({
      tool: undefined,
      args: { a: 1 },
      problem: { code: 'UNKNOWN_TOOL', message: "Unknown tool 'nope'." },
    })
  })

  it('a schema whose transform throws is INVALID_ARGS with the thrown message, never a throw', () => {
    const t = defineTool({
      name: 'tx', description: '', parameters: z.object({ s: z.string().transform(() => { throw new Error('boom') }) }), execute: () => '',
    }) as unknown as AnyTool
    expect(validateArguments(t, { s: 'x' })).toEqual({
      ok: false,
      error: { code: 'INVALID_ARGS', message: "Invalid arguments for tool 'tx': validation threw: boom" },
    })
    expect(prepareCall({ name: 'tx', arguments: '{"s":"x"}' }, new Map([['tx', t]]))).toEqual({
      tool: t,
      args: { s: 'x' },
      problem: { code: 'INVALID_ARGS', message: "Invalid arguments for tool 'tx': validation threw: boom" },
    })
  })

  it('a schema with an async refinement cannot validate synchronously: INVALID_ARGS', () => {
    const t = defineTool({ name: 'as', description: '', parameters: z.object({ n: z.number() }).refine(async () => true), execute: () => '' }) as unknown as AnyTool
    const r = validateArguments(t, { n: 1 })
    expect(r.ok).toBe(false)
    if (!r.ok) {
      expect(r.error.code).toBe('INVALID_ARGS')
      expect(r.error.message).toMatch(/^Invalid arguments for tool 'as': validation threw: \S/)
    }
  })
})

describe('outputToContent: the conversion rule, exactly', () => {
  it('a function or a symbol is not JSON, even a function that carries a {content} list', () => {
    const f = Object.assign(() => 1, { content: [{ type: 'text', text: 'smuggled' }] })
    expect(outputToContent(f)).toEqual({ error: 'a function is not JSON' })
    expect(outputToContent(() => 1)).toEqual({ error: 'a function is not JSON' })
    expect(outputToContent(Symbol('s'))).toEqual({ error: 'a symbol is not JSON' })
  })

  it('an array is its JSON text, even an array that carries a {content} list', () => {
    const a = Object.assign([1, 2], { content: [{ type: 'text', text: 'smuggled' }] })
    expect(outputToContent(a)).toEqual({ content: [{ type: 'text', text: '[1,2]' }] })
  })

  it('null is the JSON text null', () => {
    expect(outputToContent(null)).toEqual({ content: [{ type: 'text', text: 'null' }] })
    expect(outputToContent(false)).toEqual({ content: [{ type: 'text', text: 'false' }] })
  })

  it('{content} that is not a list of blocks names the bad block', () => {
    const r = outputToContent({ content: [{ type: 'nope' }] })
    expect(r).not.toHaveProperty('content')
    expect((r as { error: string }).error).toMatch(/^\{content\} is not a list of blocks:\n.*\S/s)
    expect((r as { error: string }).error).toMatch(/\[0\]\.type/)
    // an object whose content is not an array is plain data, not blocks
    expect(outputToContent({ content: 'x' })).toEqual({ content: [{ type: 'text', text: '{"content":"x"}' }] })
  })

  it('a value JSON.stringify throws on is not JSON-serialisable, with the reason', () => {
    expect(outputToContent(10n)).toEqual({ error: 'not JSON-serialisable (Do not know how to serialize a BigInt)' })
    const cyc: Record<string, unknown> = {}
    cyc.self = cyc
    expect((outputToContent(cyc) as { error: string }).error).toMatch(/^not JSON-serialisable \(.*circular/is)
    const hostile = { toJSON: () => { throw new Error('no json today') } }
    expect(outputToContent(hostile)).toEqual({ error: 'not JSON-serialisable (no json today)' })
  })
})

describe('outputToOutcome: INVALID_TOOL_OUTPUT results, exactly (P3: only storable content is logged)', () => {
  it('an output that cannot be a result names the tool and the reason', () => {
    expectError(outputToOutcome(plain, () => 1), 'INVALID_TOOL_OUTPUT', "Tool 'w' returned an output that cannot be a result: a function is not JSON")
    expectError(outputToOutcome(plain, 10n), 'INVALID_TOOL_OUTPUT',
      "Tool 'w' returned an output that cannot be a result: not JSON-serialisable (Do not know how to serialize a BigInt)")
  })

  it('an output that cannot be stored names the lossy value and its path under content', () => {
    expectError(outputToOutcome(plain, 'lone \ud800'), 'INVALID_TOOL_OUTPUT',
      "Tool 'w' returned an output that cannot be stored: string has a lone surrogate at content[0].text")
    expectError(outputToOutcome(plain, { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b\udc00' }] }), 'INVALID_TOOL_OUTPUT',
      "Tool 'w' returned an output that cannot be stored: string has a lone surrogate at content[1].text")
  })

  it('a declared output schema that throws is INVALID_TOOL_OUTPUT with the thrown message, never a throw', () => {
    const t = defineTool({
      name: 'o', description: '', parameters: z.object({}), output: z.object({ n: z.number() }).transform(() => { throw new Error('bad out') }), execute: () => ({ n: 1 }),
    }) as unknown as AnyTool
    expectError(outputToOutcome(t, { n: 1 }), 'INVALID_TOOL_OUTPUT', "Tool 'o': output validation threw: bad out")
  })

  it('a declared output schema with an async refinement cannot validate synchronously', () => {
    const t = defineTool({
      name: 'oa', description: '', parameters: z.object({}), output: z.string().refine(async () => true), execute: () => 'x',
    }) as unknown as AnyTool
    const r = outputToOutcome(t, 'x')
    expect(r.error?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(r.error?.message).toMatch(/^Tool 'oa': output validation threw: \S/)
  })

  it('the declared output schema transforms before conversion', () => {
    const t = defineTool({
      name: 'ot', description: '', parameters: z.object({}), output: z.number().transform((n) => `n=${n}`),
      // the body returns the schema's input side (a number), typed as such since round 11
      execute: () => 1,
    }) as AnyTool
    expect(outputToOutcome(t, 4)).toEqual({ content: [{ type: 'text', text: 'n=4' }] })
  })

  it('types the body by the output schema\'s input side: returning the transformed type is a type error', () => {
    const t = defineTool({
      name: 'ot2', description: '', parameters: z.object({}), output: z.number().transform((n) => `n=${n}`),
      // @ts-expect-error the body must return the schema's input side (a number), not its output (a string)
      execute: () => 'n=4',
    })
    // and at run time that body's string fails the schema, as the type said it would
    expect(outputToOutcome(t as AnyTool, 'n=4').error?.code).toBe('INVALID_TOOL_OUTPUT')
  })
})

describe('errorText: the message of anything thrown', () => {
  it("an Error gives its message, or its name when the message is empty; anything else its String", () => {
    expect(errorText(new Error('m'))).toBe('m')
    expect(errorText(new TypeError(''))).toBe('TypeError')
    expect(errorText('boom')).toBe('boom')
    expect(errorText(42)).toBe('42')
    expect(errorText(undefined)).toBe('undefined')
    expect(errorText({ message: 'not an Error' })).toBe('[object Object]')
  })

  it('never throws: an unprintable value', () => {
    expect(errorText(Object.create(null))).toBe('unprintable error')
  })
})
