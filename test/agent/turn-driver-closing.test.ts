/**
 * How the turn loop stops and closes turns (docs/spec/lifecycle.md §3.5, §3.7–3.8, §6): a throwing
 * `agent/turn-stopping` ends the turn `error HOOK_ERROR` (never the agent); closing a turn
 * releases a wake latched during its abort, so a later aborted turn parks its queue; a cancel from
 * the `agent/status` listener aborts the opening turn's signal too (its grace period arms, and the
 * close disarms it).
 */
import { describe, expect, it } from 'vitest'
import { createAgent, type AgentOptions, type Timers } from '../../agent/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { endKinds, valid } from './contain-helpers.js'
import { guardAgentErrors } from './error-guard.js'
import { counterIds, fakeClock, instantTimers, trace } from './helpers.js'

/** Timers whose timeouts never fire: each call is recorded. */
function recordingTimers(): Timers & { calls: Array<[string, unknown]> } {
  const calls: Array<[string, unknown]> = []
  let n = 0
  return {
    ...instantTimers(),
    calls,
    setTimeout: (_fn, ms) => {
      calls.push(['set', ms])
      return ++n
    },
    clearTimeout: (h) => {
      calls.push(['clear', h])
    },
  }
}

function base(script: readonly ScriptedEntry[], timers: Timers = recordingTimers()): AgentOptions {
  return {
    model: scriptedModel(script, { info: { name: 'scripted' } }),
    system: 'sys',
    clock: fakeClock(),
    ids: counterIds('m'),
    timers,
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

describe('stopping and closing', () => {
  it('L2 §3.7: a throwing agent/turn-stopping ends the turn error HOOK_ERROR naming the hook, reports agent/error there, and the next turn runs', async () => {
    let fail = true
    const agent = createAgent({
      ...base([{ text: 'one' }, { text: 'two' }]),
      hooks: {
        'agent/turn-stopping': () => {
          // throws once: a loop that asked again would see it succeed (and fail the test, not hang)
          if (fail) {
            fail = false
            throw new Error('boom')
          }
        },
      },
    })
    const errors = guardAgentErrors(agent, ['agent/turn-stopping'])
    agent.followup('hi')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]',
      'turn/start 1',
      'splice next-turn 0 -1 +[]',
      'step/start 1.1',
      'user/message m1',
      'request/header initial',
      'assistant/message stop',
      'step/end 1.1 stop',
      'turn/end 1 error HOOK_ERROR',
    ])
    expect(agent.events.at(-1)!.data).toEqual({
      turn: 1, reason: { kind: 'error', failure: { code: 'HOOK_ERROR', message: 'agent/turn-stopping: boom' } },
    })
    expect(errors.map((e) => [e.where, (e.error as Error).message])).toEqual([['agent/turn-stopping', 'boom']])
    agent.followup('again')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['error', 'completed'])
    valid(agent.events)
  })

  it('R5 §3.8: closing the turn releases the wake latched during its abort; a later aborted turn then parks its queue (no stale latch opens it)', async () => {
    let gate: ReturnType<typeof deferred> | null = deferred()
    const agent = createAgent({
      ...base([{ text: 'b' }]),
      hooks: {
        'agent/pre-step': async (_p, next) => {
          if (gate) await gate.promise
          return next()
        },
      },
    })
    guardAgentErrors(agent)
    agent.followup('a')
    agent.cancel()
    // a waking send while the turn is aborting is latched
    agent.followup('b')
    expect(agent.snapshot().inbox.latched).toBe(true)
    gate.resolve()
    gate = null
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['aborted', 'completed'])
    expect(agent.snapshot().inbox.latched).toBe(false)

    // turn 3 is aborted keeping its queue: nothing was latched during this abort, so 'd' waits
    gate = deferred()
    agent.followup('c')
    const d = agent.followup('d')
    agent.cancel({ kind: 'user' }, { keepInbox: true })
    gate.resolve()
    gate = null
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['aborted', 'completed', 'aborted'])
    expect(agent.snapshot().inbox.nextTurn.map((m) => m.id)).toEqual([d])
    expect(agent.status).toBe('idle')
    valid(agent.events)
  })

  it('§3.8 / choice 7: a wake latched during an abort whose waking prompt was withdrawn opens no turn for injected context alone', async () => {
    // The fuzzer's golden counterexample (seed 2007551288): a followup while the pre-step hook
    // waits, a cancel, a second followup (latched: re-targeted to next-turn), that followup
    // removed, an inject. Before the fix the latch opened turn 2 with only the inject: a model
    // request nobody asked for, which `wake()` (and so a re-run) would never make.
    const gate = deferred()
    let first = true
    const agent = createAgent({
      ...base([{ text: 'unasked' }]),
      hooks: {
        'agent/pre-step': async (_p, next) => {
          if (first) {
            first = false
            await gate.promise
          }
          return next()
        },
      },
    })
    guardAgentErrors(agent)
    agent.followup('one')
    agent.cancel({ kind: 'parent' })
    const two = agent.followup('two')
    expect(agent.snapshot().inbox.latched).toBe(true)
    expect(agent.inbox.remove(two)).toBe(true)
    const ctx = agent.inject('context')
    gate.resolve()
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]',
      'turn/start 1',
      'splice next-turn 0 -1 +[]',
      'splice next-turn 0 -0 +[m2]',
      'splice next-turn 0 -1 +[] canceled',
      'splice next-step 0 -0 +[m3]',
      'turn/end 1 aborted parent',
    ])
    expect(agent.status).toBe('idle')
    expect(agent.snapshot().inbox.latched).toBe(false)
    expect(agent.inbox.nextStep.map((m) => m.id)).toEqual([ctx])
    // the injected context waits for the next waking delivery, as an idle inject does
    agent.followup('three')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['aborted', 'completed'])
    expect(trace(agent.events).filter((l) => l.startsWith('user/message'))).toEqual(['user/message m3', 'user/message m4'])
    valid(agent.events)
  })

  it('§3.8: a wake latched during an abort still opens the next turn while its prompt is pending (with the injected context claimed first)', async () => {
    const gate = deferred()
    let first = true
    const agent = createAgent({
      ...base([{ text: 'answer' }]),
      hooks: {
        'agent/pre-step': async (_p, next) => {
          if (first) {
            first = false
            await gate.promise
          }
          return next()
        },
      },
    })
    guardAgentErrors(agent)
    agent.followup('one')
    agent.cancel({ kind: 'user' })
    agent.followup('two')
    agent.inject('context')
    gate.resolve()
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['aborted', 'completed'])
    expect(trace(agent.events).filter((l) => l.startsWith('user/message'))).toEqual(['user/message m3', 'user/message m2'])
    valid(agent.events)
  })

  it('R5 §6: a cancel from the agent/status listener aborts the opening turn\'s signal: its grace period arms (cancelGraceMs) and the close disarms it', async () => {
    const timers = recordingTimers()
    const agent = createAgent({ ...base([], timers), cancelGraceMs: 250 })
    guardAgentErrors(agent)
    const off = agent.on('agent/status', (e) => {
      if (e.status === 'running') agent.cancel({ kind: 'user' })
    })
    agent.followup('hi')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual(['splice next-turn 0 -0 +[m1]', 'splice next-turn 0 -1 +[] canceled', 'turn/start 1', 'turn/end 1 aborted user'])
    expect(timers.calls).toEqual([['set', 250], ['clear', 1]])
    off()
    valid(agent.events)
  })
})
