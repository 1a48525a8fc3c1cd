/**
 * P4 for invalid tool outputs: a recorded `INVALID_TOOL_OUTPUT` result is re-executed to the same
 * result, whichever way the output was invalid (it failed the output schema, the schema threw, the
 * output could not be read, it was not JSON). Re-execution serves recorded results instead of
 * running bodies; until round 11 it served such a result as a valid empty output and diverged there.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/agent.js'
import type { EventOf } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'

function clock(): () => number {
  let t = 1_764_450_000_000
  return () => (t += 3)
}

const unreadable = () => ({ get content(): never { throw new Error('the getter broke') } })
const throwsInJson = () => ({ toJSON(): never { throw new Error('no JSON for you') } })

const cases: { name: string; tool: () => AnyTool; message: RegExp }[] = [
  {
    name: 'the output fails its schema (two issues, one with a path)',
    tool: () => defineTool({
      name: 'bad', description: '', parameters: z.object({}), output: z.object({ n: z.number(), s: z.string() }),
      execute: () => ({ n: 'one', s: 2 }) as unknown as { n: number; s: string },
    }) as AnyTool,
    message: /^Tool 'bad' returned an invalid output:\n✖ .*\n {2}→ at n\n✖ .*\n {2}→ at s$/,
  },
  {
    name: 'the output fails a refinement at the top',
    tool: () => defineTool({
      name: 'bad', description: '', parameters: z.object({}), output: z.number().refine((n) => n > 10, 'too small'),
      execute: () => 3,
    }) as AnyTool,
    message: /^Tool 'bad' returned an invalid output:\n✖ too small$/,
  },
  {
    name: 'the output schema throws',
    tool: () => defineTool({
      name: 'bad', description: '', parameters: z.object({}),
      output: z.number().transform((): number => { throw new Error('transform exploded') }),
      execute: () => 3,
    }) as AnyTool,
    message: /^Tool 'bad': output validation threw: transform exploded$/,
  },
  {
    name: 'the output cannot be read',
    tool: () => defineTool({ name: 'bad', description: '', parameters: z.object({}), execute: unreadable }) as AnyTool,
    message: /^Tool 'bad' returned an output that cannot be read: the getter broke$/,
  },
  {
    name: 'the output is a function',
    tool: () => defineTool({ name: 'bad', description: '', parameters: z.object({}), execute: () => () => 1 }) as AnyTool,
    message: /^Tool 'bad' returned an output that cannot be a result: a function is not JSON$/,
  },
  {
    name: 'the output is a symbol',
    tool: () => defineTool({ name: 'bad', description: '', parameters: z.object({}), execute: () => Symbol('s') }) as AnyTool,
    message: /^Tool 'bad' returned an output that cannot be a result: a symbol is not JSON$/,
  },
  {
    name: 'the output throws in JSON.stringify',
    tool: () => defineTool({ name: 'bad', description: '', parameters: z.object({}), execute: throwsInJson }) as AnyTool,
    message: /^Tool 'bad' returned an output that cannot be a result: not JSON-serialisable \(no JSON for you\)$/,
  },
]

describe('P4: a recorded INVALID_TOOL_OUTPUT re-executes to the same result', () => {
  for (const c of cases) {
    it(`P4: ${c.name}`, async () => {
      let n = 0
      const a = createAgent({
        model: scriptedModel([{ toolCalls: [{ name: 'bad', args: {} }, { name: 'bad', args: {} }] }, { text: 'done' }]),
        tools: [c.tool()], clock: clock(), ids: () => `i${++n}`,
      })
      a.followup('go')
      await a.whenIdle()
      expect(verify(a.events).ok).toBe(true)
      const results = a.events.filter((e): e is EventOf<'tool/result'> => e.type === 'tool/result')
      expect(results).toHaveLength(2)
      for (const r of results) {
        expect(r.data.error?.code).toBe('INVALID_TOOL_OUTPUT')
        expect(r.data.error?.message).toMatch(c.message)
      }
      const rx = await reexecute(a.events, { tools: [c.tool()], stallMs: 300 })
      expect(rx.ok ? null : rx.divergence.diff).toBeNull()
    })
  }
})

describe('P4: an invalid output the log cannot reproduce diverges, naming both messages', () => {
  it('P4: {content} that is not a list of blocks (the log holds only zod\'s message, not the value)', async () => {
    let n = 0
    const tool = () => defineTool({ name: 'bad', description: '', parameters: z.object({}), execute: () => ({ content: [{ type: 'nope' }] }) }) as AnyTool
    const a = createAgent({ model: scriptedModel([{ toolCalls: [{ name: 'bad', args: {} }] }, { text: 'done' }]), tools: [tool()], clock: clock(), ids: () => `i${++n}` })
    a.followup('go')
    await a.whenIdle()
    const r = a.events.find((e): e is EventOf<'tool/result'> => e.type === 'tool/result')!
    expect(r.data.error?.message).toMatch(/^Tool 'bad' returned an output that cannot be a result: \{content\} is not a list of blocks:\n✖ /)
    const rx = await reexecute(a.events, { tools: [tool()], stallMs: 300 })
    expect(rx.ok).toBe(false)
    if (!rx.ok) {
      expect(rx.divergence.seq).toBe(r.seq)
      expect(rx.divergence.diff).toContain('re-execution cannot reproduce the recorded invalid output')
    }
  })
})
