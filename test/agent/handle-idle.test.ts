/**
 * The `Agent` handle's waking and quiet rules (docs/spec/lifecycle.md §2, §8): `whenIdle()` resolves only
 * when the agent is idle and no latched or queued waking work remains — not from the `running`
 * listener before the loop started, not during maintenance, not when the `idle` listener opened a
 * new turn; `wake()` opens nothing during maintenance; an armed resume opens a resume turn with an
 * empty inbox and the log's resume chain is bounded by `maxResumeRuns`; input sent from the
 * `running` listener joins the opening turn; a throwing live-event listener is reported (R7).
 */
import { describe, expect, it } from 'vitest'
import type { TurnlogAgent } from '../../agent/agent.js'
import type { LogEvent, LogHeader } from '../../events/index.js'
import { repairEvents } from '../../replay/index.js'
import { makeAgent, valid } from './contain-helpers.js'
import { counterIds, trace } from './helpers.js'

const HEADER: LogHeader = { type: 'session', format: 1, id: 's', createdAt: 1_764_450_000_000 }

/** Lets settled promises run (no timers involved). */
async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

/** The log a crash left in turn 1 (cut right after the turn opened), repaired: turn 1 ends interrupted. */
function interruptedLog(): LogEvent[] {
  const { agent } = makeAgent([{ text: 'a' }], { sessionId: 's' })
  agent.followup('hi')
  const cut = agent.events.slice() // the turn opened synchronously: turn/start 1 and the claim
  return [...repairEvents({ header: HEADER, events: cut }).log.events]
}

describe('whenIdle (docs/spec/lifecycle.md §2)', () => {
  it('L2: whenIdle() asked from the running listener (before the loop started) resolves only after the turn ended', async () => {
    const { agent } = makeAgent([{ text: 'a' }])
    let idle: Promise<number> | undefined
    agent.on('agent/status', (e) => {
      if (e.status === 'running') idle ??= agent.whenIdle().then(() => agent.events.length)
    })
    agent.followup('go')
    const seenAt = await idle!
    expect(trace(agent.events.slice(0, seenAt)).at(-1)).toBe('turn/end 1 completed')
    expect(seenAt).toBe(agent.events.length)
  })

  it('docs/spec/lifecycle.md §2: whenIdle() during runMaintenance waits for the task', async () => {
    const { agent } = makeAgent([])
    const task = deferred<string>()
    const m = agent.runMaintenance(() => task.promise)
    let idle = false
    void agent.whenIdle().then(() => (idle = true))
    await settle()
    expect(idle).toBe(false)
    task.resolve('done')
    expect(await m).toBe('done')
    await settle()
    expect(idle).toBe(true)
  })

  it('docs/spec/lifecycle.md §2: a turn the idle listener opens keeps whenIdle() waiting until that turn ends too', async () => {
    const { agent } = makeAgent([{ text: 'a' }, { text: 'b' }])
    let reopened = false
    agent.on('agent/status', (e) => {
      if (e.status === 'idle' && !reopened) {
        reopened = true
        agent.followup('again')
      }
    })
    agent.followup('go')
    const seenAt = await agent.whenIdle().then(() => trace(agent.events))
    expect(seenAt.filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 1', 'turn/end 1 completed', 'turn/start 2', 'turn/end 2 completed'])
    expect(agent.status).toBe('idle')
  })
})

describe('wake() and resume (docs/spec/lifecycle.md §2, §8)', () => {
  it('docs/spec/lifecycle.md §2: wake() during maintenance opens nothing and returns false; the prompt waits', async () => {
    const { agent } = makeAgent([{ text: 'a' }])
    const task = deferred()
    const m = agent.runMaintenance(() => task.promise)
    agent.inbox.append('next-turn', 'queued') // not a waking delivery
    expect(agent.wake()).toBe(false)
    task.resolve()
    await m
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual(['splice next-turn 0 -0 +[m1]'])
    expect(agent.inbox.nextTurn.map((x) => x.id)).toEqual(['m1'])
  })

  it('L13/lifecycle §8: after armResume, wake() with an empty inbox opens the resume turn', async () => {
    const prefix = interruptedLog()
    expect(trace(prefix).at(-1)).toBe('turn/end 1 interrupted')
    const { agent } = makeAgent([{ text: 'again' }], { sessionId: 's', prefix, ids: counterIds('n') })
    ;(agent as TurnlogAgent).armResume(1)
    expect(agent.wake()).toBe(true)
    await agent.whenIdle()
    // (trace() prints any turn/start cause as 'retry-of'; the data says resume)
    expect(trace(agent.events.slice(prefix.length)).filter((l) => l.startsWith('turn/'))).toEqual([
      'turn/start 2 retry-of 1', 'turn/end 2 completed',
    ])
    expect(agent.events[prefix.length]!.data).toEqual({ turn: 2, cause: { kind: 'resume', of: 1 } })
    valid(agent.events)
  })

  it('L13: maxResumeRuns bounds the chain of resume runs the agent appends (1: a second resume run is refused)', async () => {
    // turn 1 interrupted, turn 2 re-runs it and is interrupted too
    const first = interruptedLog()
    const b = makeAgent([{ text: 'x' }], { sessionId: 's', prefix: first, ids: counterIds('b') })
    ;(b.agent as TurnlogAgent).armResume(1)
    b.agent.wake()
    await b.agent.whenIdle()
    // the crash comes after turn 2 reached its request (its first chunk): only such runs count (§8)
    const all = b.agent.events
    const cut = all.slice(0, all.findIndex((e, i) => i >= first.length && e.type === 'assistant/chunk') + 1)
    const chain = [...repairEvents({ header: HEADER, events: cut }).log.events]
    expect(trace(chain).filter((l) => l.startsWith('turn/'))).toEqual([
      'turn/start 1', 'turn/end 1 interrupted', 'turn/start 2 retry-of 1', 'turn/end 2 interrupted',
    ])
    expect(chain.find((e) => e.type === 'turn/start' && (e.data as { turn: number }).turn === 2)!.data).toEqual({ turn: 2, cause: { kind: 'resume', of: 1 } })
    // maxResumeRuns 2: a second run is allowed
    const ok = makeAgent([{ text: 'y' }], { sessionId: 's', prefix: chain, ids: counterIds('c'), maxResumeRuns: 2 })
    ;(ok.agent as TurnlogAgent).armResume(2)
    ok.agent.wake()
    await ok.agent.whenIdle()
    expect(ok.agent.events[chain.length]!.data).toEqual({ turn: 3, cause: { kind: 'resume', of: 2 } })
    // maxResumeRuns 1: the session refuses the turn/start; the driver reports it and stays usable
    const no = makeAgent([{ text: 'y' }], { sessionId: 's', prefix: chain, ids: counterIds('c'), maxResumeRuns: 1, expectErrors: ['driver'] })
    ;(no.agent as TurnlogAgent).armResume(2)
    no.agent.wake()
    await no.agent.whenIdle()
    expect(no.errors.map((e) => [e.where, (e.error as { code?: string }).code, (e.error as { invariant?: string }).invariant])).toEqual([
      ['driver', 'INVARIANT', 'L13'],
    ])
    expect(no.agent.events).toHaveLength(chain.length)
    expect(no.agent.status).toBe('idle')
  })
})

describe('input from the running listener (docs/spec/lifecycle.md §2)', () => {
  it('a steer and a followup sent from the running listener (before the turn opened) are queued for that turn, not refused', async () => {
    const { agent } = makeAgent([{ text: 'a' }, { text: 'b' }])
    let sent = false
    agent.on('agent/status', (e) => {
      if (e.status === 'running' && !sent) {
        sent = true
        agent.steer('steered')
        agent.followup('next')
      }
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]',
      'splice next-step 0 -0 +[m2]',
      'splice next-turn 1 -0 +[m3]',
      'turn/start 1',
      'splice next-step 0 -1 +[]',
      'splice next-turn 0 -1 +[]',
      'step/start 1.1',
      'user/message m2',
      'user/message m1',
      'request/header initial',
      'assistant/message stop',
      'step/end 1.1 stop',
      'turn/end 1 completed',
      'turn/start 2',
      'splice next-turn 0 -1 +[]',
      'step/start 2.1',
      'user/message m3',
      'assistant/message stop',
      'step/end 2.1 stop',
      'turn/end 2 completed',
    ])
    valid(agent.events)
  })
})

describe('live-event listeners (R7)', () => {
  it('R7: a throwing agent/status listener is reported as agent/error where "agent/status"; the turn goes on', async () => {
    const { agent, errors } = makeAgent([{ text: 'a' }], { expectErrors: ['agent/status'] })
    const boom = new Error('status listener broke')
    agent.on('agent/status', () => {
      throw boom
    })
    agent.followup('go')
    await agent.whenIdle()
    expect(errors).toEqual([{ error: boom, where: 'agent/status' }, { error: boom, where: 'agent/status' }])
    expect(trace(agent.events).at(-1)).toBe('turn/end 1 completed')
  })

  it('R7: a throwing agent/error listener is not reported again (no agent/error about agent/error)', () => {
    const { agent } = makeAgent([], { expectErrors: ['test'] })
    const seen: string[] = []
    agent.on('agent/error', (e) => {
      seen.push(e.where)
      throw new Error('error listener broke')
    })
    ;(agent as TurnlogAgent).emit('agent/error', { error: new Error('x'), where: 'test' })
    expect(seen).toEqual(['test'])
  })
})
