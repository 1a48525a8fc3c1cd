/**
 * Golden sessions with approvals (docs/spec/lifecycle.md §9, docs/spec/api.md "Golden sessions"): `rerun` re-issues the
 * recorded decisions (a person's, an expiry) at their lifecycle positions, matched to the re-run's
 * own approval of the same call; "asked for approval before tool T" (`askedForApprovalBefore`)
 * finds a change that lets a tool run without asking.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { EventOf } from '../../events/index.js'
import { askedForApprovalBefore, evaluate, recordedModel, rerun } from '../../evals/index.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import { instantTimers, recordGolden } from './goldens.js'

const base = { timers: instantTimers, timeoutMs: 5000 }

function tools(needsApproval = true, runs: string[] = []): AnyTool[] {
  return [defineTool({
    name: 'delete', description: 'Delete a file', parameters: z.object({ path: z.string() }),
    ...(needsApproval ? { needsApproval: true } : {}),
    execute: ({ path }) => {
      runs.push(path)
      return `deleted ${path}`
    },
  })] as AnyTool[]
}

/** Turn 1 deletes two files: a person approves one with edited arguments and denies the other; turn 2 is a plain answer. */
async function approvalGolden() {
  return recordGolden([
    { toolCalls: [{ id: 'c1', name: 'delete', args: { path: 'a.txt' } }, { id: 'c2', name: 'delete', args: { path: 'b.txt' } }] },
    { text: 'Deleted a2.txt; b.txt kept.' },
    { text: 'You are welcome.' },
  ], async (a) => {
    a.followup('Delete a.txt and b.txt')
    expect(await a.whenSettled()).toBe('parked')
    const [x, y] = a.approvals()
    await a.decide(y!.approvalId, { kind: 'deny', reason: 'keep b' }, { by: { kind: 'user', id: 'ann' } })
    await a.decide(x!.approvalId, { kind: 'approve', arguments: { path: 'a2.txt' } })
    await a.whenIdle()
    a.followup('Thanks')
    await a.whenIdle()
  }, { tools: tools() })
}

describe('golden sessions with approvals (docs/spec/lifecycle.md §9)', () => {
  it('P4 (goldens): rerun re-issues the recorded decisions at their positions; the re-run reproduces the golden', async () => {
    const g = await approvalGolden()
    const runs: string[] = []
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: tools(true, runs), toolResults: 'live' })
    expect(r.divergence).toBeNull()
    expect(r.log.events.length).toBe(g.events.length)
    expect(r.inputs.filter((i) => i.kind === 'decision').map((i) => i.outcome)).toEqual(['issued', 'issued'])
    expect(runs).toEqual(['a2.txt']) // the edited arguments, once; the denied call ran nothing
    const decided = r.log.events.filter((e) => e.type === 'tool/approval-decided').map((e) => (e as EventOf<'tool/approval-decided'>).data)
    expect(decided.map((d) => [d.callId, d.decision.kind, d.by])).toEqual([['c2', 'deny', { kind: 'user', id: 'ann' }], ['c1', 'approve', { kind: 'user' }]])
    expect(r.verify.ok).toBe(true)
  })

  it('P4 (goldens): a request with an expiry re-runs equal on another clock (its `expiresAt` is compared as time after the request)', async () => {
    const timed = (): AnyTool[] => [defineTool({
      name: 'delete', description: 'Delete a file', parameters: z.object({ path: z.string() }),
      needsApproval: true, approval: { timeoutMs: 60_000 }, execute: ({ path }) => `deleted ${path}`,
    })] as AnyTool[]
    const g = await recordGolden([
      { toolCalls: [{ id: 'c1', name: 'delete', args: { path: 'a.txt' } }] },
      { text: 'Deleted a.txt.' },
    ], async (a) => {
      a.followup('Delete a.txt')
      expect(await a.whenSettled()).toBe('parked')
      await a.decide(a.approvals()[0]!.approvalId, { kind: 'approve' })
      await a.whenIdle()
    }, { tools: timed() })
    // the golden's fake clock is years before the re-run's Date.now
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: timed() })
    expect(r.divergence).toBeNull()
    const at = (ev: typeof g.events) => ev.find((e) => e.type === 'tool/approval-requested') as EventOf<'tool/approval-requested'>
    expect(at(r.log.events).data.expiresAt! - at(r.log.events).time).toBe(60_000)
    // a changed timeout is still a divergence
    const other = await rerun(g, { ...base, model: recordedModel(g), tools: timed().map((t) => ({ ...t, approval: { timeoutMs: 1000 } })) as AnyTool[] })
    expect(other.divergence?.expected?.type).toBe('tool/approval-requested')
    expect(other.divergence?.diff).toContain('expiresAt')
  })

  it('P4 (goldens): a cancel while parked is re-issued (the open request is decided `canceled`, the turn ends aborted)', async () => {
    const g = await recordGolden([
      { toolCalls: [{ id: 'c1', name: 'delete', args: { path: 'a.txt' } }] },
      { text: 'Nothing deleted.' },
    ], async (a) => {
      a.followup('Delete a.txt')
      expect(await a.whenSettled()).toBe('parked')
      a.cancel({ kind: 'user' })
      await a.whenIdle()
      a.followup('Never mind')
      await a.whenIdle()
    }, { tools: tools() })
    expect(g.events.some((e) => e.type === 'tool/approval-decided' && (e as EventOf<'tool/approval-decided'>).data.by.kind === 'canceled')).toBe(true)
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: tools() })
    expect(r.inputs.filter((i) => i.kind === 'cancel').map((i) => i.outcome)).toEqual(['issued'])
    expect(r.divergence).toBeNull()
    expect(r.verify.ok).toBe(true)
  })

  it('P4 (goldens): a steer supersedes the parked request and a cancel follows at once: the cancel (with its inbox clear) is re-issued before the denied pair, the next call is ABORTED_BEFORE_DISPATCH', async () => {
    const two = (): AnyTool[] => [...tools(), defineTool({
      name: 'list', description: 'List files', parameters: z.object({}), execute: () => 'a.txt',
    })] as AnyTool[]
    const g = await recordGolden([
      { toolCalls: [{ id: 'c1', name: 'delete', args: { path: 'a.txt' } }, { id: 'c2', name: 'list', args: {} }] },
      { text: 'Stopped.' },
    ], async (a) => {
      a.followup('Delete a.txt, then list')
      expect(await a.whenSettled()).toBe('parked')
      a.steer('wait')
      a.cancel({ kind: 'user' })
      await a.whenIdle()
      a.followup('Go on')
      await a.whenIdle()
    }, { tools: two() })
    // the golden: superseded, the cancel's clear, c1's denied pair, c2's not-dispatched pair
    const tail = g.events.slice(g.events.findIndex((e) => e.type === 'step/parked') + 1)
    expect(tail.slice(0, 7).map((e) => e.type === 'tool/result' ? `result ${(e as EventOf<'tool/result'>).data.error?.code}` : e.type)).toEqual([
      'agent/inbox/spliced', 'tool/approval-decided', 'agent/inbox/spliced', 'tool/call', 'result DENIED', 'tool/call', 'result ABORTED_BEFORE_DISPATCH',
    ])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: two() })
    // the clear is the cancel's (not a user's removal), issued right after the supersede
    expect(r.inputs.filter((i) => i.kind === 'edit')).toEqual([])
    expect(r.inputs.find((i) => i.kind === 'cancel')).toMatchObject({ outcome: 'issued', at: 'turn 1 · step 1 · after tool/approval-decided #1' })
    expect(r.divergence).toBeNull()
    expect(r.verify.ok).toBe(true)
  })

  it('P4 (goldens): a cancel while the pre-execute hook decides `ask` is re-issued from inside that hook: the request is decided `canceled` at once, no `step/parked`', async () => {
    let entered!: () => void
    const inHook = new Promise<void>((r) => (entered = r))
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const asking = (wait: () => Promise<void>) => ({
      'tools/pre-execute': async () => {
        await wait()
        return { kind: 'ask' as const, question: 'sure?' }
      },
    })
    const g = await recordGolden([
      { toolCalls: [{ id: 'c1', name: 'delete', args: { path: 'a.txt' } }] },
      { text: 'Stopped.' },
    ], async (a) => {
      a.followup('Delete a.txt')
      await inHook
      a.cancel({ kind: 'user' })
      release()
      await a.whenIdle()
      a.followup('Go on')
      await a.whenIdle()
    }, { tools: tools(false), hooks: asking(async () => {
      entered()
      await gate
    }) })
    const tail = g.events.slice(g.events.findIndex((e) => e.type === 'tool/call'))
    expect(tail.slice(0, 4).map((e) => e.type === 'tool/result' ? `result ${(e as EventOf<'tool/result'>).data.error?.code}` : e.type)).toEqual([
      'tool/call', 'tool/approval-requested', 'tool/approval-decided', 'result ABORTED_BEFORE_DISPATCH',
    ])
    expect(g.events.some((e) => e.type === 'step/parked')).toBe(false)
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: tools(false), hooks: asking(async () => {}) })
    expect(r.inputs.find((i) => i.kind === 'cancel')).toMatchObject({ outcome: 'issued', at: 'turn 1 · step 1 · after tool/call #1' })
    expect(r.divergence).toBeNull()
    expect(r.verify.ok).toBe(true)
  })

  it('P4 (goldens): a cancel while pre-execute decides `ask` and another call\'s request is open: issued from inside that hook (seed 952250528)', async () => {
    let entered!: () => void
    const inHook = new Promise<void>((r) => (entered = r))
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const mixed = (): AnyTool[] => [...tools(), defineTool({
      name: 'list', description: 'List files', parameters: z.object({}), execute: () => 'a.txt',
    })] as AnyTool[]
    const asking = (wait: () => Promise<void>) => ({
      'tools/pre-execute': async (p: { call: { name: string } }, next: () => Promise<unknown>) => {
        if (p.call.name !== 'list') return next()
        await wait()
        return { kind: 'ask' as const, question: 'list?' }
      },
    })
    const g = await recordGolden([
      { toolCalls: [{ id: 'c1', name: 'list', args: {} }, { id: 'c2', name: 'delete', args: { path: 'a.txt' } }] },
      { text: 'Stopped.' },
    ], async (a) => {
      a.followup('List, then delete a.txt')
      await inHook
      a.cancel({ kind: 'user' })
      release()
      await a.whenIdle()
    }, { tools: mixed(), hooks: asking(async () => {
      entered()
      await gate
    }) as never })
    const decided = g.events.filter((e) => e.type === 'tool/approval-decided').map((e) => (e as EventOf<'tool/approval-decided'>).data)
    expect(decided.map((d) => [d.callId, d.by.kind])).toEqual([['c2', 'canceled'], ['c1', 'canceled']])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: mixed(), hooks: asking(async () => {}) as never })
    expect(r.divergence).toBeNull()
    expect(r.verify.ok).toBe(true)
  })

  it('a decision for a call the re-run does not ask about is dropped, not forced', async () => {
    const g = await approvalGolden()
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: tools(false), toolResults: 'live' })
    expect(r.inputs.filter((i) => i.kind === 'decision').map((i) => i.outcome)).toEqual(['dropped', 'dropped'])
    expect(r.divergence?.expected?.type).toBe('tool/approval-requested')
  })

  it('askedForApprovalBefore: passes when every call of the tool was asked about, fails naming the call when a change stops asking', async () => {
    const g = await approvalGolden()
    const grader = askedForApprovalBefore('delete', { atLeastOnce: true })
    const ok = await evaluate([g], { ...base, model: recordedModel(g), tools: tools(true), toolResults: 'live', graders: [grader] })
    expect(ok.goldens[0]!.pass).toBe(true)
    const bad = await evaluate([g], { ...base, model: recordedModel(g), tools: tools(false), toolResults: 'live', graders: [grader] })
    expect(bad.goldens[0]!.pass).toBe(false)
    const result = bad.goldens[0]!.trials[0]!.graders.find((x) => x.name === 'asked for approval before delete')!
    expect(result.pass).toBe(false)
    expect(result.reason).toMatch(/turn 1 step 1: delete \(call c1, seq \d+\) was called without asking for approval/)
  })

  it('askedForApprovalBefore with atLeastOnce fails a re-run that never calls the tool', async () => {
    const g = await approvalGolden()
    const grader = askedForApprovalBefore(['delete'], { atLeastOnce: true })
    const r = await evaluate([g], { ...base, model: recordedModel(g, { replace: (at) => (at.turn === 1 && at.step === 1 ? { text: 'No.' } : undefined) }), tools: tools(true), toolResults: 'live', graders: [grader] })
    expect(r.goldens[0]!.trials[0]!.graders[0]).toMatchObject({ pass: false, reason: 'the re-run never called delete' })
  })
  it('a re-run that parks where the golden did not is reported at once as a divergence, not after timeoutMs', async () => {
    const g = await recordGolden([
      { toolCalls: [{ id: 'c1', name: 'delete', args: { path: 'a.txt' } }] },
      { text: 'Deleted a.txt.' },
    ], async (a) => {
      a.followup('Delete a.txt')
      await a.whenIdle()
    }, { tools: tools(false) })
    // the change under test: the tool now needs approval; no recorded decision answers it
    const r = await rerun(g, { ...base, timeoutMs: 600_000, model: recordedModel(g), tools: tools(true) })
    expect(r.timedOut).toBe(false)
    expect(r.divergence).not.toBeNull()
    expect(r.divergence!.actual?.type).toBe('tool/approval-requested')
    expect(r.errors.some((m) => m.includes('parked'))).toBe(true)
  }, 60_000)
})
