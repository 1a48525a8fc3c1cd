/**
 * Tool schemas from any library (docs/spec/lifecycle.md §5: bad arguments are the call's
 * `INVALID_ARGS` result): the same weather tool written with zod 4, zod 3 classic, zod 3's
 * `zod/v4`, valibot, arktype and `jsonSchema()` runs in a real agent, refuses bad arguments with a
 * coded result naming each field in one layout, logs the same JSON Schema in `request/header`, has
 * its output checked, and is fuzzed by `fuzzAgent` (R1–R8, L1–L16) with arguments generated from
 * that JSON Schema.
 */
import { type } from 'arktype'
import fc from 'fast-check'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { z as z3 } from 'zod3'
import { z as z3v4 } from 'zod3/v4'
import { createAgent, jsonSchema, scriptedModel, type AnyTool, type EventOf, type ToolSchema } from '../../index.js'
import { verify } from '../../replay/index.js'
import { fuzzAgent } from '../../testing/index.js'
import { validArgs } from '../../testing/fuzz/args.js'
import { defineTool, outputToOutcome, toolSpec } from '../../tools/define.js'
import { checkSchema } from '../../tools/schema.js'

/** What every library's weather parameters say, as the model is sent them. */
const EXPECTED = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 3 },
    metric: { type: 'boolean' },
  },
  required: ['city'],
  additionalProperties: false,
}

interface Lib { name: string; parameters: ToolSchema; output: ToolSchema }
const LIBS: Lib[] = [
  {
    name: 'zod 4',
    parameters: z.object({ city: z.string().min(1), days: z.number().int().min(1).max(7).optional(), tags: z.array(z.string()).max(3).optional(), metric: z.boolean().optional() }),
    output: z.object({ tempC: z.number() }),
  },
  {
    name: 'zod 3 classic',
    parameters: z3.object({ city: z3.string().min(1), days: z3.number().int().min(1).max(7).optional(), tags: z3.array(z3.string()).max(3).optional(), metric: z3.boolean().optional() }),
    output: z3.object({ tempC: z3.number() }),
  },
  {
    name: 'zod 3 zod/v4',
    parameters: z3v4.object({ city: z3v4.string().min(1), days: z3v4.number().int().min(1).max(7).optional(), tags: z3v4.array(z3v4.string()).max(3).optional(), metric: z3v4.boolean().optional() }),
    output: z3v4.object({ tempC: z3v4.number() }),
  },
  {
    name: 'valibot',
    parameters: v.object({
      city: v.pipe(v.string(), v.minLength(1)),
      days: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(7))),
      tags: v.optional(v.pipe(v.array(v.string()), v.maxLength(3))),
      metric: v.optional(v.boolean()),
    }),
    output: v.object({ tempC: v.number() }),
  },
  {
    name: 'arktype',
    parameters: type({ city: 'string >= 1', 'days?': '1 <= number.integer <= 7', 'tags?': 'string[] <= 3', 'metric?': 'boolean' }),
    output: type({ tempC: 'number' }),
  },
  {
    name: 'jsonSchema() draft 2020-12',
    parameters: jsonSchema<{ city: string; days?: number; tags?: string[]; metric?: boolean }>({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...EXPECTED }),
    output: jsonSchema({ type: 'object', properties: { tempC: { type: 'number' } }, required: ['tempC'] }),
  },
  {
    name: 'jsonSchema() draft-07',
    parameters: jsonSchema({ $schema: 'http://json-schema.org/draft-07/schema#', ...EXPECTED }),
    output: jsonSchema({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { tempC: { type: 'number' } }, required: ['tempC'] }),
  },
]

function weather(lib: Lib, seen: unknown[] = []): AnyTool {
  return defineTool({
    name: 'weather',
    description: 'Current weather for a city',
    parameters: lib.parameters,
    output: lib.output,
    isConcurrencySafe: () => true,
    execute: (args) => {
      seen.push(args)
      return { tempC: 21 }
    },
  }) as AnyTool
}

/** The lines of an `INVALID_ARGS` message after its first: `✖ …` and `  → at path` pairs. */
function problemPaths(message: string): string[] {
  return message.split('\n').filter((l) => l.startsWith('  → at ')).map((l) => l.slice('  → at '.length))
}

describe.each(LIBS)('a tool whose schemas are $name', (lib) => {
  it('runs in an agent, refuses bad arguments naming each field (INVALID_ARGS), logs the JSON Schema the model saw (L1–L16 hold)', async () => {
    const seen: unknown[] = []
    const agent = createAgent({
      model: scriptedModel([
        { toolCalls: [
          { name: 'weather', args: { city: 'Paris', days: 2 } },
          { name: 'weather', args: { city: '', days: 9 } },
          { name: 'weather', args: { days: 2, tags: ['a', 3] } },
        ] },
        { text: 'It is 21 °C in Paris.' },
      ]),
      tools: [weather(lib, seen)],
    })
    agent.followup('weather in Paris?')
    await agent.whenIdle()
    expect(seen).toEqual([{ city: 'Paris', days: 2 }])
    const results = agent.events.filter((e): e is EventOf<'tool/result'> => e.type === 'tool/result').map((e) => e.data)
    expect(results.map((r) => r.error?.code)).toEqual([undefined, 'INVALID_ARGS', 'INVALID_ARGS'])
    expect(results[0]!.message.content).toEqual([{ type: 'text', text: '{"tempC":21}' }])
    for (const r of results.slice(1)) {
      expect(r.error!.message).toMatch(/^Invalid arguments for tool 'weather':\n(✖ .+\n(  → at .+\n)?)*✖ .+(\n  → at .+)?$/)
    }
    expect(problemPaths(results[1]!.error!.message).sort()).toEqual(['city', 'days'])
    expect(problemPaths(results[2]!.error!.message).sort()).toEqual(['city', 'tags[1]'])
    const header = agent.events.find((e): e is EventOf<'request/header'> => e.type === 'request/header')!
    expect(header.data.tools).toEqual([{ name: 'weather', description: 'Current weather for a city', parameters: EXPECTED }])
    expect(verify(agent.events).ok).toBe(true)
    await agent.dispose()
  })

  it('checks the output against its output schema (INVALID_TOOL_OUTPUT naming the field)', () => {
    const tool = weather(lib)
    expect(outputToOutcome(tool, { tempC: 21 })).toEqual({ content: [{ type: 'text', text: '{"tempC":21}' }], json: true })
    const bad = outputToOutcome(tool, { tempC: 'warm' })
    expect(bad.error?.code).toBe('INVALID_TOOL_OUTPUT')
    expect(bad.error?.message).toMatch(/^Tool 'weather' returned an invalid output:\n✖ .+\n {2}→ at tempC$/)
  })

  it('arguments generated from its JSON Schema pass its own schema (200 runs)', () => {
    const tool = weather(lib)
    fc.assert(fc.property(validArgs(tool), (args) => {
      const r = checkSchema(tool.parameters, JSON.parse(JSON.stringify(args)))
      if (!r.ok) throw new Error(`${JSON.stringify(args)}: ${JSON.stringify(r.issues)}`)
    }), { numRuns: 200, seed: 7 })
  })

  it('is fuzzed by fuzzAgent: its body runs on generated arguments, its refusals are INVALID_ARGS (R1–R8, L1–L16)', async () => {
    const report = await fuzzAgent({ tools: () => [weather(lib)], numRuns: 25, seed: 11 })
    expect(report.census.bodies.weather).toBeGreaterThan(0)
    expect(report.census.perTool.weather?.ok).toBeGreaterThan(0)
    expect(report.census.perTool.weather?.INVALID_ARGS).toBeGreaterThan(0)
  }, 120_000)
})

describe('the same JSON Schema from every library', () => {
  it('toolSpec gives one document for all of them', () => {
    for (const lib of LIBS) expect(toolSpec(weather(lib)).parameters, lib.name).toEqual(EXPECTED)
  })
})
