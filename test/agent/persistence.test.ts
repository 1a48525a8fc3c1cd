/**
 * The agent's persistence (agent/persistence.ts) against a scripted store whose every answer the
 * test controls: batching (one append per microtask, `expectedSeq` = the batch's first seq),
 * `flush()`, the store's refusals at open (SESSION_EXISTS, SEQ_CONFLICT), a failed append (coded
 * `IO_ERROR`, reported once, the agent halts keeping its inbox), `storeWriter`, and `dispose()`
 * draining and closing the handle. Every log is still a valid log (L1–L13).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { TurnlogError, type LogEvent } from '../../events/index.js'
import { defineTool } from '../../tools/define.js'
import type { AppendOptions, AppendResult, LogStore, LogWriter } from '../../stores/types.js'
import { makeAgent, valid } from './contain-helpers.js'
import { counterIds, trace } from './helpers.js'

interface Gate {
  promise: Promise<void>
  open: () => void
}

function gate(): Gate {
  let open!: () => void
  const promise = new Promise<void>((r) => (open = r))
  return { promise, open }
}

interface AppendCall {
  seqs: number[]
  opts: AppendOptions
}

interface FakeOptions {
  /** Events the store already holds for the session. */
  stored?: number
  /** `create` rejects with this. */
  createError?: unknown
  /** `open` waits for this gate before answering. */
  openGate?: Gate
  /** The n-th append (0-based) rejects with what this returns (undefined: succeeds). */
  appendError?: (n: number) => unknown
  /** Each append waits for a gate the test opens (`pending`). */
  holdAppends?: boolean
}

function fakeStore(o: FakeOptions = {}) {
  const log = {
    creates: [] as string[],
    opens: [] as Array<[string, string]>,
    appends: [] as AppendCall[],
    closes: 0,
    pending: [] as Gate[],
  }
  let length = o.stored ?? 0
  const writer = (id: string): LogWriter => ({
    sessionId: id,
    mode: 'write',
    header: { type: 'session', format: 'turnlog/1', id, createdAt: 0, checksums: 'crc32' } as never,
    token: 1,
    failed: null,
    get length() {
      return length
    },
    get durableLength() {
      return length
    },
    events: async function* () {},
    async append(events: readonly LogEvent[], opts: AppendOptions): Promise<AppendResult> {
      const n = log.appends.length
      log.appends.push({ seqs: events.map((e) => e.seq), opts })
      if (o.holdAppends) {
        const g = gate()
        log.pending.push(g)
        await g.promise
      }
      const err = o.appendError?.(n)
      if (err !== undefined) throw err
      const firstSeq = events[0]!.seq
      length = Math.max(length, firstSeq + events.length)
      return { firstSeq, length: firstSeq + events.length } // the length after this batch
    },
    async close() {
      log.closes++
    },
  })
  const store: LogStore = {
    kind: 'fake',
    async create(id: string) {
      log.creates.push(id)
      if (o.createError !== undefined) throw o.createError
      return { type: 'session', id } as never
    },
    async open(id: string, mode: string) {
      log.opens.push([id, mode])
      if (o.openGate) await o.openGate.promise
      return writer(id) as never
    },
    async list() {
      return []
    },
    async has() {
      return true
    },
  } as LogStore
  return { store, log, writer }
}

/** Lets every queued microtask and settled promise run (no timers involved). */
async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
}

describe('persistence: batching and flush', () => {
  it('L1: the events committed in one tick are appended as one batch whose expectedSeq is its first seq, trusted', async () => {
    const { store, log } = fakeStore()
    const { agent } = makeAgent([{ text: 'a' }], { store, sessionId: 's1' })
    agent.inject('x')
    agent.inject('y')
    expect(log.appends).toEqual([]) // not yet: one append per microtask
    await agent.flush()
    expect(log.creates).toEqual(['s1'])
    expect(log.opens).toEqual([['s1', 'write']])
    expect(log.appends).toEqual([{ seqs: [0, 1], opts: { expectedSeq: 0, trusted: true } }])
    agent.inject('z')
    await agent.flush()
    expect(log.appends.map((a) => a.seqs)).toEqual([[0, 1], [2]])
    expect(log.appends[1]!.opts.expectedSeq).toBe(2)
    agent.followup('go')
    await agent.whenIdle()
    await agent.flush()
    const all = log.appends.flatMap((a) => a.seqs)
    expect(all).toEqual(agent.events.map((e) => e.seq)) // every event once, in order
    for (const a of log.appends) expect(a.opts.expectedSeq).toBe(a.seqs[0])
    await agent.dispose()
    expect(log.closes).toBe(1)
    valid(agent.events)
  })

  it('flush() resolves only once everything committed so far is durable; at once when it already is', async () => {
    const { store, log } = fakeStore({ holdAppends: true })
    const { agent } = makeAgent([], { store, sessionId: 's' })
    let flushed = false
    await settle() // the store opened (no events yet)
    const empty = agent.flush().then(() => (flushed = true))
    await settle()
    expect(flushed).toBe(true) // nothing committed: durable already
    await empty
    agent.inject('a')
    flushed = false
    const f = agent.flush().then(() => (flushed = true))
    await settle()
    expect(log.appends).toHaveLength(1)
    expect(flushed).toBe(false) // the append has not resolved
    agent.inject('b') // committed after the flush was asked: not awaited by it
    const f2 = agent.flush()
    let flushed2 = false
    void f2.then(() => (flushed2 = true))
    log.pending[0]!.open()
    await f
    expect(flushed).toBe(true)
    await settle()
    expect(flushed2).toBe(false) // 'b' is in the second append, still held
    expect(log.appends.map((a) => a.seqs)).toEqual([[0], [1]])
    log.pending[1]!.open()
    await f2
    expect(flushed2).toBe(true)
  })

  it('flush() before the store answered the open waits for the open and the first append', async () => {
    const openGate = gate()
    const { store, log } = fakeStore({ openGate })
    const { agent } = makeAgent([], { store, sessionId: 's' })
    agent.inject('a')
    let flushed = false
    const f = agent.flush().then(() => (flushed = true))
    await settle()
    expect(log.appends).toEqual([]) // no writer yet: the batch waits
    expect(flushed).toBe(false)
    openGate.open()
    await f
    expect(log.appends).toEqual([{ seqs: [0], opts: { expectedSeq: 0, trusted: true } }])
  })

  it('appends answered out of order never move durability backwards', async () => {
    const { store, log } = fakeStore({ holdAppends: true })
    const { agent } = makeAgent([], { store, sessionId: 's' })
    await settle()
    agent.inject('a')
    agent.inject('b')
    await settle()
    agent.inject('c')
    await settle()
    expect(log.appends.map((a) => a.seqs)).toEqual([[0, 1], [2]])
    log.pending[1]!.open() // the later batch is answered first: length 3
    await settle()
    log.pending[0]!.open() // then the earlier one: length 2, stale
    await settle()
    let flushed = false
    void agent.flush().then(() => (flushed = true))
    await settle()
    expect(flushed).toBe(true) // all 3 stay durable
  })

  it('one append per microtask: events committed by later microtasks form the next batch together', async () => {
    const { store, log } = fakeStore()
    const { agent } = makeAgent([], { store, sessionId: 's' })
    await agent.flush()
    agent.inject('a')
    queueMicrotask(() => agent.inject('c'))
    agent.inject('b')
    queueMicrotask(() => agent.inject('d'))
    await agent.flush()
    await settle()
    expect(log.appends.map((a) => a.seqs)).toEqual([[0, 1], [2, 3]])
  })
})

describe('persistence: a tool body starts only once its tool/call is durable (R10, §8)', () => {
  it('R10: no body starts while the append holding its tool/call is unanswered (approval or not), so a kill there leaves no run and repair\'s TOOL_NOT_STARTED is true', async () => {
    const { store, log } = fakeStore({ holdAppends: true })
    // the last seq of every append the test has answered (acknowledged as durable)
    const answered: number[] = []
    const started: Array<{ callSeq: number; durableThrough: number }> = []
    let events: () => readonly LogEvent[] = () => []
    const echo = defineTool({
      name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }), isConcurrencySafe: () => true,
      execute: ({ n }, ctx) => {
        const call = events().find((e) => e.type === 'tool/call' && (e.data as { callId: string }).callId === ctx.callId)!
        started.push({ callSeq: call.seq, durableThrough: answered.length === 0 ? -1 : Math.max(...answered) })
        return `echo ${n}`
      },
    })
    const { agent } = makeAgent([{ toolCalls: [{ name: 'echo', args: { n: 1 } }, { name: 'echo', args: { n: 2 } }] }, { text: 'done' }], { store, sessionId: 's', tools: [echo] })
    events = () => agent.events
    agent.followup('go')
    // answer the appends one at a time, in order, each after the agent had every chance to start a body
    let next = 0
    for (let i = 0; i < 200 && (agent.status !== 'idle' || next < log.pending.length); i++) {
      await settle(50)
      if (next >= log.pending.length) continue
      const seqs = log.appends[next]!.seqs
      // while this append is unanswered, no body whose tool/call it holds has started
      expect(started.filter((r) => seqs.includes(r.callSeq))).toEqual([])
      answered.push(seqs.at(-1)!)
      log.pending[next++]!.open()
    }
    await agent.whenIdle()
    await agent.flush()
    expect(started).toHaveLength(2)
    for (const r of started) expect(r.durableThrough).toBeGreaterThanOrEqual(r.callSeq) // its tool/call acknowledged first
    valid(agent.events)
    await agent.dispose()
  })
})

describe('persistence: the store refuses the session', () => {
  it('a session the store already holds (create says SESSION_EXISTS) is opened; events already there refuse it with SESSION_EXISTS', async () => {
    const { store, log } = fakeStore({ stored: 3, createError: new TurnlogError('SESSION_EXISTS', 'exists') })
    const { agent, errors } = makeAgent([{ text: 'a' }], { store, sessionId: 's', expectErrors: ['store'] })
    let preStep = 0
    agent.on('agent/pre-step', (_p, next) => (preStep++, next()))
    agent.followup('go')
    await agent.whenIdle()
    expect(log.opens).toEqual([['s', 'write']]) // create's SESSION_EXISTS is not a failure
    expect(log.closes).toBe(1) // the refused handle is closed
    expect(preStep).toBe(0) // no hook runs on a session the agent cannot own
    expect(errors).toHaveLength(1)
    expect(errors[0]!.error).toMatchObject({ code: 'SESSION_EXISTS', info: { storedEvents: 3 } })
    expect(trace(agent.events).filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 1', 'turn/end 1 aborted hook'])
    const end = agent.events.at(-1)!.data as { reason: { cause: unknown } }
    expect(end.reason.cause).toEqual({ kind: 'hook', reason: 'persistence failed: SESSION_EXISTS' })
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m1']) // never claimed: the driver waited for the store
    await expect(agent.flush()).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    expect(() => agent.followup('more')).toThrowError(expect.objectContaining({ code: 'PERSISTENCE_FAILED', info: { code: 'SESSION_EXISTS' } }))
    expect(log.appends).toEqual([])
    valid(agent.events)
  })

  it('any other create failure stops persistence with that error (no open)', async () => {
    const { store, log } = fakeStore({ createError: new TurnlogError('INVALID_SESSION_ID', 'bad id') })
    const { agent, errors } = makeAgent([], { store, sessionId: 's', expectErrors: ['store'] })
    await settle()
    expect(log.opens).toEqual([])
    expect(errors.map((e) => (e.error as TurnlogError).code)).toEqual(['INVALID_SESSION_ID'])
    await expect(agent.flush()).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' })
    expect(() => agent.inject('x')).toThrowError(expect.objectContaining({ code: 'PERSISTENCE_FAILED' }))
    // dispose() rejects as flush() does (issue 38 item 4); there was no handle to close
    await expect(agent.dispose()).rejects.toMatchObject({ code: 'INVALID_SESSION_ID' })
    expect(log.closes).toBe(0)
  })

  it('an agent with a prefix does not create the session; a store of another length is SEQ_CONFLICT', async () => {
    const first = makeAgent([{ text: 'a' }])
    first.agent.followup('go')
    await first.agent.whenIdle()
    const prefix = first.agent.events
    const { store, log } = fakeStore({ stored: prefix.length + 1 })
    const { agent, errors } = makeAgent([], { store, sessionId: 's', prefix, expectErrors: ['store'] })
    await settle()
    expect(log.creates).toEqual([])
    expect(log.closes).toBe(1)
    expect(errors[0]!.error).toMatchObject({ code: 'SEQ_CONFLICT', expectedSeq: prefix.length, actualSeq: prefix.length + 1 })
    expect(agent.events).toHaveLength(prefix.length)
  })

  it('an agent with a prefix and a store of the same length appends from the prefix on', async () => {
    const first = makeAgent([{ text: 'a' }])
    first.agent.followup('go')
    await first.agent.whenIdle()
    const prefix = first.agent.events
    const { store, log } = fakeStore({ stored: prefix.length })
    const { agent } = makeAgent([], { store, sessionId: 's', prefix, ids: counterIds('n') })
    await agent.flush() // durable already: the prefix is in the store
    expect(log.appends).toEqual([])
    agent.inject('x')
    await agent.flush()
    expect(log.creates).toEqual([])
    expect(log.appends).toEqual([{ seqs: [prefix.length], opts: { expectedSeq: prefix.length, trusted: true } }])
  })

  it('storeWriter: the given handle is used as is (no create, no open) and closed by dispose', async () => {
    const { store, log, writer } = fakeStore()
    void store
    const { agent } = makeAgent([], { storeWriter: writer('w'), sessionId: 'w' })
    agent.inject('x')
    await agent.flush()
    expect(log.creates).toEqual([])
    expect(log.opens).toEqual([])
    expect(log.appends.map((a) => a.seqs)).toEqual([[0]])
    await agent.dispose()
    expect(log.closes).toBe(1)
  })
})

describe('persistence: a failed append halts the agent', () => {
  it('R7: a plain Error from append is IO_ERROR (message kept), reported once as store; the open turn is cancelled keeping the inbox; new input is refused', async () => {
    let release!: () => void
    const hold = new Promise<void>((r) => (release = r))
    const { store, log } = fakeStore({ appendError: (n) => (n === 1 ? new Error('disk full') : undefined) })
    const { agent, errors } = makeAgent([{ text: 'a' }, { text: 'b' }], { store, sessionId: 's', expectErrors: ['store'] })
    agent.on('agent/pre-step', async (_p, next) => {
      await hold
      return next()
    })
    agent.inject('first batch') // appended alone (append 0)
    await agent.flush()
    agent.followup('go')
    agent.followup('queued')
    await settle() // append 1 fails while pre-step is held
    expect(log.appends).toHaveLength(2)
    expect(errors).toHaveLength(1)
    const e = errors[0]!.error as TurnlogError
    expect(e.code).toBe('IO_ERROR')
    expect(e.message).toContain('persistence failed: disk full')
    expect(e.sessionId).toBe('s')
    release()
    await agent.whenIdle()
    expect(trace(agent.events).filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 1', 'turn/end 1 aborted hook'])
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m3']) // kept: the durable log holds it as pending
    expect(agent.status).toBe('idle')
    expect(log.appends).toHaveLength(2) // nothing more is sent after the failure
    await expect(agent.flush()).rejects.toBe(e)
    expect(() => agent.followup('more')).toThrowError(expect.objectContaining({ code: 'PERSISTENCE_FAILED', info: { code: 'IO_ERROR' } }))
    expect(() => agent.inbox.append('next-turn', 'more')).toThrowError(expect.objectContaining({ code: 'PERSISTENCE_FAILED' }))
    expect(agent.wake.bind(agent)).toThrowError(expect.objectContaining({ code: 'PERSISTENCE_FAILED' }))
    await expect(agent.runMaintenance(() => 1)).rejects.toMatchObject({ code: 'PERSISTENCE_FAILED' })
    expect(errors).toHaveLength(1) // reported once
    valid(agent.events)
  })

  it('a coded error from append is kept as is; a flush waiting on it rejects with it; close() never throws', async () => {
    const coded = new TurnlogError('FSYNC_FAILED', 'fsync')
    const { store, log } = fakeStore({ holdAppends: true, appendError: () => coded })
    const { agent, errors } = makeAgent([], { store, sessionId: 's', expectErrors: ['store'] })
    agent.inject('a')
    const f = agent.flush()
    let outcome: unknown = 'pending'
    f.then(() => (outcome = 'resolved'), (err: unknown) => (outcome = err))
    await settle()
    expect(log.appends).toHaveLength(1)
    expect(errors).toHaveLength(0)
    log.pending[0]!.open()
    await settle()
    expect(outcome).toBe(coded)
    expect(errors.map((e) => [e.where, e.error])).toEqual([['store', coded]])
    // dispose() rejects with the same error (issue 38 item 4), after closing the handle
    await expect(agent.dispose()).rejects.toBe(coded)
    expect(log.closes).toBe(1)
  })

  it('two failed appends in flight: reported once, the first error kept', async () => {
    const errs = [new TurnlogError('IO_ERROR', 'first'), new TurnlogError('IO_ERROR', 'second')]
    const { store, log } = fakeStore({ holdAppends: true, appendError: (n) => errs[n] })
    const { agent, errors } = makeAgent([], { store, sessionId: 's', expectErrors: ['store'] })
    await settle()
    agent.inject('a')
    await settle()
    agent.inject('b')
    await settle()
    expect(log.appends).toHaveLength(2)
    log.pending[0]!.open()
    log.pending[1]!.open()
    await settle()
    expect(errors.map((e) => e.error)).toEqual([errs[0]])
    await expect(agent.flush()).rejects.toBe(errs[0])
  })

  it('an append rejecting with null is IO_ERROR "persistence failed: null"', async () => {
    const { store } = fakeStore({ appendError: () => null })
    const { agent, errors } = makeAgent([], { store, sessionId: 's', expectErrors: ['store'] })
    agent.inject('a')
    await expect(agent.flush()).rejects.toMatchObject({ code: 'IO_ERROR', message: expect.stringContaining('persistence failed: null') })
    expect(errors).toHaveLength(1)
  })
})

describe('persistence: dispose closes the handle once, after the last append', () => {
  it('dispose() waits for the append in flight before closing the handle', async () => {
    const { store, log } = fakeStore({ holdAppends: true })
    const { agent } = makeAgent([], { store, sessionId: 's' })
    agent.inject('a')
    await settle()
    expect(log.appends).toHaveLength(1)
    let disposed = false
    const d = agent.dispose().then(() => (disposed = true))
    await settle()
    expect(log.closes).toBe(0) // the append has not answered
    expect(disposed).toBe(false)
    log.pending[0]!.open()
    await d
    expect(log.closes).toBe(1)
  })

  it('dispose() before the store answered the open waits for it, appends what was committed, then closes', async () => {
    const openGate = gate()
    const { store, log } = fakeStore({ openGate })
    const { agent } = makeAgent([], { store, sessionId: 's' })
    agent.inject('a')
    const d = agent.dispose()
    await settle()
    expect(log.closes).toBe(0)
    openGate.open()
    await d
    expect(log.appends.map((a) => a.seqs)).toEqual([[0]])
    expect(log.closes).toBe(1)
  })

  it('two dispose() calls at once close the handle once', async () => {
    const { store, log } = fakeStore()
    const { agent } = makeAgent([], { store, sessionId: 's' })
    agent.inject('a')
    await Promise.all([agent.dispose(), agent.dispose()])
    await agent.dispose()
    expect(log.closes).toBe(1)
  })
})
