/**
 * agent/persistence.ts driven directly (no agent around it): a scripted session (its length and
 * its folds) and a scripted write handle whose every answer the test controls. What the agent
 * does not read back but the class promises: the exact messages and fields of the refusals at open
 * (SESSION_EXISTS for a fresh agent, SEQ_CONFLICT for one with a prefix), a plain failure kept as
 * the `cause` of its IO_ERROR, and the `failed` / `durableLength` getters (R7: persistence stops
 * for good at its first failure, reported once as `store`, and halts the agent with that error).
 */
import { describe, expect, it } from 'vitest'
import { TurnlogError, type LogEvent } from '../../events/index.js'
import type { Session } from '../../events/session.js'
import { Persistence, type PersistenceHost } from '../../agent/persistence.js'
import type { AppendOptions, AppendResult, LogWriter } from '../../stores/types.js'

/** A session stand-in: `commit(n)` records n events (seqs from its length on) and runs the folds. */
function fakeSession(prefix: number) {
  const folds: Array<(e: LogEvent) => void> = []
  let length = prefix
  const session = {
    get length() {
      return length
    },
    addFold(f: (e: LogEvent) => void) {
      folds.push(f)
    },
  } as unknown as Session
  const commit = (n: number) => {
    for (let i = 0; i < n; i++) {
      const e = { seq: length, type: 'x' } as unknown as LogEvent
      length++
      for (const f of folds) f(e)
    }
  }
  return { session, commit }
}

function fakeHost(session: Session) {
  const log: string[] = []
  const reported: Array<{ error: unknown; where: string }> = []
  const halted: TurnlogError[] = []
  const host: PersistenceHost = {
    sessionId: 's1',
    session,
    reportError(error, where) {
      reported.push({ error, where })
      log.push(`report ${where} ${(error as TurnlogError).code}`)
    },
    halt(error) {
      halted.push(error)
      log.push(`halt ${error.code}`)
    },
  }
  return { host, log, reported, halted }
}

/** A write handle holding `stored` events; `appendError(n)` makes the n-th append reject with it. */
function fakeWriter(stored: number, appendError?: (n: number) => unknown) {
  const calls = { appends: [] as number[][], closes: 0 }
  let length = stored
  const writer = {
    get length() {
      return length
    },
    async append(events: readonly LogEvent[], opts: AppendOptions): Promise<AppendResult> {
      const n = calls.appends.length
      calls.appends.push(events.map((e) => e.seq))
      const err = appendError?.(n)
      if (err !== undefined) throw err
      length = opts.expectedSeq! + events.length
      return { firstSeq: opts.expectedSeq!, length }
    },
    async close() {
      calls.closes++
    },
  } as unknown as LogWriter
  return { writer, calls }
}

/** Lets every queued microtask and promise callback run (the fakes answer without timers). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve()
}

describe('persistence: refusals at open, their messages and fields (R7)', () => {
  it('R7: a fresh agent on a handle that holds events: SESSION_EXISTS naming the count, resumeAgent, the session; failed() returns it', async () => {
    const { session } = fakeSession(0)
    const { host, log, reported, halted } = fakeHost(session)
    const { writer, calls } = fakeWriter(3)
    const p = new Persistence(host, { writer })
    expect(p.failed).toBeNull()
    expect(p.durableLength).toBe(0)
    await p.opening
    expect(p.opening).toBeNull()
    expect(log).toEqual(['report store SESSION_EXISTS', 'halt SESSION_EXISTS'])
    const e = reported[0]!.error as TurnlogError
    expect(TurnlogError.is(e, 'SESSION_EXISTS')).toBe(true)
    expect(e.message).toContain('the session already holds 3 events: continue it with resumeAgent')
    expect(e).toMatchObject({ sessionId: 's1', info: { storedEvents: 3 } })
    expect(halted[0]).toBe(e)
    expect(p.failed).toBe(e)
    expect(p.durableLength).toBe(0) // the refused handle's events are not the agent's
    expect(calls.closes).toBe(1)
    await expect(p.flush()).rejects.toBe(e)
  })

  it('R7: an agent with a prefix on a handle of another length: SEQ_CONFLICT naming both lengths; failed() returns it', async () => {
    const { session } = fakeSession(2)
    const { host, log, reported } = fakeHost(session)
    const { writer, calls } = fakeWriter(5)
    const p = new Persistence(host, { writer })
    expect(p.durableLength).toBe(2) // the prefix is durable by contract (resumeAgent read it)
    await p.opening
    expect(log).toEqual(['report store SEQ_CONFLICT', 'halt SEQ_CONFLICT'])
    const e = reported[0]!.error as TurnlogError
    expect(e.message).toContain("the store holds 5 events, the agent's prefix 2")
    expect(e).toMatchObject({ code: 'SEQ_CONFLICT', sessionId: 's1', expectedSeq: 2, actualSeq: 5 })
    expect(p.failed).toBe(e)
    expect(calls.closes).toBe(1)
  })
})

describe('persistence: a failed append (R7)', () => {
  it('R7: a plain Error from append becomes IO_ERROR with that error as its cause; durableLength stays at the last durable batch', async () => {
    const disk = new Error('disk full')
    const { session, commit } = fakeSession(0)
    const { host, log, reported } = fakeHost(session)
    const { writer, calls } = fakeWriter(0, (n) => (n === 1 ? disk : undefined))
    const p = new Persistence(host, { writer })
    await p.opening
    commit(2)
    await p.flush()
    expect(p.durableLength).toBe(2)
    expect(p.failed).toBeNull()
    commit(1)
    const f = p.flush()
    await expect(f).rejects.toMatchObject({ code: 'IO_ERROR' })
    expect(calls.appends).toEqual([[0, 1], [2]])
    expect(log).toEqual(['report store IO_ERROR', 'halt IO_ERROR'])
    const e = reported[0]!.error as TurnlogError
    expect(e.message).toContain('persistence failed: disk full')
    expect(e.cause).toBe(disk)
    expect(e.sessionId).toBe('s1')
    expect(p.failed).toBe(e)
    expect(p.durableLength).toBe(2)
    commit(1) // recorded in memory after the failure: never appended
    await settle()
    await p.close()
    expect(calls.appends).toEqual([[0, 1], [2]])
    expect(calls.closes).toBe(1)
  })
})
