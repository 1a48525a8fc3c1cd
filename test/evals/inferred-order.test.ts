/**
 * Orders a golden shows only by what followed, reproduced by a re-run (P4 for goldens): where a
 * recorded cancel is re-issued (evals/cancel-moves.ts), when a commit may happen
 * (evals/settle-order.ts). Each test records the exact sequence with the real agent, then re-runs it.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { EventOf, LogEvent } from '../../events/index.js'
import { recordedModel, rerun } from '../../evals/index.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import { instantTimers, recordGolden } from './goldens.js'

const base = { timers: instantTimers, timeoutMs: 5000 }

/** A parallel-safe tool whose body waits for `gate` (the recording's) and then answers. */
function slowTools(gate: () => Promise<void> = async () => {}): AnyTool[] {
  return [defineTool({
    name: 'fetch', description: 'Fetch a page', parameters: z.object({ url: z.string() }), isConcurrencySafe: () => true,
    execute: async ({ url }) => {
      await gate()
      return `page ${url}`
    },
  })] as AnyTool[]
}

const shape = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'tool/call' || e.type === 'tool/result')
  .map((e) => e.type === 'tool/call' ? `call ${(e as EventOf<'tool/call'>).data.callId}` : `result ${(e as EventOf<'tool/result'>).data.callId} ${(e as EventOf<'tool/result'>).data.error?.code ?? 'ok'}`)

/** Gives the agent macrotask turns until `cond` holds. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r))
  expect(cond()).toBe(true)
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void
  const wait = new Promise<void>((r) => (open = r))
  return { wait, open }
}

describe('golden re-runs: orders the log shows by what followed', () => {
  it('P4 (goldens): a cancel while the only pool slot\'s body runs (it answers anyway): the deferred call is ABORTED_BEFORE_DISPATCH in the re-run too (seed 1997684145)', async () => {
    let entered!: () => void
    const inBody = new Promise<void>((r) => (entered = r))
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const g = await recordGolden([
      { toolCalls: [{ id: 'c1', name: 'fetch', args: { url: 'a' } }, { id: 'c2', name: 'fetch', args: { url: 'b' } }] },
      { text: 'Stopped.' },
    ], async (a) => {
      a.followup('Fetch a and b')
      await inBody
      a.cancel({ kind: 'user' })
      release()
      await a.whenIdle()
      a.followup('Go on')
      await a.whenIdle()
    }, {
      tools: slowTools(async () => {
        entered()
        await gate
      }),
      maxParallelToolCalls: 1,
    })
    expect(shape(g.events).slice(0, 4)).toEqual(['call c1', 'result c1 ok', 'call c2', 'result c2 ABORTED_BEFORE_DISPATCH'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: slowTools(), maxParallelToolCalls: 1 })
    expect(r.inputs.find((i) => i.kind === 'cancel')).toMatchObject({ outcome: 'issued', at: 'turn 1 · step 1 · after tool/call #1' })
    expect(r.divergence).toBeNull()
    expect(r.verify.ok).toBe(true)
  })

  it('P4 (goldens): a commit the golden logged after the next call\'s approval request waits for it in the re-run (its post-execute is held; seed 457230189)', async () => {
    // pool 2: a (slow body), b (fast body) and c (asked by pre-execute). b settles first and frees
    // the slot for c; a's result; c's request; b's result (the golden's post-execute of b took its time)
    const a = gate()
    const c = gate()
    const p = gate()
    let cAsked!: () => void
    const inC = new Promise<void>((r) => (cAsked = r))
    const tools = (slow: Promise<void>): AnyTool[] => [defineTool({
      name: 'fetch', description: 'Fetch a page', parameters: z.object({ url: z.string() }), isConcurrencySafe: () => true,
      execute: async ({ url }) => {
        if (url === 'a') await slow
        return `page ${url}`
      },
    })] as AnyTool[]
    const hooks = (pre: () => Promise<void>, post: Promise<void>) => ({
      'tools/pre-execute': async (x: { call: { id: string } }, next: () => Promise<unknown>) => {
        if (x.call.id !== 'c3') return next()
        await pre()
        return { kind: 'ask' as const, question: 'fetch c?' }
      },
      'tools/post-execute': async (x: { call: { id: string } }, next: () => Promise<unknown>) => {
        if (x.call.id === 'c2') await post
        return next()
      },
    })
    const calls = ['a', 'b', 'c'].map((u, i) => ({ id: `c${i + 1}`, name: 'fetch', args: { url: u } }))
    const g = await recordGolden([{ toolCalls: calls }, { text: 'Fetched.' }], async (ag) => {
      ag.followup('Fetch a, b and c')
      await inC
      a.open()
      await until(() => shape(ag.events).includes('result c1 ok'))
      c.open()
      await until(() => ag.events.some((e) => e.type === 'tool/approval-requested'))
      p.open()
      expect(await ag.whenSettled()).toBe('parked')
      await ag.decide(ag.approvals()[0]!.approvalId, { kind: 'approve' })
      await ag.whenIdle()
    }, {
      tools: tools(a.wait), maxParallelToolCalls: 2,
      hooks: hooks(async () => {
        cAsked()
        await c.wait
      }, p.wait) as never,
    })
    const order = g.events.filter((e) => ['tool/call', 'tool/result', 'tool/approval-requested'].includes(e.type))
      .map((e) => e.type === 'tool/approval-requested' ? 'request c3' : shape([e])[0])
    expect(order.slice(0, 6)).toEqual(['call c1', 'call c2', 'call c3', 'result c1 ok', 'request c3', 'result c2 ok'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: tools(Promise.resolve()), maxParallelToolCalls: 2, hooks: hooks(async () => {}, Promise.resolve()) as never })
    expect(r.divergence).toBeNull()
    expect(r.verify.ok).toBe(true)
  })

  it('P4 (goldens): a cancel after a body started, whose output is logged after the cancel: the re-issued cancel waits for that body to start (R5; seed 998929474)', async () => {
    const body = gate()
    let entered!: () => void
    const inBody = new Promise<void>((r) => (entered = r))
    const tools = (slow: () => Promise<void>): AnyTool[] => [
      ...slowTools(slow),
      defineTool({ name: 'delete', description: 'Delete a file', parameters: z.object({ path: z.string() }), needsApproval: true, execute: ({ path }) => `deleted ${path}` }),
    ] as AnyTool[]
    const g = await recordGolden([
      { toolCalls: [{ id: 'c1', name: 'fetch', args: { url: 'a' } }, { id: 'c2', name: 'delete', args: { path: 'x' } }] },
      { text: 'Stopped.' },
    ], async (ag) => {
      ag.followup('Fetch a, delete x')
      await inBody
      ag.cancel({ kind: 'user' })
      body.open()
      await ag.whenIdle()
    }, {
      tools: tools(async () => {
        entered()
        await body.wait
      }),
    })
    expect(shape(g.events).slice(0, 4)).toEqual(['call c1', 'result c1 ok', 'call c2', 'result c2 ABORTED_BEFORE_DISPATCH'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: tools(async () => {}) })
    expect(r.divergence).toBeNull()
    expect(r.verify.ok).toBe(true)
  })
})
