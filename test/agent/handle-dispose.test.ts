/**
 * The `Agent` handle's cancel, dispose, runMaintenance and refusals (agent/agent.ts; docs/spec/api.md "The
 * Agent handle"; docs/spec/lifecycle.md §2, §6): cancel without keepInbox drops the latch (a later non-waking
 * prompt stays parked); dispose() is idempotent, refuses input from its first call on
 * (AGENT_DISPOSED), and aborts a maintenance task's signal with `{kind: 'disposed'}`;
 * runMaintenance runs only from idle (AGENT_BUSY, also during another maintenance) and reports a
 * task that throws synchronously as its rejection; after a persistence failure the agent refuses
 * input with PERSISTENCE_FAILED naming the first failure, and a closing turn starts no latched work.
 */
import { describe, expect, it } from 'vitest'
import type { TurnlogAgent } from '../../agent/agent.js'
import { TurnlogError, type LogEvent } from '../../events/index.js'
import type { AppendResult, LogStore, LogWriter } from '../../stores/types.js'
import { makeAgent, valid } from './contain-helpers.js'
import { trace } from './helpers.js'

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
}

/** A store whose appends wait for `fail` and then reject with `error` (persistence halts the agent). */
function failingStore(error: unknown) {
  const fail = deferred()
  let length = 0
  const writer = (id: string): LogWriter => ({
    sessionId: id,
    mode: 'write',
    header: { type: 'session', format: 1, id, createdAt: 0 } as never,
    token: 1,
    failed: null,
    get length() {
      return length
    },
    get durableLength() {
      return length
    },
    events: async function* () {},
    async append(events: readonly LogEvent[]): Promise<AppendResult> {
      await fail.promise
      void events
      throw error
    },
    async close() {},
  })
  const store = {
    kind: 'fake',
    async create(id: string) {
      return { type: 'session', id } as never
    },
    async open(id: string) {
      return writer(id) as never
    },
    async list() {
      return []
    },
    async has() {
      return true
    },
  } as LogStore
  return { store, fail: () => fail.resolve() }
}

/** An agent whose turn 1 waits in `agent/pre-step` until `release()`. */
function gatedAgent(opts: Parameters<typeof makeAgent>[1] = {}) {
  const made = makeAgent([{ text: 'a' }, { text: 'b' }], opts)
  const gate = deferred()
  let gated = true
  made.agent.on('agent/pre-step', async (_p, next) => {
    if (gated) {
      gated = false
      await gate.promise
    }
    return next()
  })
  return { ...made, release: () => gate.resolve() }
}

describe('cancel (docs/spec/lifecycle.md §6)', () => {
  it('R5: cancel without keepInbox drops a latched wake: a prompt appended afterwards (non-waking) stays parked', async () => {
    const { agent, release } = gatedAgent()
    agent.followup('one')
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    agent.followup('two') // waking input during the abort: re-targeted to next-turn and latched
    agent.cancel() // drops the latch and clears 'two'
    agent.inbox.append('next-turn', 'three') // parked: not a waking delivery
    release()
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]',
      'turn/start 1',
      'splice next-turn 0 -1 +[]',
      'splice next-turn 0 -0 +[m2]',
      'splice next-turn 0 -1 +[] canceled',
      'splice next-turn 0 -0 +[m3]',
      'turn/end 1 aborted user',
    ])
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m3'])
    expect(agent.status).toBe('idle')
    valid(agent.events)
  })
})

describe('dispose (docs/spec/lifecycle.md §6)', () => {
  it('R5/R7: dispose() twice disposes once: plugins uninstall once; input is then refused with AGENT_DISPOSED naming the session', async () => {
    let uninstalled = 0
    const plugin = { name: 'p', install: () => () => void uninstalled++ }
    const { agent } = makeAgent([], { sessionId: 's', plugins: [plugin as never] })
    await agent.dispose()
    await agent.dispose()
    expect(uninstalled).toBe(1)
    let thrown: unknown
    try {
      agent.followup('late')
    } catch (err) {
      thrown = err
    }
    expect(thrown).toMatchObject({ code: 'AGENT_DISPOSED', message: 'AGENT_DISPOSED: the agent is disposed', sessionId: 's' })
    expect(agent.events).toEqual([])
  })

  it('R5: from its first call on (the turn still closing) dispose() refuses new input and inbox edits', async () => {
    const { agent, release } = gatedAgent({ sessionId: 's' })
    agent.followup('one')
    const done = agent.dispose()
    expect(() => agent.followup('late')).toThrowError(expect.objectContaining({ code: 'AGENT_DISPOSED', sessionId: 's' }))
    expect(() => agent.inbox.append('next-turn', 'late')).toThrowError(expect.objectContaining({ code: 'AGENT_DISPOSED' }))
    release()
    await done
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 aborted disposed')
  })

  it('docs/spec/lifecycle.md §6: dispose() from a log observer as turn 1 ends starts no queued turn (its inbox clearing is refused there); a later dispose() completes', async () => {
    let uninstalled = 0
    const plugin = { name: 'p', install: () => () => void uninstalled++ }
    const { agent } = makeAgent([{ text: 'a' }, { text: 'b' }], { plugins: [plugin as never] })
    let first: Promise<unknown> | undefined
    agent.subscribe((e) => {
      // an observer's append is refused (REENTRANT_APPEND, docs/decisions/agent-and-machines.md): the cancel's
      // clearing fails, so 'two' is still queued when the turn closes
      if (e.type === 'turn/end') first ??= agent.dispose().then(() => 'resolved', (err: TurnlogError) => err.code)
    })
    agent.followup('one')
    agent.followup('two')
    await agent.whenIdle()
    expect(await first).toBe('REENTRANT_APPEND')
    expect(trace(agent.events).filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 1', 'turn/end 1 completed'])
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m2'])
    expect(() => agent.followup('late')).toThrowError(expect.objectContaining({ code: 'AGENT_DISPOSED' }))
    await agent.dispose()
    expect(uninstalled).toBe(1)
    expect(agent.status).toBe('idle')
  })

  it('L2/R5: dispose() waits for the turn the idle listener opened right after a turn cancelled before it opened', async () => {
    // Turn 1 is cancelled from the running listener, so it closes synchronously inside the
    // followup; its idle listener opens turn 2, which waits in agent/pre-step. dispose() must wait
    // for turn 2's loop (it once awaited turn 1's finished loop, closed the session under turn 2
    // and left turn/start 2 without its turn/end).
    const { agent, release } = gatedAgent()
    let statuses = 0
    agent.on('agent/status', () => {
      statuses++
      if (statuses === 1) agent.cancel({ kind: 'user' }) // running (turn 1)
      if (statuses === 2) agent.followup('two') // idle (turn 1 closed): opens turn 2
    })
    agent.followup('one')
    let disposed = false
    const done = agent.dispose().then(() => (disposed = true))
    await settle()
    expect(disposed).toBe(false)
    release()
    await done
    expect(trace(agent.events).filter((l) => l.startsWith('turn/'))).toEqual([
      'turn/start 1', 'turn/end 1 aborted user', 'turn/start 2', 'turn/end 2 aborted disposed',
    ])
    valid(agent.events)
  })

  it('R8: dispose() aborts a maintenance task\'s signal with the cause {kind: disposed}', async () => {
    const { agent } = makeAgent([])
    let signal!: AbortSignal
    const m = agent.runMaintenance((s) => {
      signal = s
      return new Promise<string>((resolve) => s.addEventListener('abort', () => resolve('stopped')))
    })
    await agent.dispose()
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toEqual({ kind: 'disposed' })
    expect(await m).toBe('stopped')
  })
})

describe('runMaintenance (docs/spec/lifecycle.md §2)', () => {
  it('runMaintenance during another maintenance is AGENT_BUSY naming the session; the first task is unaffected', async () => {
    const { agent } = makeAgent([], { sessionId: 's' })
    const task = deferred<number>()
    const first = agent.runMaintenance(() => task.promise)
    let ran = false
    await expect(agent.runMaintenance(() => (ran = true))).rejects.toMatchObject({
      code: 'AGENT_BUSY', message: 'AGENT_BUSY: runMaintenance runs only from idle', sessionId: 's',
    })
    expect(ran).toBe(false)
    task.resolve(1)
    expect(await first).toBe(1)
  })

  it('runMaintenance while a turn runs is AGENT_BUSY and never calls the task', async () => {
    const { agent, release } = gatedAgent()
    agent.followup('one')
    let ran = false
    await expect(agent.runMaintenance(() => (ran = true))).rejects.toMatchObject({ code: 'AGENT_BUSY' })
    expect(ran).toBe(false)
    release()
    await agent.whenIdle()
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 completed')
  })

  it('a task that throws synchronously rejects runMaintenance with that error; the agent is idle and usable after', async () => {
    const { agent } = makeAgent([{ text: 'a' }])
    const boom = new Error('task broke')
    await expect(agent.runMaintenance(() => {
      throw boom
    })).rejects.toBe(boom)
    expect(agent.status).toBe('idle')
    expect(await agent.runMaintenance(() => 2)).toBe(2)
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 completed')
  })
})

describe('after a persistence failure (halt)', () => {
  it('input is refused with PERSISTENCE_FAILED naming the failure\'s code, caused by it; a latched wake is not replayed', async () => {
    const { store, fail } = failingStore(new Error('disk full'))
    const { agent, errors, release } = gatedAgent({ store, sessionId: 's', expectErrors: ['store'] })
    agent.followup('one')
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    agent.followup('two') // latched during the abort
    fail()
    await settle()
    expect(errors.map((e) => [e.where, (e.error as TurnlogError).code])).toEqual([['store', 'IO_ERROR']])
    const halted = errors[0]!.error
    let thrown: unknown
    try {
      agent.followup('three')
    } catch (err) {
      thrown = err
    }
    expect(thrown).toMatchObject({
      code: 'PERSISTENCE_FAILED',
      message: 'PERSISTENCE_FAILED: the agent stopped: persistence failed (IO_ERROR)',
      sessionId: 's',
      info: { code: 'IO_ERROR' },
    })
    expect((thrown as Error).cause).toBe(halted)
    release()
    await agent.whenIdle()
    // the aborted turn closes; the wake latched during the abort starts nothing (the agent is halted)
    expect(trace(agent.events).filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 1', 'turn/end 1 aborted user'])
    // (turn 1 never claimed 'one': the driver waits for the store's open before claiming)
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m1', 'm2'])
    await expect(agent.flush()).rejects.toBe(halted)
  })

  it('the first failure stands: a second halt changes neither the refusal nor the cause', () => {
    const { agent } = makeAgent([], { sessionId: 's' })
    const first = new TurnlogError('SESSION_OWNED', 'owned')
    ;(agent as TurnlogAgent).halt(first)
    ;(agent as TurnlogAgent).halt(new TurnlogError('IO_ERROR', 'later'))
    let thrown: unknown
    try {
      agent.inject('x')
    } catch (err) {
      thrown = err
    }
    expect(thrown).toMatchObject({ code: 'PERSISTENCE_FAILED', info: { code: 'SESSION_OWNED' } })
    expect((thrown as Error).cause).toBe(first)
  })
})
