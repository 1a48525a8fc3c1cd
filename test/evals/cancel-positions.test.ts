/**
 * Where a recorded cancel is re-issued when the log shows it only by what followed (evals/cancel-moves.ts):
 * each test records the exact sequence with the real agent, then re-runs it (P4 for goldens).
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

describe('golden re-runs: cancels the log shows by what followed', () => {
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
})
