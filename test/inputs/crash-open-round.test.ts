/**
 * A crash while a round is open and another body of the step still runs (docs/spec/lifecycle.md §11: "a crash
 * between rounds loses nothing"; R11, L21). The step had not parked yet, so the log does not stand
 * parked; before, repair answered the open round `cancel` `by: canceled` and its call ended
 * `ABORTED`, and an answer a store had accepted for it in the meantime (`store.answer`, told
 * "answered") was dropped (on JSONL: logged, then ignored). Now `resumeAgent` leaves the step open
 * (repair's `continueRounds`): the round waits on, the other body's call gets its §8 result
 * (`TOOL_OUTCOME_UNKNOWN`), and the answer — given before or after the resume — reaches the body's
 * next round exactly once. `turnlog repair` alone still closes the step.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { repairEvents, resumeAgent } from '../../replay/index.js'
import { jsonlStore, type JsonlStore } from '../../stores/jsonl/index.js'
import { postgresStore, type PostgresStore } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { valid } from '../agent/contain-helpers.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { besideAskTool as askingTool, dataOf, gatedSlowTool as slowTool } from './helpers.js'

const dirs: string[] = []
const pgStores: PostgresStore[] = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
  for (const s of pgStores.splice(0)) await s.close()
})
afterAll(async () => {
  await dropAll()
})

const STEP = [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }, { name: 'slow', args: {}, id: 'c2' }] }, { text: 'done' }]

/** The log as a killed process leaves it: c1 asked round 1, c2's body still running (no step/parked). */
async function crashedLog(): Promise<LogEvent[]> {
  const asking = askingTool()
  const slow = slowTool()
  const a = createAgent({ model: scriptedModel(STEP), tools: [asking.tool, slow.tool], sessionId: 's', clock: fakeClock(), ids: counterIds('a'), timers: instantTimers(), maxParallelToolCalls: 2 })
  a.followup('ship it')
  for (let i = 0; i < 200 && !a.events.some((e) => e.type === 'tool/input-requested'); i++) await new Promise((r) => setImmediate(r))
  const events = a.events.slice()
  expect(events.some((e) => e.type === 'tool/input-requested')).toBe(true)
  expect(events.some((e) => e.type === 'step/parked')).toBe(false)
  expect(slow.runs).toEqual([1])
  slow.release()
  await a.answer(a.inputs()[0]!.requestId, { action: 'decline' })
  await a.whenIdle()
  await a.dispose()
  return events
}

/**
 * The crashed log in `store`, a person's answer to its open round accepted by `store.answer` while no
 * agent ran, then `resumeAgent`: the body's next round gets that answer, once; the cut call gets its
 * §8 result; nothing runs twice.
 */
async function answeredWhileNoneRan(store: JsonlStore | PostgresStore): Promise<void> {
  const log = await crashedLog()
  await store.create('s', { createdAt: log[0]!.time })
  const w = await store.open('s', 'write')
  await w.append(log, { expectedSeq: 0 })
  await w.close()
  const requestId = dataOf(log, 'tool/input-requested')[0]!.requestId
  const told = await store.answer('s', requestId, { action: 'accept', responses: { address: { city: 'Gent' } } }, { by: { kind: 'user', id: 'bo' } })
  expect(told).toMatchObject({ callId: 'c1', round: 1 })
  const resumed = askingTool()
  const slow = slowTool()
  const b = await resumeAgent({ store, sessionId: 's', model: scriptedModel([{ text: 'shipped' }]), tools: [resumed.tool, slow.tool], clock: fakeClock(1_764_460_000_000), ids: counterIds('b'), timers: instantTimers(), maxParallelToolCalls: 2 })
  await b.whenIdle()
  expect(resumed.runs.map((r) => [r.round, r.input?.by])).toEqual([[1, { kind: 'user', id: 'bo' }]])
  expect(dataOf(b.events, 'tool/input-provided').map((d) => [d.requestId, d.answer.action, d.by])).toEqual([[requestId, 'accept', { kind: 'user', id: 'bo' }]])
  expect(dataOf(b.events, 'tool/result').map((d) => [d.callId, d.error?.code ?? 'ok'])).toEqual([['c1', 'ok'], ['c2', 'TOOL_OUTCOME_UNKNOWN']])
  expect(slow.runs).toEqual([])
  valid(b.events)
  await b.dispose()
}

describe('a crash while a round is open and another body runs (docs/spec/lifecycle.md §11)', () => {
  it('R11 L21: resumeAgent keeps the round open; the running call gets TOOL_OUTCOME_UNKNOWN; the answer reaches round 1 once', async () => {
    const log = await crashedLog()
    const resumed = askingTool()
    const slow = slowTool()
    const b = await resumeAgent({ log, sessionId: 's', model: scriptedModel([{ text: 'shipped' }]), tools: [resumed.tool, slow.tool], clock: fakeClock(1_764_460_000_000), ids: counterIds('b'), timers: instantTimers(), maxParallelToolCalls: 2 })
    for (let i = 0; i < 200 && b.inputs().length === 0; i++) await new Promise((r) => setImmediate(r))
    expect(b.inputs()).toMatchObject([{ callId: 'c1', round: 1 }])
    expect(slow.runs).toEqual([]) // R10: the cut body is not run again
    // c2's §8 result waits behind c1's open round in model order (L6)
    expect(dataOf(b.events, 'tool/result')).toEqual([])
    await b.answer(b.inputs()[0]!.requestId, { action: 'accept', responses: { address: { city: 'Gent' } } })
    await b.whenIdle()
    expect(resumed.runs.map((r) => r.round)).toEqual([1])
    expect(dataOf(b.events, 'tool/input-provided').map((d) => [d.round, d.by.kind])).toEqual([[1, 'user']])
    expect(dataOf(b.events, 'tool/result').map((d) => [d.callId, d.error?.code ?? 'ok'])).toEqual([['c1', 'ok'], ['c2', 'TOOL_OUTCOME_UNKNOWN']])
    valid(b.events)
    await b.dispose()
  })

  it('R11: an answer a JSONL store accepted before the resume (told "answered") is the one the body gets, not a cancel', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-open-round-'))
    dirs.push(dir)
    await answeredWhileNoneRan(jsonlStore(dir))
  })

  it('R11 (PostgreSQL): an answer recorded while no agent ran (a turnlog_decisions row) is the one the body gets, once', async () => {
    const store = postgresStore({ connectionString: await freshDb('openround') })
    pgStores.push(store)
    await store.migrate()
    await answeredWhileNoneRan(store)
  })

  it('L21: repair alone (no resumed agent) still closes the round: cancel by canceled, the call ABORTED', async () => {
    const log = await crashedLog()
    const r = repairEvents({ header: { type: 'session', format: 1, id: 's', createdAt: 0 }, events: log })
    expect(dataOf(r.closers, 'tool/input-provided').map((d) => [d.answer.action, d.by.kind])).toEqual([['cancel', 'canceled']])
    expect(dataOf(r.closers, 'tool/result').map((d) => [d.callId, d.error?.code])).toEqual([['c1', 'ABORTED'], ['c2', 'TOOL_OUTCOME_UNKNOWN']])
  })
})
