/**
 * Argument generation from each tool's zod 4 schema (issue 9 item 13): generated arguments pass
 * the tool's own validation for every schema kind zod 4 emits as JSON Schema, the deliberately
 * invalid ones do not, and in a fuzz every user tool body runs.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import { arbUserCall, invalidCall, validArgs } from '../../testing/fuzz/args.js'

type Node = { name: string; children: Node[] }
const TreeNode: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(TreeNode) }))

const schemas: Record<string, z.ZodType> = {
  scalars: z.object({ city: z.string().min(1).max(40), unit: z.enum(['c', 'f']).optional(), days: z.number().int().min(1).max(7).default(1), ok: z.boolean() }),
  formats: z.object({ email: z.email(), id: z.uuid(), url: z.url(), when: z.iso.datetime(), d: z.iso.date(), re: z.string().regex(/^[a-z]{3}-\d{2}$/), sw: z.string().startsWith('ab'), ip: z.ipv4(), ip6: z.ipv6() }),
  composites: z.object({
    t: z.tuple([z.string(), z.number()]), u: z.union([z.string(), z.number()]),
    du: z.discriminatedUnion('k', [z.object({ k: z.literal('a'), x: z.number() }), z.object({ k: z.literal('b') })]),
    n: z.string().nullable(), r: z.record(z.string(), z.number()), i: z.intersection(z.object({ a: z.string() }), z.object({ b: z.number() })),
    arr: z.array(z.boolean()).min(1).max(3), strict: z.strictObject({ a: z.string() }), loose: z.looseObject({ a: z.string() }),
  }),
  numbers: z.object({ gt: z.number().gt(0).lt(1), m: z.number().multipleOf(5), pos: z.number().int().positive(), neg: z.number().negative(), c: z.literal(3), big: z.number().int().min(1_000_000) }),
  recursive: z.object({ tree: TreeNode }),
  anything: z.object({ any: z.any(), unknown: z.unknown().optional() }),
}

const tools = Object.entries(schemas).map(([name, parameters]) => defineTool({ name, description: name, parameters, execute: () => 'ok' }) as unknown as AnyTool)

describe('arguments from zod 4 schemas (item 13)', () => {
  for (const tool of tools) {
    it(`${tool.name}: 200 generated arguments pass the tool's own safeParse`, () => {
      fc.assert(fc.property(validArgs(tool), (args) => {
        const r = (tool.parameters as z.ZodType).safeParse(JSON.parse(JSON.stringify(args)))
        if (!r.success) throw new Error(`${JSON.stringify(args)}: ${r.error.message}`)
      }), { numRuns: 200, seed: 9 })
    })
  }

  it('a refinement JSON Schema cannot express: the candidate the schema accepts is kept (most calls valid)', () => {
    const tool = defineTool({ name: 'even', description: 'even', parameters: z.object({ s: z.string().min(1).refine((v) => v.length % 2 === 0) }), execute: () => 'ok' }) as unknown as AnyTool
    const sample = fc.sample(validArgs(tool), { numRuns: 300, seed: 3 })
    expect(sample.filter((a) => (tool.parameters as z.ZodType).safeParse(a).success).length).toBeGreaterThan(270)
  })

  it('deliberately invalid calls fail validation (every schema with required properties)', () => {
    for (const tool of tools.filter((t) => t.name !== 'anything')) {
      fc.assert(fc.property(invalidCall(tool), (call) => {
        const args = 'rawArgs' in call ? call.rawArgs : JSON.parse(JSON.stringify(call.args))
        expect((tool.parameters as z.ZodType).safeParse(args).success, `${tool.name} ${JSON.stringify(call)}`).toBe(false)
      }), { numRuns: 100, seed: 9 })
    }
  })

  it('a user tool gets valid and invalid calls mixed (most valid)', () => {
    const tool = tools[0]!
    const calls = fc.sample(arbUserCall(tool), { numRuns: 500, seed: 1 })
    const valid = calls.filter((c) => 'args' in c && (tool.parameters as z.ZodType).safeParse(c.args).success).length
    expect(valid).toBeGreaterThan(300)
    expect(valid).toBeLessThan(500)
  })
})
