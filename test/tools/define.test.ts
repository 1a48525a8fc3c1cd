import { readFileSync } from 'node:fs'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import { TurnlogError } from '../../events/index.js'
import { classify } from '../../tools/classify.js'
import {
  defineTool, outputToContent, outputToOutcome, parseArguments, prepareCall, toolSpec, validateArguments,
} from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'

const weather = defineTool({
  name: 'weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, tempC: 21 }),
})

describe('defineTool and toolSpec', () => {
  it('infers the argument type from the zod schema', () => {
    defineTool({
      name: 't',
      description: '',
      parameters: z.object({ a: z.number(), b: z.string().optional() }),
      isConcurrencySafe: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ a: number; b?: string | undefined }>()
        return true
      },
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ a: number; b?: string | undefined }>()
        return args.a
      },
    })
  })

  it("gives the example log's request/header tool shape exactly", () => {
    const lines = readFileSync(new URL('../../examples/weather.jsonl', import.meta.url), 'utf8').trim().split('\n')
    const header = lines.map((l) => JSON.parse(l) as { type: string; data: { tools: unknown[] } }).find((e) => e.type === 'request/header')!
    expect(toolSpec(weather as unknown as AnyTool)).toEqual(header.data.tools[0])
    expect(toolSpec(weather as unknown as AnyTool)).not.toHaveProperty('parameters.$schema')
  })

  it('describes the input side: a field with a default is optional; loose objects stay open; nested objects are closed', () => {
    const t = defineTool({
      name: 't',
      description: 'd',
      parameters: z.object({ a: z.string().default('x'), nested: z.object({ b: z.number() }), open: z.looseObject({}) }),
      execute: () => '',
    })
    const p = toolSpec(t as unknown as AnyTool).parameters as {
      required: string[]; additionalProperties: unknown; properties: { nested: { additionalProperties: unknown }; open: { additionalProperties: unknown } }
    }
    expect(p.required).toEqual(['nested', 'open'])
    expect(p.additionalProperties).toBe(false)
    expect(p.properties.nested.additionalProperties).toBe(false)
    expect(p.properties.open.additionalProperties).toEqual({})
  })

  it('refuses a schema that JSON Schema cannot express, and malformed definitions, with INVALID_ARGUMENT', () => {
    const bad = [
      () => defineTool({ name: 'd', description: '', parameters: z.object({ when: z.date() }), execute: () => '' }),
      () => defineTool({ name: '', description: '', parameters: z.object({}), execute: () => '' }),
      () => defineTool({ name: 'x', description: '', parameters: {} as z.ZodType, execute: () => '' }),
      () => defineTool({ name: 'x', description: '', parameters: z.object({}), timeoutMs: 0, execute: () => '' }),
      () => defineTool({ name: 'x', description: '', parameters: z.object({}), execute: 3 as never }),
    ]
    for (const f of bad) {
      let err: unknown
      try {
        f()
      } catch (e) {
        err = e
      }
      expect(TurnlogError.is(err, 'INVALID_ARGUMENT')).toBe(true)
    }
  })
})

describe('toolSpec cache per parameters schema (B7: tool sets rebuilt per agent)', () => {
  it('gives tools that share a schema equal specs with their own parameters objects (R3: the header is what the model saw)', () => {
    const shared = z.object({ n: z.number(), tag: z.string().default('x') })
    const a = defineTool({ name: 'a', description: 'A', parameters: shared, execute: () => 1 }) as unknown as AnyTool
    const b = defineTool({ name: 'b', description: 'B', parameters: shared, execute: () => 1 }) as unknown as AnyTool
    const fresh = defineTool({ name: 'a', description: 'A', parameters: z.object({ n: z.number(), tag: z.string().default('x') }), execute: () => 1 }) as unknown as AnyTool
    const sa = toolSpec(a)
    const sb = toolSpec(b)
    expect(sa).toEqual(toolSpec(fresh))
    expect(sb).toEqual({ ...sa, name: 'b', description: 'B' })
    expect(sb.parameters).toEqual(sa.parameters)
    expect(sb.parameters).not.toBe(sa.parameters)
  })
})

describe('arguments', () => {
  it('parseArguments: empty is {}, JSON is parsed, anything else is the raw string', () => {
    expect(parseArguments('')).toEqual({})
    expect(parseArguments('  ')).toEqual({})
    expect(parseArguments('{"a":1}')).toEqual({ a: 1 })
    expect(parseArguments('{"a":')).toBe('{"a":')
    expect(parseArguments('hello')).toBe('hello')
  })

  it('INVALID_ARGS carries the zod issues; invalid JSON reaches validation as the raw string', () => {
    const r = validateArguments(weather as unknown as AnyTool, { city: 3 })
    expect(r.ok).toBe(false)
    if (!r.ok) {
      expect(r.error.code).toBe('INVALID_ARGS')
      expect(r.error.message).toMatch(/expected string, received number/)
      expect(r.error.message).toMatch(/city/)
    }
    const raw = prepareCall({ name: 'weather', arguments: '{city' }, new Map([['weather', weather as unknown as AnyTool]]))
    expect(raw.problem?.code).toBe('INVALID_ARGS')
    expect(raw.args).toBe('{city')
    expect(raw.problem?.message).toMatch(/expected object, received string/)
  })

  it('a schema that accepts a string receives the raw non-JSON text', () => {
    const t = defineTool({ name: 's', description: '', parameters: z.string(), execute: (s) => s })
    expect(prepareCall({ name: 's', arguments: 'plain words' }, new Map([['s', t as unknown as AnyTool]]))).toEqual({ tool: t, args: 'plain words' })
  })

  it('UNKNOWN_TOOL when the registry has no such tool', () => {
    expect(prepareCall({ name: 'nope', arguments: '' }, new Map()).problem?.code).toBe('UNKNOWN_TOOL')
  })
})

describe('outputs', () => {
  it('a string is one text block; {content} is taken as is; undefined is no block; other values are JSON text', () => {
    expect(outputToContent('hi')).toEqual({ content: [{ type: 'text', text: 'hi' }] })
    expect(outputToContent({ content: [{ type: 'image', mediaType: 'image/png', data: 'AA==' }] })).toEqual({
      content: [{ type: 'image', mediaType: 'image/png', data: 'AA==' }],
    })
    expect(outputToContent(undefined)).toEqual({ content: [] })
    expect(outputToContent({ a: [1, 2] })).toEqual({ content: [{ type: 'text', text: '{"a":[1,2]}' }] })
    expect(outputToContent(42)).toEqual({ content: [{ type: 'text', text: '42' }] })
    expect(outputToContent([1])).toEqual({ content: [{ type: 'text', text: '[1]' }] })
  })

  it('INVALID_TOOL_OUTPUT: the declared output schema fails, malformed blocks, not JSON, not storable', () => {
    const typed = defineTool({ name: 'o', description: '', parameters: z.object({}), output: z.object({ n: z.number() }), execute: () => ({ n: 1 }) })
    const any = weather as unknown as AnyTool
    expect(outputToOutcome(typed as unknown as AnyTool, { n: 'x' }).error?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(outputToOutcome(typed as unknown as AnyTool, { n: 2 })).toEqual({ content: [{ type: 'text', text: '{"n":2}' }], json: true })
    expect(outputToOutcome(any, { content: [{ type: 'nope' }] }).error?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(outputToOutcome(any, 10n).error?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(outputToOutcome(any, () => 1).error?.code).toBe('INVALID_TOOL_OUTPUT')
    const cyc: Record<string, unknown> = {}
    cyc.self = cyc
    expect(outputToOutcome(any, cyc).error?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(outputToOutcome(any, 'lone \ud800').error?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(outputToOutcome(any, 'fine').error).toBeUndefined()
  })
})

describe('classify', () => {
  const mk = (isConcurrencySafe?: (a: { n: number }) => boolean) =>
    defineTool({ name: 't', description: '', parameters: z.object({ n: z.number() }), isConcurrencySafe, execute: () => '' }) as unknown as AnyTool
  const reg = (t: AnyTool) => new Map([['t', t]])
  const c = (args: string) => ({ name: 't', arguments: args })

  it('parallel only when the classifier returns exactly true for valid arguments', () => {
    expect(classify(c('{"n":1}'), reg(mk(() => true)))).toBe('parallel')
    expect(classify(c('{"n":1}'), reg(mk((a) => a.n > 0)))).toBe('parallel')
    expect(classify(c('{"n":-1}'), reg(mk((a) => a.n > 0)))).toBe('exclusive')
  })

  it('exclusive otherwise: truthy non-true, a throw, no classifier, invalid arguments, unknown tool', () => {
    expect(classify(c('{"n":1}'), reg(mk(() => 1 as unknown as boolean)))).toBe('exclusive')
    expect(classify(c('{"n":1}'), reg(mk(() => 'yes' as unknown as boolean)))).toBe('exclusive')
    expect(classify(c('{"n":1}'), reg(mk(() => { throw new Error('x') })))).toBe('exclusive')
    expect(classify(c('{"n":1}'), reg(mk()))).toBe('exclusive')
    expect(classify(c('{"n":"1"}'), reg(mk(() => true)))).toBe('exclusive')
    expect(classify(c('nope'), reg(mk(() => true)))).toBe('exclusive')
    expect(classify({ name: 'other', arguments: '{}' }, reg(mk(() => true)))).toBe('exclusive')
  })

  it('the classifier sees the validated (parsed) arguments', () => {
    let seen: unknown
    const t = defineTool({
      name: 't', description: '', parameters: z.object({ n: z.coerce.number() }),
      isConcurrencySafe: (a) => { seen = a; return true }, execute: () => '',
    }) as unknown as AnyTool
    classify(c('{"n":"7"}'), reg(t))
    expect(seen).toEqual({ n: 7 })
  })
})
