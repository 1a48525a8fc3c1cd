/**
 * Input rounds in the live agent (docs/spec/lifecycle.md §11): a body ends a round with
 * `ctx.inputRequired`, the step parks, `agent.answer` calls the body again with `ctx.input`; several
 * rounds; decline; refusals that log nothing; the state cap. Every log verifies (L21, L18), and each
 * round's body runs exactly once (R10, R11).
 */
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/index.js'
import { makeAgent, valid } from '../agent/contain-helpers.js'
import { dataOf, roundsTool, typesFrom } from './helpers.js'

const script = [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }] }, { text: 'done' }]

describe('input rounds (docs/spec/lifecycle.md §11)', () => {
  it('L21, R11: a form round parks the step; the answer calls the body again once; exact events', async () => {
    const { tool, runs } = roundsTool()
    const { agent } = makeAgent(script, { tools: [tool] })
    agent.followup('ship it')
    expect(await agent.whenSettled()).toBe('parked')
    expect(agent.status).toBe('parked')
    const open = agent.inputs()
    expect(open).toHaveLength(1)
    expect(open[0]).toMatchObject({ callId: 'c1', name: 'ship', round: 1, requests: { address: { kind: 'form' } } })
    await agent.answer(open[0]!.requestId, { action: 'accept', responses: { address: { city: 'Paris' } } }, { by: { kind: 'user', id: 'ann' } })
    await agent.whenIdle()
    expect(runs.map((r) => r.round)).toEqual([0, 1])
    expect(runs[1]!.input).toMatchObject({ round: 1, action: 'accept', responses: { address: { city: 'Paris' } }, by: { kind: 'user', id: 'ann' } })
    const events = agent.events
    expect(typesFrom(events).slice(0, 6)).toEqual(['tool/call', 'tool/input-requested', 'step/parked', 'tool/input-provided', 'tool/result', 'step/end'])
    expect(dataOf(events, 'step/parked')[0]!.approvals).toEqual([open[0]!.requestId])
    expect(dataOf(events, 'tool/input-provided')[0]).toMatchObject({ callId: 'c1', round: 1, answer: { action: 'accept' }, by: { kind: 'user', id: 'ann' } })
    expect(dataOf(events, 'tool/result')[0]!.message.content[0].text).toBe('shipped book to {"address":{"city":"Paris"}}')
    expect(agent.inputs()).toEqual([])
    valid(events)
    await agent.dispose()
  })

  it('L21: three rounds (form, choice, text), each asked once its predecessor is answered; round numbers 1..3', async () => {
    const { tool, runs } = roundsTool({ rounds: 3, state: (n) => ({ n }) })
    const { agent } = makeAgent(script, { tools: [tool] })
    agent.followup('ship it')
    const answers = [{ address: { city: 'Oslo' } }, { speed: 'fast' }, { note: 'fragile' }]
    for (const responses of answers) {
      expect(await agent.whenSettled()).toBe('parked')
      const [o] = agent.inputs()
      await agent.answer(o!.requestId, { action: 'accept', responses })
    }
    await agent.whenIdle()
    expect(runs.map((r) => r.round)).toEqual([0, 1, 2, 3])
    expect(runs.map((r) => r.input?.state)).toEqual([undefined, { n: 1 }, { n: 2 }, { n: 3 }])
    expect(dataOf(agent.events, 'tool/input-requested').map((d) => d.round)).toEqual([1, 2, 3])
    expect(dataOf(agent.events, 'tool/input-requested').map((d) => d.state)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }])
    valid(agent.events)
    await agent.dispose()
  })

  it('a decline reaches the body, which decides what it means', async () => {
    const { tool, runs } = roundsTool()
    const { agent } = makeAgent(script, { tools: [tool] })
    agent.followup('ship it')
    await agent.whenSettled()
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'decline' })
    await agent.whenIdle()
    expect(runs[1]!.input).toMatchObject({ action: 'decline', by: { kind: 'user' } })
    expect(dataOf(agent.events, 'tool/result')[0]!.message.content[0].text).toBe('not shipped: decline by user')
    valid(agent.events)
    await agent.dispose()
  })

  it('refusals log nothing: a form answer against its schema (field named), missing and extra keys, an unknown id, a second answer (INPUT_ANSWERED)', async () => {
    const { tool } = roundsTool({ rounds: 2 })
    const { agent } = makeAgent(script, { tools: [tool] })
    agent.followup('ship it')
    await agent.whenSettled()
    const id = agent.inputs()[0]!.requestId
    const length = agent.events.length
    const refused = async (answer: unknown): Promise<TurnlogError> => {
      try {
        await agent.answer(id, answer as never)
      } catch (e) {
        expect(TurnlogError.is(e)).toBe(true)
        return e as TurnlogError
      }
      throw new Error('not refused')
    }
    expect(await refused({ action: 'accept', responses: { address: {} } })).toMatchObject({ code: 'INVALID_INPUT', field: 'responses.address/city' })
    expect(await refused({ action: 'accept', responses: { address: { city: 'x', planet: 'Mars' } } })).toMatchObject({ code: 'INVALID_INPUT', field: 'responses.address/planet' })
    expect(await refused({ action: 'accept', responses: {} })).toMatchObject({ code: 'INVALID_INPUT', field: 'responses.address' })
    expect(await refused({ action: 'accept', responses: { address: { city: 'x' }, other: 1 } })).toMatchObject({ code: 'INVALID_INPUT', field: 'responses.other' })
    expect(await refused({ action: 'maybe' })).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'answer.action' })
    await expect(agent.answer('nope', { action: 'decline' })).rejects.toMatchObject({ code: 'UNKNOWN_INPUT' })
    expect(agent.events.length).toBe(length)
    await agent.answer(id, { action: 'accept', responses: { address: { city: 'Rome' } } })
    expect(await refused({ action: 'decline' })).toMatchObject({ code: 'INPUT_ANSWERED' })
    // the second round is a choice: a response that is not one of its options is refused
    expect(await agent.whenSettled()).toBe('parked')
    const second = agent.inputs()[0]!.requestId
    await expect(agent.answer(second, { action: 'accept', responses: { speed: 'warp' } })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'responses.speed' })
    await agent.answer(second, { action: 'accept', responses: { speed: 'slow' } })
    await agent.whenIdle()
    expect(dataOf(agent.events, 'tool/input-provided')).toHaveLength(2)
    valid(agent.events)
    await agent.dispose()
  })

  it('a state over the cap is the call\'s INPUT_STATE_TOO_LARGE result, not a crash; nothing is asked', async () => {
    const { tool } = roundsTool({ state: () => 'x'.repeat(2000) })
    const { agent } = makeAgent(script, { tools: [tool], inputs: { maxStateBytes: 1000 } })
    agent.followup('ship it')
    expect(await agent.whenSettled()).toBe('idle')
    expect(dataOf(agent.events, 'tool/input-requested')).toEqual([])
    expect(dataOf(agent.events, 'tool/result')[0]!.error.code).toBe('INPUT_STATE_TOO_LARGE')
    valid(agent.events)
    await agent.dispose()
  })

  it('the default cap is 64 KB', async () => {
    const { tool } = roundsTool({ state: () => 'x'.repeat(70_000) })
    const { agent } = makeAgent(script, { tools: [tool] })
    agent.followup('ship it')
    await agent.whenSettled()
    expect(dataOf(agent.events, 'tool/result')[0]!.error.code).toBe('INPUT_STATE_TOO_LARGE')
    await agent.dispose()
  })
})
