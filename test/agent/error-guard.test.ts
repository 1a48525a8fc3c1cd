/**
 * The agent-test guard itself (issue 15 part 3): an `agent/error` the test did not name fails the
 * test; one it names (by where, by code or by predicate) does not. R7: a throwing hook is reported
 * as `agent/error` and the turn ends `error HOOK_ERROR`.
 */
import { describe, expect, it } from 'vitest'
import { makeAgent, endKinds } from './contain-helpers.js'
import { unexpectedAgentErrors } from './error-guard.js'

const boom = { error: Object.assign(new Error('boom'), { code: 'HOOK_ERROR' }), where: 'agent/pre-step' }

describe('guardAgentErrors', () => {
  it('an error the test did not name is reported with its where, code and message', () => {
    expect(unexpectedAgentErrors([boom], [])).toEqual(['agent/pre-step: HOOK_ERROR boom'])
    expect(unexpectedAgentErrors([boom], ['driver', 'ABANDONED', () => false])).toHaveLength(1)
  })

  it('an error named by where, by code or by predicate is expected', () => {
    expect(unexpectedAgentErrors([boom], ['agent/pre-step'])).toEqual([])
    expect(unexpectedAgentErrors([boom], ['HOOK_ERROR'])).toEqual([])
    expect(unexpectedAgentErrors([boom], [(e) => e.where === 'agent/pre-step'])).toEqual([])
  })

  it('a hostile error object (throwing code and message getters) is still described', () => {
    const hostile = { get code() { throw new Error('c') }, get message() { throw new Error('m') }, toString: () => { throw new Error('s') } }
    expect(unexpectedAgentErrors([{ error: hostile, where: 'driver' }], [])).toEqual(['driver: - (unprintable)'])
  })

  it('R7: makeAgent collects the errors a test provokes on purpose (named, so the test passes)', async () => {
    const { agent, errors } = makeAgent([{ text: 'x' }], { hooks: { 'agent/pre-step': () => { throw new Error('on purpose') } }, expectErrors: ['agent/pre-step'] })
    agent.followup('go')
    await agent.whenIdle()
    expect(errors.map((e) => e.where)).toEqual(['agent/pre-step'])
    expect((errors[0]!.error as Error).message).toBe('on purpose') // the hook's own error, as thrown
    expect(endKinds(agent.events)).toEqual(['error'])
  })
})
