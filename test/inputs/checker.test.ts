/**
 * L21 as `verify` decides it (events/invariants/inputs.ts): logs the live agent writes with input
 * rounds verify clean, and each rule of L21 broken on purpose in such a log is caught with its own
 * coded rule (`Violation.rule`). Also L18 as amended for rounds (an open round may stand without its
 * result when the step parks; an answer may follow `step/parked`; `step/parked` lists open rounds).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { LogEvent } from '../../events/index.js'
import { L21_RULES } from '../../events/invariants/inputs.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/index.js'
import { Edit } from '../../testing/arbitraries/mutation-edit.js'
import { makeAgent } from '../agent/contain-helpers.js'
import { roundsTool } from './helpers.js'

/** A log with two rounds of `ship` (c1), a client tool (c2) and a plain call (c3) in one step. */
async function recorded(): Promise<LogEvent[]> {
  const { tool } = roundsTool({ rounds: 2 })
  const color = defineTool({ name: 'pick_color', parameters: z.object({}), client: true })
  const plain = defineTool({ name: 'echo', description: 'echo', parameters: z.object({}), execute: () => 'echo' })
  const script = [{ toolCalls: [{ name: 'ship', args: { item: 'b' }, id: 'c1' }, { name: 'pick_color', args: {}, id: 'c2' }, { name: 'echo', args: {}, id: 'c3' }] }, { text: 'ok' }]
  const { agent } = makeAgent(script, { tools: [tool, color, plain] })
  agent.followup('go')
  for (let i = 0; i < 10 && (await agent.whenSettled()) === 'parked'; i++) {
    const o = agent.inputs()[0]!
    const responses = o.name === 'pick_color' ? { output: 'red' } : o.round === 1 ? { address: { city: 'Pau' } } : { speed: 'fast' }
    await agent.answer(o.requestId, { action: 'accept', responses })
  }
  await agent.whenIdle()
  const log = agent.events.slice() as LogEvent[]
  await agent.dispose()
  return log
}

const rulesOf = (log: readonly LogEvent[]) => verify(log).violations.filter((v) => v.invariant === 'L21').map((v) => v.rule)
const find = (log: readonly LogEvent[], f: (e: LogEvent) => boolean, from = 0) => log.findIndex((e) => e.seq >= from && f(e))
const d = (e: LogEvent) => e.data as Record<string, any>
const isReq = (callId?: string, round?: number) => (e: LogEvent) => e.type === 'tool/input-requested' && (callId === undefined || d(e).callId === callId) && (round === undefined || d(e).round === round)
const isAns = (callId?: string, round?: number) => (e: LogEvent) => e.type === 'tool/input-provided' && (callId === undefined || d(e).callId === callId) && (round === undefined || d(e).round === round)

/** One mutation per rule of L21; each must be caught with exactly that rule. */
const MUTATIONS: Record<(typeof L21_RULES)[number], (log: readonly LogEvent[]) => LogEvent[]> = {
  INPUT_STEP(log) {
    const ed = new Edit(log)
    ed.ev(find(log, isReq('c1', 1))).data.step = 9
    return ed.done()
  },
  INPUT_CALL(log) {
    const ed = new Edit(log)
    ed.ev(find(log, isReq('c1', 1))).data.callId = 'ghost'
    return ed.done()
  },
  INPUT_ROUND(log) {
    const ed = new Edit(log)
    const r = find(log, isReq('c1', 2))
    ed.ev(r).data.round = 3
    ed.ev(find(log, isAns('c1', 2))).data.round = 3
    return ed.done()
  },
  INPUT_ROUND_OPEN(log) {
    // the first round's answer moved after the second round's request
    const ed = new Edit(log)
    ed.swap(find(log, isAns('c1', 1)), find(log, isReq('c1', 2)))
    return ed.done()
  },
  INPUT_ID(log) {
    const ed = new Edit(log)
    const first = d(log[find(log, isReq('c1', 1))]!).requestId
    ed.ev(find(log, isReq('c1', 2))).data.requestId = first
    ed.ev(find(log, isAns('c1', 2))).data.requestId = first
    return ed.done()
  },
  INPUT_UNKNOWN(log) {
    const ed = new Edit(log)
    ed.ev(find(log, isAns('c1', 1))).data.requestId = 'never-asked'
    return ed.done()
  },
  INPUT_TWICE(log) {
    const ed = new Edit(log)
    const a = find(log, isAns('c1', 2))
    const { seq: _s, time: _t, ...copy } = structuredClone(log[a]!) as LogEvent
    ed.insertAfter(a, copy as never)
    return ed.done()
  },
  INPUT_KEYS(log) {
    const ed = new Edit(log)
    ed.ev(find(log, isAns('c1', 1))).data.answer.responses = { adress: { city: 'Pau' } }
    return ed.done()
  },
  INPUT_RESULT_OPEN(log) {
    // the client tool's answer removed: its result stands while its round is open
    const ed = new Edit(log)
    ed.remove(find(log, isAns('c2')))
    return ed.done()
  },
  INPUT_CLIENT(log) {
    // a second round asked after the client round's accepted answer, before the result
    const ed = new Edit(log)
    const a = find(log, isAns('c2'))
    const req = structuredClone(log[find(log, isReq('c2'))]!) as LogEvent
    const { seq: _s, time: _t, ...copy } = req
    ;(copy.data as Record<string, unknown>).round = 2
    ;(copy.data as Record<string, unknown>).requestId = 'second'
    ed.insertAfter(a, copy as never)
    const ans = structuredClone(log[a]!) as LogEvent
    const { seq: _s2, time: _t2, ...acopy } = ans
    ;(acopy.data as Record<string, unknown>).round = 2
    ;(acopy.data as Record<string, unknown>).requestId = 'second'
    ed.items.splice(ed.at(a) + 2, 0, { e: { seq: 0, time: 0, ...(acopy as object) } as never, old: null })
    return ed.done()
  },
  INPUT_STEP_END(log) {
    // the last round's answer and everything up to the step's end removed but the step/end
    const ed = new Edit(log)
    const a = find(log, isAns('c1', 2))
    const end = find(log, (e) => e.type === 'step/end', a)
    for (let i = a; i < end; i++) ed.remove(i)
    return ed.done()
  },
}

describe('L21 (docs/spec/invariants.md): input rounds as verify checks them', () => {
  it('L21, L18: the live agent\'s log with rounds, a client tool and a plain call verifies clean', async () => {
    const log = await recorded()
    expect(verify(log).violations).toEqual([])
    expect(log.filter((e) => e.type === 'tool/input-requested')).toHaveLength(3)
  })

  it('every rule of L21 has a mutation, and each mutation is caught with its own rule code', async () => {
    const log = await recorded()
    expect(Object.keys(MUTATIONS).sort()).toEqual([...L21_RULES].sort())
    for (const rule of L21_RULES) {
      const rules = rulesOf(MUTATIONS[rule](log))
      expect(rules, rule).toContain(rule)
    }
  })

  it('L18 as amended: step/parked that omits an open round, and an event other than an answer after step/parked, are caught', async () => {
    const log = await recorded()
    const p = find(log, (e) => e.type === 'step/parked')
    const omit = new Edit(log)
    omit.ev(p).data.approvals = ['somebody-else']
    expect(verify(omit.done()).violations.map((v) => v.invariant)).toContain('L18')
    const after = new Edit(log)
    after.insertAfter(p, { type: 'llm/retry', data: { turn: 1, step: 1, attempt: 1, delayMs: 1, failure: { code: 'SERVER', message: 'x' } } })
    expect(verify(after.done()).violations.map((v) => v.invariant)).toContain('L18')
  })
})
