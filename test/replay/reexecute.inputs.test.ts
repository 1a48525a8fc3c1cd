/**
 * P4 with input rounds (docs/spec/lifecycle.md §11 "Re-execution and fuzzing"): answers are
 * recorded input. `reexecute` serves each body's recorded rounds (the requests, state and expiry as
 * logged, under the recorded request id) and re-issues each recorded answer right after its
 * `tool/input-requested`: a person's through `agent.answer`'s checks, an expiry by firing the
 * expiry timer; a superseded or cancelled round follows from the re-issued steer or cancel. A
 * session parked between rounds, answered while no agent ran and resumed, re-executes as two
 * processes. L21 holds on every recorded log.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/agent.js'
import type { AgentOptions } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { manualTimers } from '../approvals/helpers.js'
import { roundsTool } from '../inputs/helpers.js'
import { HEADER } from './replay-helpers.js'

const SHIP: ScriptedEntry[] = [{ toolCalls: [{ name: 'ship', args: { item: 'book' }, id: 'c1' }] }, { text: 'done' }, { text: 'again' }]

function recorder(script: ScriptedEntry[], tools: AnyTool[], opts: Partial<AgentOptions> = {}) {
  let n = 0
  let t = 1_764_450_000_000
  const mt = manualTimers()
  const agent = createAgent({
    tools, system: 'sys', model: scriptedModel(script, { info: { name: 'scripted' } }),
    clock: () => (t += 3), ids: () => `m${++n}`, timers: mt.timers, ...opts,
  })
  return { agent, mt, advance: (ms: number) => (t += ms) }
}

async function p4(events: readonly LogEvent[], tools: AnyTool[]) {
  expect(verify(events).violations).toEqual([])
  const r = await reexecute(events, { system: 'sys', stallMs: 500, tools })
  if (!r.ok) throw new Error(r.divergence.diff)
  expect(r).toEqual({ ok: true, eventCount: events.length })
}

const shipTool = (expiresInMs?: number) => roundsTool({ rounds: 2, state: (r) => ({ asked: r }), ...(expiresInMs !== undefined ? { expiresInMs } : {}) }).tool as AnyTool

describe('reexecute re-issues recorded answers (P4, L21, docs/spec/lifecycle.md §11)', () => {
  it('P4 L21: a session whose body asked two rounds (a form, then a choice), answered by a named person, re-executes to the same log', async () => {
    const { agent } = recorder(SHIP, [shipTool()])
    agent.followup('ship')
    expect(await agent.whenSettled()).toBe('parked')
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'accept', responses: { address: { city: 'Gent' } } }, { by: { kind: 'user', id: 'ann' } })
    expect(await agent.whenSettled()).toBe('parked')
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'accept', responses: { speed: 'fast' } })
    await agent.whenIdle()
    const rounds = agent.events.filter((e) => e.type === 'tool/input-requested' || e.type === 'tool/input-provided').map((e) => `${e.type} ${(e.data as { round: number }).round}`)
    expect(rounds).toEqual(['tool/input-requested 1', 'tool/input-provided 1', 'tool/input-requested 2', 'tool/input-provided 2'])
    await p4(agent.events, [shipTool()])
  })

  it('P4 L21: a declined round and an expired one (the expiry timer fired at the recorded expiry) re-execute to the same log', async () => {
    const { agent, mt, advance } = recorder([...SHIP.slice(0, 1), { text: 'ok' }, ...SHIP], [shipTool(5_000)])
    agent.followup('ship')
    expect(await agent.whenSettled()).toBe('parked')
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'decline' })
    await agent.whenIdle()
    agent.followup('ship again')
    expect(await agent.whenSettled()).toBe('parked')
    advance(6_000)
    mt.fire()
    await agent.whenIdle()
    const answers = agent.events.filter((e) => e.type === 'tool/input-provided').map((e) => (e.data as { by: { kind: string } }).by.kind)
    expect(answers).toEqual(['user', 'expired'])
    await p4(agent.events, [shipTool(5_000)])
  })

  it('P4: a client tool answered by the client re-executes to the same log', async () => {
    const pick = () => defineTool({ name: 'pick', client: true, parameters: z.object({ of: z.string() }), output: z.object({ file: z.string() }) }) as AnyTool
    const { agent } = recorder([{ toolCalls: [{ name: 'pick', args: { of: 'pdf' }, id: 'c1' }] }, { text: 'got it' }], [pick()])
    agent.followup('pick a file')
    expect(await agent.whenSettled()).toBe('parked')
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'accept', responses: { output: { file: 'a.pdf' } } })
    await agent.whenIdle()
    await p4(agent.events, [pick()])
  })

  it('P4 R11: parked between rounds, the process exits, the answer is logged while no agent runs, a new process runs the next round: two processes re-executed', async () => {
    const { agent } = recorder(SHIP, [shipTool()])
    agent.followup('ship')
    await agent.whenSettled()
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'accept', responses: { address: { city: 'Gent' } } })
    expect(await agent.whenSettled()).toBe('parked')
    const open = agent.inputs()[0]!
    await agent.dispose()
    // what store.answer appends while no agent runs
    const events = agent.events.slice() as LogEvent[]
    const last = events.at(-1)!
    events.push({
      seq: events.length, time: last.time + 5, type: 'tool/input-provided',
      data: { turn: 1, step: 1, callId: 'c1', requestId: open.requestId, round: 2, answer: { action: 'accept', responses: { speed: 'slow' } }, by: { kind: 'user', id: 'ops' } },
    } as LogEvent)
    let t = last.time + 100
    let n = 0
    const resumed = await resumeAgent({
      log: { header: HEADER, events }, tools: [shipTool()], system: 'sys', model: scriptedModel(SHIP.slice(1), { info: { name: 'scripted' } }),
      clock: () => (t += 3), ids: () => `r${++n}`, timers: manualTimers().timers,
    })
    await resumed.whenIdle()
    expect(resumed.events.filter((e) => e.type === 'tool/result')).toHaveLength(1)
    await p4(resumed.events, [shipTool()])
  })

  it('P4: a steer over an open round (superseded) and a cancel of one (canceled) follow from the re-issued steer and cancel', async () => {
    const { agent } = recorder([...SHIP.slice(0, 1), { text: 'steered' }, ...SHIP], [shipTool()])
    agent.followup('ship')
    expect(await agent.whenSettled()).toBe('parked')
    agent.steer('never mind')
    await agent.whenIdle()
    agent.followup('ship again')
    expect(await agent.whenSettled()).toBe('parked')
    agent.cancel()
    await agent.whenIdle()
    const answers = agent.events.filter((e) => e.type === 'tool/input-provided').map((e) => (e.data as { by: { kind: string } }).by.kind)
    expect(answers).toEqual(['superseded', 'canceled'])
    await p4(agent.events, [shipTool()])
  })

  it('P4: a recorded answer today\'s round no longer accepts (the form now requires another field) is a divergence naming the field', async () => {
    const { agent } = recorder(SHIP, [shipTool()])
    agent.followup('ship')
    await agent.whenSettled()
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'accept', responses: { address: { city: 'Gent' } } })
    await agent.whenSettled()
    await agent.answer(agent.inputs()[0]!.requestId, { action: 'accept', responses: { speed: 'fast' } })
    await agent.whenIdle()
    // the recording, edited: round 1 asked for a form that requires `zip` too (the answer lacks it)
    const events = agent.events.map((e) => e.type !== 'tool/input-requested' || (e.data as { round: number }).round !== 1 ? e : {
      ...e, data: { ...e.data, requests: { address: { kind: 'form', message: 'Where to?', schema: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city', 'zip'] } } } },
    }) as LogEvent[]
    const r = await reexecute(events, { system: 'sys', stallMs: 500, tools: [shipTool()] })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.divergence.expected?.type).toBe('tool/input-provided')
    expect(r.divergence.diff).toMatch(/refused the recorded answer to input request .* INVALID_INPUT at responses\.address/)
  })
})
