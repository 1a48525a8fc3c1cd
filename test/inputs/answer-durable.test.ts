/**
 * An answer is never lost once acknowledged (R11, docs/spec/lifecycle.md §11): `agent.answer`
 * resolves only when the `tool/input-provided` is durable, so a process killed right after it
 * leaves the answer in the log and the next process runs the round once; an answer the store
 * could not take is refused (the call rejects) and no body ever sees it, so the round is still
 * open for the next process.
 */
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { resumeAgent } from '../../replay/index.js'
import { verify } from '../../replay/verify.js'
import { memoryStore } from '../../stores/index.js'
import type { LogStore } from '../../stores/types.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { ADDRESS_SCHEMA, roundsTool } from './helpers.js'
import { defineTool } from '../../tools/index.js'
import { z } from 'zod'

const first = [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }] }]

/** A memory store whose writers' appends fail while `down` is set (a disk or a database gone). */
function flakyStore() {
  const inner = memoryStore()
  const state = { down: false }
  const wrapWriter = (w: object) => new Proxy(w, {
    get(t, p) {
      const v = Reflect.get(t, p, t) as unknown
      if (p === 'append') {
        return async (...a: unknown[]) => {
          if (state.down) throw new Error('the store is down')
          return (v as (...x: unknown[]) => unknown).apply(t, a)
        }
      }
      return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(t) : v
    },
  })
  const store = new Proxy(inner, {
    get(t, p) {
      const v = Reflect.get(t, p, t) as unknown
      if (p === 'open') return async (...a: unknown[]) => wrapWriter(await (v as (...x: unknown[]) => Promise<object>).apply(t, a))
      return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(t) : v
    },
  }) as LogStore
  return { store, state }
}

async function stored(store: LogStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events(0)) out.push(e)
  await r.close()
  return out
}

describe('an acknowledged answer is durable (R11, docs/spec/lifecycle.md §11)', () => {
  it('R10 R11: agent.answer resolves with the answer in the store; a process killed right then leaves it, and the next one runs the round once', async () => {
    const store = memoryStore()
    // the first process's round-1 body never gets to log anything: the process is killed first
    const held: number[] = []
    const asking = defineTool({
      name: 'ship', description: 'ship', parameters: z.object({ item: z.string() }),
      execute: (_a, ctx) => {
        held.push(ctx.input?.round ?? 0)
        if (ctx.input === undefined) return ctx.inputRequired({ requests: { address: { kind: 'form', message: 'Where to?', schema: ADDRESS_SCHEMA } } })
        return new Promise<never>(() => {})
      },
    })
    const a = createAgent({ model: scriptedModel(first), tools: [asking], store, sessionId: 'd1', clock: fakeClock(), ids: counterIds('a'), timers: instantTimers() })
    a.followup('ship it')
    expect(await a.whenSettled()).toBe('parked')
    const id = a.inputs()[0]!.requestId
    await a.answer(id, { action: 'accept', responses: { address: { city: 'Gent' } } })
    // the crash comes now: what the store holds is all that survives
    const log = await stored(store, 'd1')
    expect(log.filter((e) => e.type === 'tool/input-provided').map((e) => (e.data as { requestId: string }).requestId)).toEqual([id])
    expect(log.some((e) => e.type === 'tool/result')).toBe(false)
    const resumed = roundsTool({ rounds: 1 })
    const b = await resumeAgent({ log, sessionId: 'd1', model: scriptedModel([{ text: 'shipped' }]), tools: [resumed.tool], clock: fakeClock(1_764_460_000_000), ids: counterIds('b'), timers: instantTimers() })
    await b.whenIdle()
    // the answer reaches the new process's body once, as given (the round is not asked again)
    expect(resumed.runs.map((r) => r.round)).toEqual([1])
    expect(resumed.runs[0]!.input).toMatchObject({ action: 'accept', responses: { address: { city: 'Gent' } } })
    expect(b.events.filter((e) => e.type === 'tool/input-requested')).toHaveLength(1)
    expect(verify(b.events).violations).toEqual([])
    await b.dispose()
  })

  it('R11: an answer the store cannot take is refused (agent.answer rejects), no body sees it, and the round is still open for the next process', async () => {
    const { store, state } = flakyStore()
    const asking = roundsTool({ rounds: 1 })
    const a = createAgent({ model: scriptedModel(first), tools: [asking.tool], store, sessionId: 'd2', clock: fakeClock(), ids: counterIds('a'), timers: instantTimers() })
    a.followup('ship it')
    expect(await a.whenSettled()).toBe('parked')
    const id = a.inputs()[0]!.requestId
    // the round and the park are durable; then the store goes down
    await a.flush()
    state.down = true
    await expect(a.answer(id, { action: 'accept', responses: { address: { city: 'Gent' } } })).rejects.toBeInstanceOf(Error)
    // give the agent every chance to run the body with the unlogged answer
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
    expect(asking.runs.map((r) => r.round)).toEqual([0])
    state.down = false
    const log = await stored(store, 'd2')
    expect(log.some((e) => e.type === 'tool/input-provided')).toBe(false)
    const resumed = roundsTool({ rounds: 1 })
    const b = await resumeAgent({ log, sessionId: 'd2', model: scriptedModel([{ text: 'shipped' }]), tools: [resumed.tool], clock: fakeClock(1_764_460_000_000), ids: counterIds('b'), timers: instantTimers() })
    expect(await b.whenSettled()).toBe('parked')
    expect(b.inputs().map((o) => o.requestId)).toEqual([id])
    await b.answer(id, { action: 'accept', responses: { address: { city: 'Brugge' } } })
    await b.whenIdle()
    expect(resumed.runs.map((r) => r.round)).toEqual([1])
    expect(resumed.runs[0]!.input?.responses).toEqual({ address: { city: 'Brugge' } })
    expect(verify(b.events).violations).toEqual([])
    await a.dispose().catch(() => {})
    await b.dispose()
  })
})
