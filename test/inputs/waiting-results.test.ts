/**
 * A body asks a round while a later call of the same step (model order) still runs
 * (docs/spec/lifecycle.md §11: "calls after it that need no decision run and wait to commit; the
 * step parks when every started body has settled"). The later call settles, its result waits in
 * model order (L6) behind the open round, and the step parks with it waiting (L18 as amended).
 * Before: `step/parked` was refused (L18 as first written: that call had no result), the scheduler
 * failed out, the round was answered `cancel by: canceled` and the asking call ended
 * `TOOL_OUTCOME_UNKNOWN` — a question the agent asked, dropped by the agent itself.
 */
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { resumeAgent } from '../../replay/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { verify } from '../../replay/verify.js'
import { valid } from '../agent/contain-helpers.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { besideAskTool as askingTool, dataOf, gatedSlowTool as slowTool } from './helpers.js'

const STEP = [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }, { name: 'slow', args: {}, id: 'c2' }] }, { text: 'done' }]
const GENT = { action: 'accept' as const, responses: { address: { city: 'Gent' } } }

/** A `tool/result`'s text (its message's text blocks). */
function outputText(d: Record<string, any>): string {
  return (d.message.content as Array<{ text?: string }>).map((b) => b.text ?? '').join('')
}

async function ticks(n: number, until: () => boolean = () => false): Promise<void> {
  for (let i = 0; i < n && !until(); i++) await new Promise((r) => setImmediate(r))
}

/** Runs the step until it parks with c2's settled result waiting behind c1's open round. */
async function parkedWithWaiting(slow: ReturnType<typeof slowTool>) {
  const asking = askingTool()
  const errors: unknown[] = []
  const a = createAgent({ model: scriptedModel(STEP), tools: [asking.tool, slow.tool], sessionId: 's', clock: fakeClock(), ids: counterIds('a'), timers: instantTimers(), maxParallelToolCalls: 2 })
  a.on('agent/error', (e) => { errors.push(e) })
  a.followup('ship it')
  await ticks(200, () => a.inputs().length > 0)
  expect(a.events.some((e) => e.type === 'step/parked')).toBe(false) // slow still runs: not yet
  slow.release()
  const settled = await a.whenSettled()
  return { a, asking, errors, settled }
}

describe('a result that waits behind an open round (docs/spec/lifecycle.md §11, L18, L6)', () => {
  it('L18 L6 L21: the step parks with the later call settled; the answer commits both results in model order', async () => {
    const slow = slowTool()
    const { a, asking, errors, settled } = await parkedWithWaiting(slow)
    expect(settled).toBe('parked')
    const requestId = a.inputs()[0]!.requestId
    expect(dataOf(a.events, 'step/parked').map((d) => d.approvals)).toEqual([[requestId]])
    expect(dataOf(a.events, 'tool/result')).toEqual([]) // c2's result waits for c1's (L6)
    expect(dataOf(a.events, 'tool/input-provided')).toEqual([]) // the round was not canceled
    await a.answer(requestId, GENT)
    await a.whenIdle()
    expect(dataOf(a.events, 'tool/result').map((d) => [d.callId, d.error?.code ?? outputText(d)])).toEqual([
      ['c1', 'shipped book to {"address":{"city":"Gent"}}'], ['c2', 'slow done 1'],
    ])
    expect(asking.runs.map((r) => r.round)).toEqual([0, 1])
    expect(slow.runs).toEqual([1])
    expect(errors).toEqual([])
    valid(a.events)
    await a.dispose()
    // P4: the recorded session re-executes to the same log (the answer re-issued at its position)
    const again = slowTool()
    again.release()
    const r = await reexecute(a.events, { stallMs: 500, tools: [askingTool().tool, again.tool], maxParallelToolCalls: 2 })
    if (!r.ok) throw new Error(r.divergence.diff)
    expect(r).toEqual({ ok: true, eventCount: a.events.length })
  })

  it('R10 §8: disposed while parked, the waiting result is gone with the process: resumed, the call ends TOOL_OUTCOME_UNKNOWN and its body never runs again', async () => {
    const slow = slowTool()
    const { a, settled } = await parkedWithWaiting(slow)
    expect(settled).toBe('parked')
    const log: LogEvent[] = a.events.slice()
    await a.dispose()
    const asking = askingTool()
    const slow2 = slowTool()
    const b = await resumeAgent({ log, sessionId: 's', model: scriptedModel([{ text: 'shipped' }]), tools: [asking.tool, slow2.tool], clock: fakeClock(1_764_460_000_000), ids: counterIds('b'), timers: instantTimers(), maxParallelToolCalls: 2 })
    expect(await b.whenSettled()).toBe('parked')
    await b.answer(b.inputs()[0]!.requestId, GENT)
    await b.whenIdle()
    const results = dataOf(b.events, 'tool/result').map((d) => [d.callId, d.error?.code ?? 'ok'])
    expect(results).toEqual([['c1', 'ok'], ['c2', 'TOOL_OUTCOME_UNKNOWN']])
    expect(asking.runs.map((r) => r.round)).toEqual([1])
    expect(slow2.runs).toEqual([])
    valid(b.events)
    await b.dispose()
    // P4: re-executed as two processes (the resume's request/header marks the second)
    const r = await reexecute(b.events, { stallMs: 500, tools: [askingTool().tool, slowTool().tool], maxParallelToolCalls: 2 })
    if (!r.ok) throw new Error(r.divergence.diff)
    expect(r).toEqual({ ok: true, eventCount: b.events.length })
  })

  it('R10 §12: even a re-issued (idempotent) tool is not run again for a waiting result lost with its process: TOOL_OUTCOME_UNKNOWN', async () => {
    const slow = slowTool({ idempotent: true })
    const { a } = await parkedWithWaiting(slow)
    const log: LogEvent[] = a.events.slice()
    await a.dispose()
    const asking = askingTool()
    const slow2 = slowTool({ idempotent: true })
    slow2.release()
    const b = await resumeAgent({ log, sessionId: 's', model: scriptedModel([{ text: 'shipped' }]), tools: [asking.tool, slow2.tool], clock: fakeClock(1_764_460_000_000), ids: counterIds('b'), timers: instantTimers(), maxParallelToolCalls: 2 })
    expect(await b.whenSettled()).toBe('parked')
    expect(b.events.length).toBe(log.length) // nothing appended, no body run, while parked (L18)
    await b.answer(b.inputs()[0]!.requestId, GENT)
    await b.whenIdle()
    expect(dataOf(b.events, 'tool/result').map((d) => [d.callId, d.error?.code ?? outputText(d)])).toEqual([
      ['c1', 'shipped book to {"address":{"city":"Gent"}}'], ['c2', 'TOOL_OUTCOME_UNKNOWN'],
    ])
    expect(slow2.runs).toEqual([])
    valid(b.events)
    await b.dispose()
  })

  it('L18: the checker still refuses a park while a call BEFORE the open round has no result', async () => {
    const slow = slowTool()
    const { a } = await parkedWithWaiting(slow)
    const log = a.events.slice()
    await a.dispose()
    // swap the two calls' order in the model's message: c2 now comes first, and it has no result
    const msg = log.find((e) => e.type === 'assistant/message')!
    const content = (msg.data as { message: { content: unknown[] } }).message.content
    const swapped = { ...msg, data: { ...msg.data, message: { ...(msg.data as { message: object }).message, content: [content[1], content[0]] } } } as LogEvent
    const calls = log.filter((e) => e.type === 'tool/call')
    const reordered = log.map((e) => (e === msg ? swapped : e === calls[0] ? calls[1]! : e === calls[1] ? calls[0]! : e))
      .map((e, i) => ({ ...e, seq: i }) as LogEvent)
    const codes = verify(reordered).violations.map((v) => [v.invariant, v.message])
    expect(codes).toContainEqual(['L18', 'step/parked while tool/call c2 has no tool/result'])
  })
})
