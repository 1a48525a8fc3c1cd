/**
 * L19, the parent's side (events/invariants/children.ts): a `child/spawned` stands only while its
 * call runs (after its `tool/call`, before its `tool/result`), once per call and once per child id.
 * Each mutation of a valid log is caught as L19; the valid log has no violation.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { verify } from '../../replay/verify.js'

const subTool = () =>
  defineSubagent({
    name: 'research', description: 'd', parameters: z.object({ q: z.string() }),
    agent: () => ({ model: scriptedModel([{ text: 'answer' }]) }),
  })

async function parentLog(): Promise<LogEvent[]> {
  const sub = subTool()
  const agent = createAgent({
    model: scriptedModel([{ toolCalls: [{ name: 'research', args: { q: 'a' }, id: 'c1' }, { name: 'research', args: { q: 'b' }, id: 'c2' }] }, { text: 'ok' }]),
    tools: [sub], sessionId: 'p', maxParallelToolCalls: 1,
  })
  agent.followup('go')
  await agent.whenIdle()
  const events = [...agent.events]
  await agent.dispose()
  return events
}

/** Moves the event at `from` to stand before index `to` and renumbers seqs. */
function move(events: readonly LogEvent[], from: number, to: number): LogEvent[] {
  const out = [...events]
  const [e] = out.splice(from, 1)
  out.splice(to > from ? to - 1 : to, 0, e!)
  return out.map((x, i) => ({ ...x, seq: i }) as LogEvent)
}

describe('L19: child/spawned in the parent log', () => {
  it('a real subagent run is valid; each misplaced or repeated child/spawned is L19', async () => {
    const events = await parentLog()
    expect(verify(events).violations).toEqual([])
    const idx = (pred: (e: LogEvent) => boolean) => events.findIndex(pred)
    const sp1 = idx((e) => e.type === 'child/spawned' && (e.data as { callId: string }).callId === 'c1')
    const call1 = idx((e) => e.type === 'tool/call' && (e.data as { callId: string }).callId === 'c1')
    const res1 = idx((e) => e.type === 'tool/result' && (e.data as { callId: string }).callId === 'c1')
    expect(call1).toBeLessThan(sp1)
    expect(sp1).toBeLessThan(res1)
    const l19 = (log: readonly LogEvent[]) => verify(log).violations.filter((v) => v.invariant === 'L19')
    // before its call's tool/call
    expect(l19(move(events, sp1, call1))).not.toEqual([])
    // after its call's tool/result
    expect(l19(move(events, sp1, res1 + 1))).not.toEqual([])
    // a second child for the same call
    const dup = [...events]
    dup.splice(sp1 + 1, 0, { ...events[sp1]!, data: { ...(events[sp1]!.data as object), child: 'p.other' } } as LogEvent)
    expect(l19(dup.map((x, i) => ({ ...x, seq: i }) as LogEvent))).not.toEqual([])
    // the same child id spawned by the second call
    const sp2 = idx((e) => e.type === 'child/spawned' && (e.data as { callId: string }).callId === 'c2')
    const same = events.map((e, i) => (i === sp2 ? ({ ...e, data: { ...(e.data as object), child: (events[sp1]!.data as { child: string }).child } } as LogEvent) : e))
    expect(l19(same)).not.toEqual([])
    // naming a step that is not open
    const wrong = events.map((e, i) => (i === sp1 ? ({ ...e, data: { ...(e.data as object), step: 2 } } as LogEvent) : e))
    expect(l19(wrong)).not.toEqual([])
  })
})

describe('P4 with child sessions', () => {
  it("a parent log with subagent calls re-executes to the same log: child/spawned is the recorded call's input", async () => {
    const { reexecute } = await import('../../replay/reexecute/index.js')
    const events = await parentLog()
    const r = await reexecute(events, { tools: [subTool()] })
    expect(r.ok ? 'same' : JSON.stringify(r.divergence).slice(0, 400)).toBe('same')
  })
})
