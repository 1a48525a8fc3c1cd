/**
 * Client tools, `askUser`, and what ends a round besides a person (docs/spec/lifecycle.md §11):
 * the expiry (`by: expired`: the body is called once more with `cancel`; a client tool gets
 * `INPUT_EXPIRED`), a steer (`by: superseded`, or kept open with `inputs.onSteer: 'queue'`), a
 * cancel (`by: canceled`, the call ends `ABORTED`), dispose (the session stays parked). Every log
 * verifies (L21, L18); R9: while parked no body runs.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { askUser, defineTool } from '../../tools/index.js'
import { makeAgent, valid } from '../agent/contain-helpers.js'
import { manualClock, manualTimers } from '../approvals/helpers.js'
import { dataOf, roundsTool, typesFrom } from './helpers.js'

const pickColor = defineTool({ name: 'pick_color', parameters: z.object({ palette: z.string() }), output: z.object({ color: z.string() }), client: true })
const colorScript = [{ toolCalls: [{ name: 'pick_color', args: { palette: 'warm' }, id: 'c1' }] }, { text: 'nice' }]
const shipScript = [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }] }, { text: 'done' }, { text: 'again' }]

describe('client tools and askUser (docs/spec/lifecycle.md §11)', () => {
  it('L21: a client tool logs one client round; the accepted response is the result, with no second round', async () => {
    const { agent } = makeAgent(colorScript, { tools: [pickColor] })
    agent.followup('pick one')
    expect(await agent.whenSettled()).toBe('parked')
    const [o] = agent.inputs()
    expect(o).toMatchObject({ name: 'pick_color', round: 1, requests: { output: { kind: 'client' } } })
    // validated against the tool's output schema when given: refused, nothing logged
    const n = agent.events.length
    await expect(agent.answer(o!.requestId, { action: 'accept', responses: { output: { colour: 'red' } } })).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'responses.output' })
    expect(agent.events.length).toBe(n)
    await agent.answer(o!.requestId, { action: 'accept', responses: { output: { color: 'red' } } })
    await agent.whenIdle()
    expect(typesFrom(agent.events).slice(0, 6)).toEqual(['tool/call', 'tool/input-requested', 'step/parked', 'tool/input-provided', 'tool/result', 'step/end'])
    expect(dataOf(agent.events, 'tool/result')[0]!.message.content).toEqual([{ type: 'text', text: '{"color":"red"}' }])
    valid(agent.events)
    await agent.dispose()
  })

  it('a declined client tool is a DENIED result', async () => {
    const { agent } = makeAgent(colorScript, { tools: [pickColor] })
    agent.followup('pick one')
    await agent.whenSettled()
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'decline' })
    await agent.whenIdle()
    expect(dataOf(agent.events, 'tool/result')[0]!.error.code).toBe('DENIED')
    valid(agent.events)
    await agent.dispose()
  })

  it('askUser: the model asks in text or with a form it describes; the answer is the result', async () => {
    const script = [
      { toolCalls: [{ name: 'ask_user', args: { question: 'Your name?' }, id: 'a1' }] },
      { toolCalls: [{ name: 'ask_user', args: { question: 'Address?', schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }, id: 'a2' }] },
      { text: 'thanks' },
    ]
    const { agent } = makeAgent(script, { tools: [askUser()] })
    agent.followup('hi')
    expect(await agent.whenSettled()).toBe('parked')
    expect(agent.inputs()[0]!.requests).toEqual({ answer: { kind: 'text', message: 'Your name?' } })
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'accept', responses: { answer: 'Ann' } })
    expect(await agent.whenSettled()).toBe('parked')
    const form = agent.inputs()[0]!
    expect(form.requests.answer!.kind).toBe('form')
    await expect(agent.answer(form.requestId, { action: 'accept', responses: { answer: { town: 'x' } } })).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    await agent.answer(form.requestId, { action: 'accept', responses: { answer: { city: 'Lyon' } } })
    await agent.whenIdle()
    expect(dataOf(agent.events, 'tool/result').map((d) => d.message.content[0].text)).toEqual(['Ann', '{"city":"Lyon"}'])
    valid(agent.events)
    await agent.dispose()
  })
})

describe('expiry, steer, cancel, dispose while a round is open (docs/spec/lifecycle.md §11)', () => {
  it('R9: on expiry the round is answered cancel by expired and the body is called once more', async () => {
    const t = manualTimers()
    const clock = manualClock()
    const { tool, runs } = roundsTool({ expiresInMs: 60_000 })
    const { agent } = makeAgent(shipScript, { tools: [tool], timers: t.timers, clock: clock.now })
    agent.followup('ship it')
    expect(await agent.whenSettled()).toBe('parked')
    expect(dataOf(agent.events, 'tool/input-requested')[0]!.expiresAt).toBe(agent.inputs()[0]!.expiresAt)
    expect(runs).toHaveLength(1) // R9: nothing runs while parked
    clock.advance(60_001)
    t.fire()
    await agent.whenIdle()
    expect(dataOf(agent.events, 'tool/input-provided')[0]).toMatchObject({ answer: { action: 'cancel' }, by: { kind: 'expired' } })
    expect(runs[1]!.input).toMatchObject({ action: 'cancel', by: { kind: 'expired' } })
    expect(dataOf(agent.events, 'tool/result')[0]!.message.content[0].text).toBe('not shipped: cancel by expired')
    valid(agent.events)
    await agent.dispose()
  })

  it('a client tool nobody answered in time gets INPUT_EXPIRED', async () => {
    const t = manualTimers()
    const clock = manualClock()
    const timed = defineTool({ name: 'pick_color', parameters: z.object({ palette: z.string() }), client: true, input: { timeoutMs: 5_000 } })
    const { agent } = makeAgent(colorScript, { tools: [timed], timers: t.timers, clock: clock.now })
    agent.followup('pick')
    expect(await agent.whenSettled()).toBe('parked')
    expect(agent.inputs()[0]!.expiresAt).toBeDefined()
    clock.advance(5_001)
    t.fire()
    await agent.whenIdle()
    expect(dataOf(agent.events, 'tool/input-provided')[0]).toMatchObject({ answer: { action: 'cancel' }, by: { kind: 'expired' } })
    expect(dataOf(agent.events, 'tool/result')[0]!.error.code).toBe('INPUT_EXPIRED')
    valid(agent.events)
    await agent.dispose()
  })

  it('a steer supersedes the open round (body called with cancel by superseded); the steer enters the next step', async () => {
    const { tool, runs } = roundsTool()
    const { agent } = makeAgent(shipScript, { tools: [tool] })
    agent.followup('ship it')
    await agent.whenSettled()
    agent.steer('never mind')
    await agent.whenIdle()
    expect(dataOf(agent.events, 'tool/input-provided')[0]).toMatchObject({ answer: { action: 'cancel' }, by: { kind: 'superseded' } })
    expect(runs[1]!.input).toMatchObject({ action: 'cancel', by: { kind: 'superseded' } })
    expect(dataOf(agent.events, 'step/end')[0]!.outcome.kind).toBe('tools')
    expect(dataOf(agent.events, 'user/message').map((d) => d.message.content[0].text)).toEqual(['ship it', 'never mind'])
    valid(agent.events)
    await agent.dispose()
  })

  it("inputs.onSteer 'queue' keeps the round open; the steer waits", async () => {
    const { tool, runs } = roundsTool()
    const { agent } = makeAgent(shipScript, { tools: [tool], inputs: { onSteer: 'queue' } })
    agent.followup('ship it')
    await agent.whenSettled()
    agent.steer('also gift-wrap')
    expect(await agent.whenSettled()).toBe('parked')
    expect(agent.inputs()).toHaveLength(1)
    expect(runs).toHaveLength(1)
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'accept', responses: { address: { city: 'Nice' } } })
    await agent.whenIdle()
    expect(dataOf(agent.events, 'user/message').map((d) => d.message.content[0].text)).toEqual(['ship it', 'also gift-wrap'])
    valid(agent.events)
    await agent.dispose()
  })

  it('a cancel answers the round cancel by canceled; the call ends ABORTED and the turn aborted; no body runs', async () => {
    const { tool, runs } = roundsTool()
    const { agent } = makeAgent(shipScript, { tools: [tool] })
    agent.followup('ship it')
    await agent.whenSettled()
    agent.cancel()
    await agent.whenIdle()
    expect(dataOf(agent.events, 'tool/input-provided')[0]).toMatchObject({ answer: { action: 'cancel' }, by: { kind: 'canceled' } })
    expect(dataOf(agent.events, 'tool/result')[0]!.error.code).toBe('ABORTED')
    expect(dataOf(agent.events, 'turn/end')[0]!.reason.kind).toBe('aborted')
    expect(runs).toHaveLength(1)
    valid(agent.events)
    await agent.dispose()
  })

  it('dispose leaves the session parked: nothing is answered', async () => {
    const { tool } = roundsTool()
    const { agent } = makeAgent(shipScript, { tools: [tool] })
    agent.followup('ship it')
    await agent.whenSettled()
    const n = agent.events.length
    await agent.dispose()
    expect(agent.events.length).toBe(n)
    expect(agent.events.at(-1)!.type).toBe('step/parked')
  })

  it('an approval and an input round open together in one step: one step/parked lists both', async () => {
    const { tool } = roundsTool()
    const gated = defineTool({ name: 'rm', description: 'remove', parameters: z.object({ path: z.string() }), needsApproval: true, execute: ({ path }) => `removed ${path}` })
    const script = [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }, { name: 'rm', args: { path: 'x' }, id: 'c2' }] }, { text: 'done' }]
    const { agent } = makeAgent(script, { tools: [tool, gated] })
    agent.followup('go')
    expect(await agent.whenSettled()).toBe('parked')
    const parked = dataOf(agent.events, 'step/parked').at(-1)!
    expect(new Set(parked.approvals)).toEqual(new Set([agent.inputs()[0]!.requestId, agent.approvals()[0]!.approvalId]))
    await agent.decide(agent.approvals()[0]!.approvalId, { kind: 'approve' })
    expect(await agent.whenSettled()).toBe('parked')
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'accept', responses: { address: { city: 'Bonn' } } })
    await agent.whenIdle()
    expect(dataOf(agent.events, 'tool/result').map((d) => d.callId)).toEqual(['c1', 'c2'])
    valid(agent.events)
    await agent.dispose()
  })
})
