/**
 * An `agent/pre-step` decision is user data (docs/spec/lifecycle.md §3.2): a message it enters that the log
 * cannot store losslessly (a lone surrogate) is the hook's failure, like a message that does not
 * parse — the turn ends `error HOOK_ERROR` before any step, `agent/error` names `agent/pre-step`
 * with `INVALID_MESSAGE` and the field. It used to pass the check, open the step and be refused at
 * the `user/message` append: a driver defect (`'driver'`, step and turn `UNKNOWN`).
 */
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import { TurnlogError, type UserMessage } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { valid } from './contain-helpers.js'
import { guardAgentErrors } from './error-guard.js'
import { counterIds, fakeClock, instantTimers, trace } from './helpers.js'

describe('agent/pre-step decisions the log cannot store', () => {
  it('L2 §3.2: entering a message with a lone surrogate fails the hook (HOOK_ERROR, INVALID_MESSAGE naming the field), opens no step, and the next turn runs', async () => {
    let bad = true
    const lossy: UserMessage = { id: 'u1', role: 'user', content: [{ type: 'text', text: 'bad \uD800' }], source: { kind: 'user' } }
    const agent = createAgent({
      model: scriptedModel([{ text: 'ok' }], { info: { name: 'scripted' } }),
      system: 'sys',
      clock: fakeClock(),
      ids: counterIds('m'),
      timers: instantTimers(),
      hooks: {
        'agent/pre-step': (_p, next) => {
          if (!bad) return next()
          bad = false
          return { kind: 'enter', messages: [lossy] }
        },
      },
    })
    const errors = guardAgentErrors(agent, ['agent/pre-step'])
    agent.followup('hi')
    await agent.whenIdle()
    expect(trace(agent.events)).toEqual([
      'splice next-turn 0 -0 +[m1]',
      'turn/start 1',
      'splice next-turn 0 -1 +[]',
      'turn/end 1 error HOOK_ERROR',
    ])
    expect(errors).toHaveLength(1)
    expect(errors[0]!.where).toBe('agent/pre-step')
    const e = errors[0]!.error as TurnlogError
    expect(TurnlogError.is(e, 'INVALID_MESSAGE')).toBe(true)
    expect(e.field).toBe('messages[0].content[0].text')
    expect(e.message).toContain('lone surrogate')
    const end = agent.events.at(-1)!.data as { reason: { failure: { code: string; message: string } } }
    expect(end.reason.failure.code).toBe('HOOK_ERROR')
    expect(end.reason.failure.message).toMatch(/^agent\/pre-step: .*lone surrogate/)
    agent.followup('again')
    await agent.whenIdle()
    expect(trace(agent.events).slice(4).filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 2', 'turn/end 2 completed'])
    valid(agent.events)
  })
})
