/**
 * Rounds across processes (docs/spec/lifecycle.md §11): a body never waits in memory. An agent asks
 * and is disposed (the session stays parked), `store.answer` answers with no agent running (memory
 * and JSONL stores), and a resumed agent runs the body's next round once (R10, R11); an open round
 * restored from the log waits again and `agent.answer` reaches it. Logs verify (L21, L18).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import { scriptedModel } from '../../models/index.js'
import { resumeAgent } from '../../replay/index.js'
import { memoryStore } from '../../stores/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { valid } from '../agent/contain-helpers.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { dataOf, roundsTool } from './helpers.js'

const dirs: string[] = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

const first = [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }] }]

async function stores() {
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-inputs-'))
  dirs.push(dir)
  return [['memory', memoryStore()], ['jsonl', jsonlStore(dir)]] as const
}

describe('rounds across processes (docs/spec/lifecycle.md §11)', () => {
  it('R10 R11: asked, disposed parked, answered by store.answer with no agent, resumed: the next round runs once (memory and JSONL)', async () => {
    for (const [kind, store] of await stores()) {
      const asking = roundsTool({ rounds: 2 })
      const a = createAgent({ model: scriptedModel(first), tools: [asking.tool], store, sessionId: 's1', clock: fakeClock(), ids: counterIds('a'), timers: instantTimers() })
      a.followup('ship it')
      expect(await a.whenSettled(), kind).toBe('parked')
      const requestId = a.inputs()[0]!.requestId
      await a.dispose()
      // a refused answer logs nothing
      await expect(store.answer('s1', requestId, { action: 'accept', responses: { address: { zip: '1' } } })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'responses.address/city' })
      const answered = await store.answer('s1', requestId, { action: 'accept', responses: { address: { city: 'Gent' } } }, { by: { kind: 'user', id: 'bo' } })
      expect(answered).toMatchObject({ callId: 'c1', round: 1, by: { kind: 'user', id: 'bo' } })
      await expect(store.answer('s1', requestId, { action: 'decline' })).rejects.toMatchObject({ code: 'INPUT_ANSWERED' })
      // another process resumes: round 2 is asked by the body, which ran once with the answer
      const resumed = roundsTool({ rounds: 2 })
      const b = await resumeAgent({ store, sessionId: 's1', model: scriptedModel([{ text: 'shipped' }]), tools: [resumed.tool], clock: fakeClock(1_764_460_000_000), ids: counterIds('b'), timers: instantTimers() })
      expect(await b.whenSettled(), kind).toBe('parked')
      expect(resumed.runs.map((r) => r.round), kind).toEqual([1])
      expect(resumed.runs[0]!.input).toMatchObject({ action: 'accept', responses: { address: { city: 'Gent' } }, by: { kind: 'user', id: 'bo' } })
      // the second round, restored in the same process, is answered through the agent
      const [o] = b.inputs()
      expect(o).toMatchObject({ round: 2, callId: 'c1' })
      await b.answer(o!.requestId, { action: 'accept', responses: { speed: 'fast' } })
      await b.whenIdle()
      expect(resumed.runs.map((r) => r.round), kind).toEqual([1, 2])
      expect(asking.runs.map((r) => r.round), kind).toEqual([0])
      expect(dataOf(b.events, 'tool/input-provided').map((d) => d.round)).toEqual([1, 2])
      expect(dataOf(b.events, 'tool/result')).toHaveLength(1)
      valid(b.events)
      await b.dispose()
    }
  })

  it('R9: a resumed agent over a parked round stays parked and runs nothing until the answer', async () => {
    const store = memoryStore()
    const asking = roundsTool()
    const a = createAgent({ model: scriptedModel(first), tools: [asking.tool], store, sessionId: 's2', clock: fakeClock(), ids: counterIds('a'), timers: instantTimers() })
    a.followup('ship it')
    await a.whenSettled()
    await a.dispose()
    const resumed = roundsTool()
    const b = await resumeAgent({ store, sessionId: 's2', model: scriptedModel([{ text: 'ok' }]), tools: [resumed.tool], clock: fakeClock(1_764_460_000_000), ids: counterIds('b'), timers: instantTimers() })
    expect(await b.whenSettled()).toBe('parked')
    expect(resumed.runs).toEqual([])
    const n = b.events.length
    expect(b.events.length).toBe(n)
    await b.answer(b.inputs()[0]!.requestId, { action: 'decline' })
    await b.whenIdle()
    expect(resumed.runs.map((r) => r.input?.action)).toEqual(['decline'])
    valid(b.events)
    await b.dispose()
  })
})

describe('repair of a crash with an open round (docs/spec/lifecycle.md §11)', () => {
  it('L21: a step interrupted (not parked) with an open round is closed: the round answered cancel by canceled, the call ABORTED; the repaired log verifies', async () => {
    const { repairEvents } = await import('../../replay/index.js')
    const asking = roundsTool()
    const store = memoryStore()
    const a = createAgent({ model: scriptedModel(first), tools: [asking.tool], store, sessionId: 's3', clock: fakeClock(), ids: counterIds('a'), timers: instantTimers() })
    a.followup('ship it')
    await a.whenSettled()
    // the crash came before the step parked: drop the step/parked (a process killed right after the round was logged)
    const events = a.events.filter((e) => e.type !== 'step/parked').map((e, i) => ({ ...e, seq: i }))
    await a.dispose()
    const r = repairEvents({ header: { type: 'session', format: 1, id: 's3', createdAt: 0 }, events: events as never })
    const closers = r.closers.map((e) => e.type)
    expect(closers.slice(0, 2)).toEqual(['tool/input-provided', 'tool/result'])
    expect((r.closers[0]!.data as Record<string, any>).by).toEqual({ kind: 'canceled' })
    expect((r.closers[1]!.data as Record<string, any>).error.code).toBe('ABORTED')
    valid([...events, ...r.closers] as never)
  })
})
