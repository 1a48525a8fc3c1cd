/**
 * The agent's persistence (agent/persistence.ts): every committed event reaches the store in
 * batches, `flush()` means durable, and a store failure stops the agent (reliability rows "fsync
 * fails" and "two writers on one session", seen from the agent).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, type AgentOptions } from '../../agent/index.js'
import { TurnlogError } from '../../events/errors.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { memoryStore } from '../../stores/memory.js'
import type { LogStore } from '../../stores/types.js'
import { defineTool } from '../../tools/index.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { collect, expectCode } from './contract.js'
import { faultyFs } from './faulty-fs.js'

const dirs: string[] = []
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'turnlog-agent-store-'))
  dirs.push(d)
  return d
}
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

const echo = defineTool({
  name: 'echo',
  description: 'echo',
  parameters: z.object({ text: z.string() }),
  isConcurrencySafe: () => true,
  execute: async ({ text }) => text,
})

const TOOL_TURN: ScriptedEntry[] = [
  { toolCalls: [{ name: 'echo', args: { text: 'a' } }, { name: 'echo', args: { text: 'b' } }] },
  { text: 'done' },
]

function make(store: LogStore, sessionId: string, script: ScriptedEntry[], opts: Partial<AgentOptions> = {}) {
  const errors: Array<{ error: unknown; where: string }> = []
  const agent = createAgent({
    model: scriptedModel(script, { info: { name: 'scripted' } }),
    tools: [echo],
    system: 'sys',
    clock: fakeClock(),
    ids: counterIds('m'),
    timers: instantTimers(),
    store,
    sessionId,
    ...opts,
  })
  agent.on('agent/error', (e) => errors.push({ error: e.error, where: e.where }))
  return { agent, errors }
}

const plain = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T

describe('agent persistence', () => {
  for (const kind of ['jsonl', 'memory'] as const) {
    it(`${kind}: every committed event reaches the store; flush() means durable; the stored log verifies (P3, L1–L16)`, async () => {
      const store = kind === 'jsonl' ? jsonlStore(await tmp()) : memoryStore()
      const { agent, errors } = make(store, 'sess-1', [...TOOL_TURN, { text: 'second' }])
      agent.followup('one')
      agent.followup('two')
      await agent.whenIdle()
      await agent.flush()
      const r = await store.open('sess-1', 'read')
      const stored = await collect(r.events())
      expect(stored).toEqual(plain(agent.events))
      expect(verify(stored).violations).toEqual([])
      expect(errors).toEqual([])
      await agent.dispose()
      // dispose released the lock
      const w = await store.open('sess-1', 'write')
      expect(w.length).toBe(agent.events.length)
      await w.close()
    })
  }

  it('group commit: far fewer fsyncs than events; flush() waits for the fsync in flight', async () => {
    const dir = await tmp()
    const ffs = faultyFs()
    const store = jsonlStore(dir, { fs: ffs })
    const { agent } = make(store, 's', TOOL_TURN)
    await agent.flush() // the store is open
    const s0 = ffs.syncs
    agent.followup('go')
    await agent.whenIdle()
    await agent.flush()
    const n = agent.events.length
    expect(ffs.syncs - s0).toBeLessThan(n / 2)
    // a held fsync holds flush()
    const hold = ffs.holdSyncs()
    agent.followup('more')
    let flushed = false
    const f = agent.flush().then(() => (flushed = true))
    while (hold.waiting() === 0) await new Promise((r) => setTimeout(r, 1))
    await new Promise((r) => setTimeout(r, 5))
    expect(flushed).toBe(false)
    hold.release()
    await f
    expect(flushed).toBe(true)
    await agent.whenIdle()
    await agent.dispose()
    const log = await readLog(store.path('s'))
    expect(log.events).toEqual(plain(agent.events))
  })

  it('fsync EIO mid-turn: agent/error, flush() rejects FSYNC_FAILED, the turn is cancelled (inbox kept), new input is refused, nothing flushed is lost', async () => {
    const dir = await tmp()
    const ffs = faultyFs()
    const store = jsonlStore(dir, { fs: ffs })
    let calls = 0
    const slow = defineTool({
      name: 'slow',
      description: 'slow',
      parameters: z.object({}),
      // Runs until the turn is cancelled. It used to sleep 30 ms of real time and then return: on a
      // loaded machine the test's poll below (or the failing fsync) came after those 30 ms, the turn
      // had completed, and 'second' ran a whole turn before the fsync failure was seen (two
      // completed turns). Now only the halt's cancel can end the body: no timing decides the log.
      execute: async (_a, { signal }) => {
        calls++
        await new Promise((r) => (signal.aborted ? r(undefined) : signal.addEventListener('abort', r, { once: true })))
        return 'late'
      },
    })
    const { agent, errors } = make(store, 's', [
      { toolCalls: [{ name: 'slow', args: {} }] }, { text: 'x' }, { text: 'y' },
    ], { tools: [slow] })
    agent.followup('first')
    await agent.flush()
    // the body starts once its tool/call is durable (R10); the next fsync fails while it runs
    while (calls === 0) await new Promise((r) => setTimeout(r, 1))
    await agent.flush()
    const durable = agent.events.length
    ffs.failSync('EIO', 's.jsonl')
    const pendingId = agent.followup('second (accepted, never run)')
    const err = await expectCode(agent.flush(), 'FSYNC_FAILED')
    await agent.whenIdle()
    expect(errors.map((e) => [e.where, (e.error as TurnlogError).code])).toContainEqual(['store', 'FSYNC_FAILED'])
    // the same error, every time
    expect(await agent.flush().catch((e) => e)).toBe(err)
    const end = agent.events.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: unknown }).reason)
    expect(end).toEqual([{ kind: 'aborted', cause: { kind: 'hook', reason: 'persistence failed: FSYNC_FAILED' } }])
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual([pendingId])
    expect(agent.status).toBe('idle')
    const refused = await expectCode(() => agent.followup('third'), 'PERSISTENCE_FAILED')
    expect(TurnlogError.is(refused.cause, 'FSYNC_FAILED')).toBe(true)
    expect(verify(agent.events).violations).toEqual([])
    await expectCode(agent.dispose(), 'FSYNC_FAILED')
    // the durable log: at least what flush() acknowledged, a prefix of the in-memory log
    const log = await readLog(store.path('s'), { tolerateTornTail: true })
    expect(log.events.length).toBeGreaterThanOrEqual(durable)
    expect(log.events).toEqual(plain(agent.events.slice(0, log.events.length)))
  })

  it('R10 §8: an fsync that fails before a call\'s tool/call is durable: the body never runs, the call ends ABORTED, the turn is cancelled, nothing flushed is lost', async () => {
    const dir = await tmp()
    const ffs = faultyFs()
    const store = jsonlStore(dir, { fs: ffs })
    let calls = 0
    const counted = defineTool({ name: 'counted', description: 'counted', parameters: z.object({}), execute: () => `ran ${++calls}` })
    const { agent } = make(store, 's', [{ toolCalls: [{ name: 'counted', args: {} }] }, { text: 'x' }], { tools: [counted] })
    await agent.flush() // the store is open
    ffs.failSync('EIO', 's.jsonl')
    agent.followup('go')
    await expectCode(agent.flush(), 'FSYNC_FAILED')
    await agent.whenIdle()
    expect(calls).toBe(0)
    const results = agent.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as { error?: { code: string } }).error?.code)
    expect(results.every((c) => c === 'ABORTED' || c === 'ABORTED_BEFORE_DISPATCH')).toBe(true)
    expect(verify(agent.events).violations).toEqual([])
    await expectCode(agent.dispose(), 'FSYNC_FAILED')
    const log = await readLog(store.path('s'), { tolerateTornTail: true })
    expect(log.events).toEqual(plain(agent.events.slice(0, log.events.length)))
  })

  it('two agents on one session (SESSION_OWNED): the second reports it, flush() rejects, its input is refused', async () => {
    const store = jsonlStore(await tmp())
    const a = make(store, 's', [{ text: 'a' }])
    await a.agent.flush()
    const b = make(store, 's', [{ text: 'b' }])
    b.agent.followup('hello') // accepted before the store answered
    await expectCode(b.agent.flush(), 'SESSION_OWNED')
    expect(b.errors.map((e) => (e.error as TurnlogError).code)).toContain('SESSION_OWNED')
    await b.agent.whenIdle()
    await expectCode(() => b.agent.followup('again'), 'PERSISTENCE_FAILED')
    await expectCode(b.agent.dispose(), 'SESSION_OWNED')
    // a is unaffected
    a.agent.followup('hi')
    await a.agent.whenIdle()
    await a.agent.flush()
    await a.agent.dispose()
    expect((await readLog(store.path('s'))).events).toEqual(plain(a.agent.events))
  })

  it('a session that already holds events is refused (SESSION_EXISTS: resumeAgent continues it); the file is untouched', async () => {
    const store = jsonlStore(await tmp())
    const a = make(store, 's', [{ text: 'a' }])
    a.agent.followup('hi')
    await a.agent.whenIdle()
    await a.agent.dispose()
    const before = await readFile(store.path('s'))
    const b = make(store, 's', [{ text: 'b' }])
    const e = await expectCode(b.agent.flush(), 'SESSION_EXISTS')
    expect(e.message).toMatch(/resumeAgent/)
    await expectCode(b.agent.dispose(), 'SESSION_EXISTS')
    expect(await readFile(store.path('s'))).toEqual(before)
  })

  it('issue 38 item 4: a failed persistence is not silent — dispose() (which flushes) rejects with the coded error, whatever flush() was called', async () => {
    for (const store of [memoryStore(), jsonlStore(await tmp())]) {
      const a = make(store, 's', [{ text: 'a' }])
      a.agent.followup('hi')
      await a.agent.whenIdle()
      await a.agent.dispose()
      const b = make(store, 's', [{ text: 'b' }])
      b.agent.followup('hello') // accepted before the store answered
      expect(await b.agent.whenSettled()).toBe('idle')
      await b.agent.whenIdle()
      const e = await expectCode(b.agent.dispose(), 'SESSION_EXISTS')
      expect(e.sessionId).toBe('s')
    }
  })

  it('issue 9 item 9: createAgent on a session holding events makes no model call and runs no hook (SESSION_EXISTS first; the prompt stays pending)', async () => {
    for (const store of [memoryStore(), jsonlStore(await tmp())]) {
      const a = make(store, 's', [{ text: 'a' }])
      a.agent.followup('hi')
      await a.agent.whenIdle()
      await a.agent.dispose()
      let modelCalls = 0
      let preSteps = 0
      const b = make(store, 's', (() => {
        modelCalls++
        return { text: 'b' }
      }) as never, { hooks: { 'agent/pre-step': (p, next) => (preSteps++, next()) } })
      const id = b.agent.followup('hello') // accepted before the store answered
      await b.agent.whenIdle()
      expect(modelCalls).toBe(0)
      expect(preSteps).toBe(0)
      await expectCode(b.agent.flush(), 'SESSION_EXISTS')
      expect(b.errors.map((e) => (e.error as TurnlogError).code)).toContain('SESSION_EXISTS')
      expect(b.agent.inbox.nextTurn.map((m) => m.id)).toEqual([id])
      expect(b.agent.events.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: unknown }).reason)).toEqual([
        { kind: 'aborted', cause: { kind: 'hook', reason: 'persistence failed: SESSION_EXISTS' } },
      ])
      expect(verify(b.agent.events).violations).toEqual([])
      await expectCode(b.agent.dispose(), 'SESSION_EXISTS')
    }
  })

  it('an existing empty session (created with its header) is used; without a store flush() resolves at once', async () => {
    const store = memoryStore()
    await store.create('s', { createdAt: 7 })
    const { agent } = make(store, 's', [{ text: 'a' }])
    agent.followup('hi')
    await agent.whenIdle()
    await agent.flush()
    const r = await store.open('s', 'read')
    expect(r.header.createdAt).toBe(7)
    expect(r.length).toBe(agent.events.length)
    const plainAgent = createAgent({ model: scriptedModel([]) })
    await plainAgent.flush()
  })

  it('storeWriter: an open handle whose length equals the prefix is continued; a mismatch is SEQ_CONFLICT', async () => {
    const store = memoryStore()
    const a = make(store, 's', [{ text: 'a' }])
    a.agent.followup('hi')
    await a.agent.whenIdle()
    await a.agent.dispose()
    const prefix = await collect((await store.open('s', 'read')).events())
    const w = await store.open('s', 'write')
    const b = make(store, 's', [{ text: 'b' }], { store: undefined, storeWriter: w, prefix, ids: counterIds('n') })
    b.agent.followup('again')
    await b.agent.whenIdle()
    await b.agent.flush()
    await b.agent.dispose()
    const all = await collect((await store.open('s', 'read')).events())
    expect(all).toEqual(plain(b.agent.events))
    expect(verify(all).violations).toEqual([])
    const w2 = await store.open('s', 'write')
    const c = make(store, 's', [], { store: undefined, storeWriter: w2, prefix: prefix, ids: counterIds('k') })
    await expectCode(c.agent.flush(), 'SEQ_CONFLICT')
    await expectCode(c.agent.dispose(), 'SEQ_CONFLICT')
  })
})
