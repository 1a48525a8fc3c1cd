/**
 * A parked family survives `dispose()` (docs/spec/lifecycle.md §9, §10): a parent parked because its child's
 * step waits for a person is not cancelled by `dispose()` (neither is the child): both logs stay
 * as they were — the child's `step/parked` with its open approval, the parent's call running — and
 * a resumed parent re-attaches the child, still parked, under the same approval id. A decision
 * made while nothing runs is found on resume: `whenSettled()` is then not 'parked' (nothing is
 * owed to a person) and the approved body runs once.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { decideInStore } from '../../stores/decide.js'
import { defineTool } from '../../tools/define.js'

const CHILD = 'p.c1-1-c1'
const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

function family(store: LogStore, counter: { removed: number }) {
  const rm = defineTool({
    name: 'rm', description: 'removes a file', parameters: z.object({ path: z.string() }), needsApproval: true,
    execute: () => {
      counter.removed++
      return 'ok'
    },
  })
  const cleaner = defineSubagent({
    name: 'cleaner', description: 'cleans up', parameters: z.object({ task: z.string() }),
    agent: () => ({
      model: scriptedModel((req) => (req.messages.at(-1)?.role === 'tool' ? { text: 'cleaned' } : { toolCalls: [{ name: 'rm', args: { path: 'tmp' }, id: 'k1' }] })),
      tools: [rm], system: 'child',
    }),
  })
  const model = scriptedModel((req) => (req.messages.at(-1)?.role === 'tool' ? { text: 'parent done' } : { toolCalls: [{ name: 'cleaner', args: { task: 'clean tmp' }, id: 'c1' }] }))
  return { model, tools: [cleaner], store, sessionId: 'p', system: 'parent', cancelGraceMs: 1000 }
}

async function readAll(store: LogStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  const events: LogEvent[] = []
  for await (const e of r.events()) events.push(e)
  await r.close?.()
  return events
}

async function parkedAndDisposed(): Promise<{ store: LogStore; counter: { removed: number }; approvalId: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-family-'))
  dirs.push(dir)
  const store = jsonlStore(dir)
  const counter = { removed: 0 }
  const parent = createAgent(family(store, counter))
  parent.followup('clean up')
  expect(await parent.whenSettled()).toBe('parked')
  const approvalId = parent.approvals()[0]!.approvalId
  await parent.dispose()
  return { store, counter, approvalId, dir }
}

describe('a parked family survives dispose() (lifecycle §9, §10)', () => {
  it('L18 R9 L19: dispose() of a parent parked by its child cancels neither; a resumed parent is parked on the same approval and finishes once decided', async () => {
    const { store, counter, approvalId } = await parkedAndDisposed()
    const child = await readAll(store, CHILD)
    const parentLog = await readAll(store, 'p')
    // nothing decided, nothing closed: the child's step is parked, the parent's call runs
    expect(child.map((e) => e.type)).toContain('step/parked')
    expect(child.some((e) => e.type === 'tool/approval-decided' || e.type === 'tool/result' || e.type === 'turn/end')).toBe(false)
    expect(parentLog.some((e) => e.type === 'tool/result' || e.type === 'turn/end')).toBe(false)
    expect(counter.removed).toBe(0)

    const resumed = await resumeAgent(family(store, counter))
    expect(await resumed.whenSettled()).toBe('parked')
    expect(resumed.approvals().map((a) => [a.approvalId, a.session])).toEqual([[approvalId, CHILD]])
    await resumed.decide(approvalId, { kind: 'approve' })
    expect(await resumed.whenSettled()).toBe('idle')
    await resumed.dispose()
    expect(counter.removed).toBe(1)
    const after = await readAll(store, 'p')
    const res = after.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    expect(res.data.message.content).toEqual([{ type: 'text', text: 'cleaned' }])
    expect((after.filter((e) => e.type === 'turn/end').at(-1) as EventOf<'turn/end'>).data.reason.kind).toBe('completed')
    expect(verify(after).violations).toEqual([])
    expect(verify(await readAll(store, CHILD)).violations).toEqual([])
  })

  it('L18 R9: decided while nothing ran, a resumed family is not parked (nothing owed to a person) and the approved body runs once', async () => {
    const { store, counter, approvalId } = await parkedAndDisposed()
    await decideInStore(store, CHILD, approvalId, { kind: 'approve' })
    const resumed = await resumeAgent(family(store, counter))
    const settled = await resumed.whenSettled()
    // 'parked' is only ever seen with something open for a person
    expect([settled, resumed.approvals().length > 0]).toEqual(['idle', false])
    await resumed.dispose()
    expect(counter.removed).toBe(1)
    const after = await readAll(store, 'p')
    expect((after.filter((e) => e.type === 'turn/end').at(-1) as EventOf<'turn/end'>).data.reason.kind).toBe('completed')
  })

  for (const [what, parent] of [
    ['names another parent', { session: 'other', seq: 3, callId: 'c1' }],
    ['names another call of this parent', { session: 'p', seq: 99, callId: 'c9' }],
    ['names no parent (an unrelated session)', undefined],
  ] as const) {
    it(`L19: a log at the child's id that ${what} is not re-attached on resume: its answer never becomes the call's result, which is TOOL_OUTCOME_UNKNOWN as repair gives`, async () => {
      const { store, dir } = await parkedAndDisposed()
      // a finished session under the child's id, written elsewhere and copied in
      const otherDir = await mkdtemp(join(tmpdir(), 'turnlog-foreign-'))
      dirs.push(otherDir)
      const other = jsonlStore(otherDir)
      await other.create(CHILD, parent !== undefined ? { parent } : {})
      const foreign = createAgent({ model: scriptedModel([{ text: 'FOREIGN' }]), store: other, sessionId: CHILD })
      foreign.followup('hi')
      await foreign.whenIdle()
      await foreign.dispose()
      await copyFile(join(otherDir, `${CHILD}.jsonl`), join(dir, `${CHILD}.jsonl`))
      const resumed = await resumeAgent(family(store, { removed: 0 }))
      await resumed.whenSettled()
      await resumed.dispose().catch(() => {})
      const after = await readAll(store, 'p')
      const res = after.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
      expect(JSON.stringify(res.data.message.content)).not.toContain('FOREIGN')
      expect(res.data.error?.message).toMatch(/L19/)
      // resume and repair agree: the call's outcome is unknown (the log at the id is not its child)
      expect(res.data.error?.code).toBe('TOOL_OUTCOME_UNKNOWN')
      expect(verify(after).violations).toEqual([])
    })
  }
})
