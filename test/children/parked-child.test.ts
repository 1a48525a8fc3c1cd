/**
 * A parked child parks its parent's call (docs/spec/lifecycle.md §9, §10): while the child's step waits for a
 * person, the parent's call stays running and the parent's status is `parked`; the child's open
 * approvals are listed by the parent (with the child's session id) and `parent.decide` decides
 * them in the child (logged in the child's log only); then the child finishes and its answer is
 * the call's result. A parent's cancel cascades (cause `parent`; the child's approval `canceled`).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import { defineTool } from '../../tools/define.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { verify } from '../../replay/verify.js'
import { verifyChild } from '../../replay/verify-child.js'
import { memoryStore } from '../../stores/index.js'
import type { LogStore } from '../../stores/types.js'

const CHILD = 'p.c1-1-c1'

function setup(parentOpts: { approvals?: { onSteer: 'supersede' | 'queue' } } = {}) {
  let removed = 0
  const rm = defineTool({
    name: 'rm', description: 'removes a file', parameters: z.object({ path: z.string() }), needsApproval: true,
    execute: () => {
      removed++
      return 'ok'
    },
  })
  const cleaner = defineSubagent({
    name: 'cleaner', description: 'cleans up', parameters: z.object({ task: z.string() }),
    agent: () => ({
      model: scriptedModel([{ toolCalls: [{ name: 'rm', args: { path: 'tmp' }, id: 'k1' }] }, { text: 'cleaned' }]),
      tools: [rm], system: 'child',
    }),
  })
  const store = memoryStore()
  const parent = createAgent({
    model: scriptedModel([{ toolCalls: [{ name: 'cleaner', args: { task: 'clean tmp' }, id: 'c1' }] }, { text: 'parent done' }]),
    tools: [cleaner], store, sessionId: 'p', cancelGraceMs: 1000, ...parentOpts,
  })
  return { parent, store, removed: () => removed }
}

/** The step the event at `index` stands in (its last `step/start`). */
function stepOf(events: readonly LogEvent[], index: number): number {
  for (let i = index; i >= 0; i--) if (events[i]!.type === 'step/start') return (events[i] as EventOf<'step/start'>).data.step
  return 0
}

async function readAll(store: LogStore, id: string): Promise<{ header: unknown; events: LogEvent[] }> {
  const r = await store.open(id, 'read')
  const events: LogEvent[] = []
  for await (const e of r.events()) events.push(e)
  const header = r.header
  await r.close?.()
  return { header, events }
}

describe('a parked child parks its parent (docs/spec/lifecycle.md §9, §10)', () => {
  it('L19, L18: the parent is parked, lists and decides the child\'s approval (logged in the child); the answer is the result', async () => {
    const { parent, store, removed } = setup()
    parent.followup('clean up')
    expect(await parent.whenSettled()).toBe('parked')
    expect(parent.status).toBe('parked')
    const open = parent.approvals()
    expect(open).toMatchObject([{ callId: 'k1', name: 'rm', session: CHILD }])
    // the call is running in the parent: no result yet, and no step/parked of its own (L18)
    expect(parent.events.some((e) => e.type === 'tool/result')).toBe(false)
    expect(parent.events.some((e) => e.type === 'step/parked' || e.type.startsWith('tool/approval'))).toBe(false)
    expect(removed()).toBe(0)
    await parent.decide(open[0]!.approvalId, { kind: 'approve' })
    await parent.whenIdle()
    await parent.flush()
    expect(removed()).toBe(1)
    expect(parent.approvals()).toEqual([])
    const res = parent.events.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    expect(res.data.error).toBeUndefined()
    expect(res.data.message.content).toEqual([{ type: 'text', text: 'cleaned' }])
    expect(parent.events.some((e) => e.type.startsWith('tool/approval'))).toBe(false)
    await parent.dispose()
    const child = await readAll(store, CHILD)
    const types = child.events.map((e) => e.type)
    expect(types).toContain('step/parked')
    const decided = child.events.find((e) => e.type === 'tool/approval-decided') as EventOf<'tool/approval-decided'>
    expect(decided.data).toMatchObject({ callId: 'k1', approvalId: open[0]!.approvalId, decision: { kind: 'approve' }, by: { kind: 'user' } })
    expect(verify(parent.events).violations).toEqual([])
    expect(verify(child.events).violations).toEqual([])
    expect(verifyChild('p', parent.events, child.header as { id: string })).toEqual([])
  })

  it('a refused decision through the parent is coded (the child refuses a second decision)', async () => {
    const { parent } = setup()
    parent.followup('clean up')
    await parent.whenSettled()
    const id = parent.approvals()[0]!.approvalId
    await parent.decide(id, { kind: 'deny', reason: 'no' })
    await parent.whenIdle()
    await expect(parent.decide(id, { kind: 'approve' })).rejects.toMatchObject({ code: 'UNKNOWN_APPROVAL' })
    const res = parent.events.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    expect(res.data.error).toBeUndefined() // the child answered after the denial
    await parent.dispose()
  })

  it("a parent's cancel while the child is parked cancels the child (cause parent; its approval canceled)", async () => {
    const { parent, store, removed } = setup()
    parent.followup('clean up')
    await parent.whenSettled()
    parent.cancel()
    await parent.whenIdle()
    await parent.dispose()
    expect(removed()).toBe(0)
    const res = parent.events.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    expect(res.data.error?.code).toMatch(/^ABORTED/)
    const child = await readAll(store, CHILD)
    const decided = child.events.find((e) => e.type === 'tool/approval-decided') as EventOf<'tool/approval-decided'>
    expect(decided.data.by).toEqual({ kind: 'canceled' })
    const end = child.events.filter((e) => e.type === 'turn/end').at(-1) as EventOf<'turn/end'>
    expect(end.data.reason).toEqual({ kind: 'aborted', cause: { kind: 'parent' } })
    expect(verify(parent.events).violations).toEqual([])
    expect(verify(child.events).violations).toEqual([])
  })

  it("L17 L19: a parent's steer while its child is parked supersedes the child's open approvals (docs/spec/lifecycle.md §9, §10); the child answers, the steer enters the parent's next step", async () => {
    const { parent, store, removed } = setup()
    parent.followup('clean up')
    expect(await parent.whenSettled()).toBe('parked')
    parent.steer('never mind, just report')
    await parent.whenIdle()
    await parent.flush()
    await parent.dispose()
    expect(removed()).toBe(0)
    const child = await readAll(store, CHILD)
    const decided = child.events.filter((e) => e.type === 'tool/approval-decided') as EventOf<'tool/approval-decided'>[]
    expect(decided.map((e) => [e.data.decision.kind, e.data.by])).toEqual([['deny', { kind: 'superseded' }]])
    const denied = child.events.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    expect(denied.data.error?.code).toBe('DENIED')
    // the steer is the parent's, never the child's input
    const texts = (evs: readonly LogEvent[]) => evs.filter((e) => e.type === 'user/message')
      .map((e) => (e as EventOf<'user/message'>).data.message.content.map((b) => (b.type === 'text' ? b.text : '')).join(''))
    expect(texts(child.events)).toEqual(['clean tmp'])
    const res = parent.events.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    expect(res.data.message.content).toEqual([{ type: 'text', text: 'cleaned' }])
    const at = parent.events.findIndex((e) => e.type === 'user/message' && texts([e])[0] === 'never mind, just report')
    expect(stepOf(parent.events, at)).toBe(2)
    expect(parent.events.filter((e) => e.type === 'turn/start')).toHaveLength(1)
    expect(verify(parent.events).violations).toEqual([])
    expect(verify(child.events).violations).toEqual([])
  })

  it("L17: with approvals.onSteer 'queue' the child's approval stays open and the parent's steer waits for the call's step boundary", async () => {
    const { parent, store, removed } = setup({ approvals: { onSteer: 'queue' } })
    parent.followup('clean up')
    expect(await parent.whenSettled()).toBe('parked')
    parent.steer('and then report')
    expect(await parent.whenSettled()).toBe('parked')
    const open = parent.approvals()
    expect(open).toHaveLength(1)
    await parent.decide(open[0]!.approvalId, { kind: 'approve' })
    await parent.whenIdle()
    await parent.flush()
    await parent.dispose()
    expect(removed()).toBe(1)
    const child = await readAll(store, CHILD)
    const decided = child.events.filter((e) => e.type === 'tool/approval-decided') as EventOf<'tool/approval-decided'>[]
    expect(decided.map((e) => e.data.by)).toEqual([{ kind: 'user' }])
    const um = parent.events.flatMap((e, i) => (e.type === 'user/message' ? [stepOf(parent.events, i)] : []))
    expect(um).toEqual([1, 2])
    expect(verify(parent.events).violations).toEqual([])
  })
})
