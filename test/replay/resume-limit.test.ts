/**
 * docs/spec/lifecycle.md §8 as amended (issue 24 items 1 and 3): only resume runs that reached their model
 * request count toward `maxResumeRuns`; runs killed before their request are bounded separately
 * (`maxResumeRuns × 3`); the limit in force is recorded on the resume turn's `cause` and `verify`
 * checks L13 against it; a give-up is a durable `resume/given-up` record naming the acknowledged
 * messages it leaves unanswered; `RESUME_LIMIT` reaches every listener.
 *
 * Crashes are simulated without timing: a model or hook that never settles, and the log is taken as
 * it stands once the test knows (explicit signal) the agent is stuck there.
 */
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { planResume } from '../../replay/resume-plan.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { crashedPoison, ids, poisonModel, reachedRun, stuck } from './given-up-log.js'

/** One resume whose resume turn is killed before its request: `agent/pre-step` never settles. */
async function unreachedRun(log: readonly LogEvent[], maxResumeRuns?: number): Promise<LogEvent[]> {
  const hang = stuck()
  const b = await resumeAgent({
    log, model: scriptedModel(() => ({ text: 'never asked' })), ids, ...(maxResumeRuns !== undefined ? { maxResumeRuns } : {}),
    hooks: { 'agent/pre-step': async () => { hang.signal(); return new Promise<never>(() => {}) } },
  })
  await hang.promise
  return [...b.events]
}

const starts = (log: readonly LogEvent[]) => log.filter((e) => e.type === 'turn/start').map((e) => (e as EventOf<'turn/start'>).data)
const givenUp = (log: readonly LogEvent[]) => log.filter((e) => e.type === 'resume/given-up').map((e) => e.data)

describe('§8 amended: the limit in force is recorded on the resume turn (issue 24 item 3)', () => {
  it('L13 §8: a resume turn records maxResumeRuns on its cause (the default 3, or the option)', async () => {
    const { log } = await crashedPoison()
    const a = await reachedRun(log)
    expect(starts(a).at(-1)).toEqual({ turn: 2, cause: { kind: 'resume', of: 1, maxResumeRuns: 3 } })
    const b = await reachedRun(log, 20)
    expect(starts(b).at(-1)).toEqual({ turn: 2, cause: { kind: 'resume', of: 1, maxResumeRuns: 20 } })
  })

  it('L13: an agent configured with maxResumeRuns 20 writes a log that verify accepts with its default options (no false L13 at run 4)', async () => {
    let { log } = await crashedPoison()
    for (let round = 1; round <= 5; round++) log = await reachedRun(log, 20)
    const b = await resumeAgent({ log, model: scriptedModel(() => ({ text: 'finally' })), ids, maxResumeRuns: 20 })
    await b.whenIdle()
    expect(starts(b.events).length).toBe(7)
    expect(verify(b.events).violations).toEqual([])
  })

  it('L13: a log whose resume turns record no limit (older logs) is checked against the checker option, default 3', async () => {
    let { log } = await crashedPoison()
    for (let round = 1; round <= 4; round++) log = await reachedRun(log, 10)
    // strip the recorded limit, as a log written before it was recorded
    const old = log.map((e) => e.type === 'turn/start' && (e.data as any).cause
      ? { ...e, data: { ...(e.data as object), cause: { kind: 'resume', of: (e.data as any).cause.of } } } as LogEvent : e)
    const v = verify(old).violations.filter((x) => x.invariant === 'L13')
    expect(v).toHaveLength(1)
    expect(v[0]!.message).toMatch(/resume run 4 .*at most 3/)
    expect(verify(old, { maxResumeRuns: 4 }).violations).toEqual([])
  })
})

describe('§8 amended: only runs that reached their request count (issue 24 item 1)', () => {
  it('L13 §8: resume runs killed before their request do not count toward maxResumeRuns; the message is answered after 5 of them', async () => {
    let { log, id } = await crashedPoison()
    for (let round = 1; round <= 5; round++) log = await unreachedRun(log)
    expect(starts(log).map((s) => s.cause?.kind ?? null)).toEqual([null, 'resume', 'resume', 'resume', 'resume', 'resume'])
    const errors: unknown[] = []
    const b = await resumeAgent({ log, model: scriptedModel(() => ({ text: 'answer' })), ids, hooks: { 'agent/error': (e) => errors.push(e.error) } })
    await b.whenIdle()
    expect(errors).toEqual([])
    expect(b.events.at(-1)?.data).toEqual({ turn: 7, reason: { kind: 'completed' } })
    const um = b.events.filter((e) => e.type === 'user/message').map((e) => (e as EventOf<'user/message'>).data.message.id)
    expect(um).toEqual([id])
    expect(verify(b.events).violations).toEqual([])
  })

  it('L13 §8: runs killed before their request are bounded at maxResumeRuns × 3; then a durable resume/given-up names the message', async () => {
    let { log, id } = await crashedPoison()
    for (let round = 1; round <= 3; round++) log = await unreachedRun(log, 1)
    const errors: Array<{ code: string; info: any }> = []
    const b = await resumeAgent({
      log, model: poisonModel(() => { throw new Error('must not be re-run') }), ids, maxResumeRuns: 1,
      hooks: { 'agent/error': (e) => errors.push(e.error as never) },
    })
    await b.whenIdle()
    expect(starts(b.events).length).toBe(4)
    expect(errors.map((e) => e.code)).toEqual(['RESUME_LIMIT'])
    expect(errors[0]!.info).toMatchObject({ turn: 4, resumeRuns: 0, unreachedRuns: 3, maxResumeRuns: 1, messages: [id] })
    expect(givenUp(b.events)).toEqual([{ turn: 4, reason: 'unreached-runs', runs: 0, unreachedRuns: 3, maxResumeRuns: 1, messages: [id] }])
    expect(verify(b.events).violations).toEqual([])
  })

  it('L13: the checker flags a fourth resume run of a chain that did not reach its request when the recorded limit is 1', async () => {
    let { log } = await crashedPoison()
    for (let round = 1; round <= 3; round++) log = await unreachedRun(log, 1)
    expect(verify(log).violations).toEqual([])
    // a fourth unreached run, forged: the planner would have refused it
    const forged = await unreachedRun(log, 9)
    const relabelled = forged.map((e, i) => i >= log.length && e.type === 'turn/start'
      ? { ...e, data: { ...(e.data as object), cause: { kind: 'resume', of: (e.data as any).cause.of, maxResumeRuns: 1 } } } as LogEvent : e)
    const v = verify(relabelled).violations.filter((x) => x.invariant === 'L13')
    expect(v.map((x) => x.message)).toEqual([expect.stringMatching(/did not reach its request.*at most 3/)])
  })
})

describe('§8 amended: a give-up is durable and reaches every listener', () => {
  it('L13 §8: at the limit, resume/given-up names the unanswered message; RESUME_LIMIT once; resuming again writes no second record', async () => {
    let { log, id } = await crashedPoison()
    for (let round = 1; round <= 3; round++) log = await reachedRun(log)
    const errors: string[] = []
    const c = await resumeAgent({ log, model: poisonModel(() => { throw new Error('must not be re-run') }), ids, hooks: { 'agent/error': (e) => errors.push((e.error as any).code) } })
    await c.whenIdle()
    expect(errors).toEqual(['RESUME_LIMIT'])
    // after repair's closers of turn 4: the give-up record, and no turn
    const after = c.events.slice(log.length).filter((e) => e.type === 'resume/given-up' || e.type === 'turn/start')
    expect(after.map((e) => e.type)).toEqual(['resume/given-up'])
    expect(c.events.at(-1)?.type).toBe('resume/given-up')
    expect(after[0]!.data).toEqual({ turn: 4, reason: 'resume-runs', runs: 3, unreachedRuns: 0, maxResumeRuns: 3, messages: [id] })
    expect(planResume(c.events).limited).toBeNull()
    const again: string[] = []
    const d = await resumeAgent({ log: c.events, model: scriptedModel(() => ({ text: 'x' })), ids, hooks: { 'agent/error': (e) => again.push((e.error as any).code) } })
    await d.whenIdle()
    expect(again).toEqual([])
    expect(d.events.length).toBe(c.events.length)
    expect(verify(d.events).violations).toEqual([])
  })

  it('§8: with autoStart: false, a listener added with agent.on before wake() hears RESUME_LIMIT', async () => {
    let { log } = await crashedPoison()
    for (let round = 1; round <= 3; round++) log = await reachedRun(log)
    const b = await resumeAgent({ log, model: scriptedModel(() => ({ text: 'x' })), ids, autoStart: false })
    const heard: string[] = []
    b.on('agent/error', (e) => heard.push(`${(e.error as any).code}@${e.where}`))
    b.wake()
    await b.whenIdle()
    expect(heard).toEqual(['RESUME_LIMIT@resume'])
  })

  it('L11 §8: a re-inserted message whose turn dies before its request every time is given up after maxResumeRuns × 3 re-insertions, named by its acknowledged id', async () => {
    const preStepHang = (signal: () => void) => ({
      'agent/pre-step': async () => { signal(); return new Promise<never>(() => {}) },
    })
    let log: readonly LogEvent[] = []
    let id = ''
    {
      const hang = stuck()
      const a = createAgent({ model: scriptedModel(() => ({ text: 'ok' })), ids, hooks: preStepHang(hang.signal) })
      id = a.followup('poison at claim')
      await hang.promise
      log = [...a.events]
    }
    for (let round = 1; round <= 3; round++) {
      const hang = stuck()
      const b = await resumeAgent({ log, model: scriptedModel(() => ({ text: 'ok' })), ids, hooks: preStepHang(hang.signal), maxResumeRuns: 1 })
      await hang.promise
      log = [...b.events]
    }
    const errors: unknown[] = []
    const c = await resumeAgent({ log, model: scriptedModel(() => ({ text: 'ok' })), ids, maxResumeRuns: 1, hooks: { 'agent/error': (e) => errors.push(e.error) } })
    await c.whenIdle()
    expect(errors).toMatchObject([{ code: 'RESUME_LIMIT' }])
    const reinserted = c.events.flatMap((e) => e.type === 'agent/inbox/spliced' ? (e as EventOf<'agent/inbox/spliced'>).data.inserted : [])
      .filter((m) => m.source.kind === 'resume')
    expect(reinserted).toHaveLength(3)
    expect(givenUp(c.events)).toEqual([{ turn: 4, reason: 're-insertions', runs: 0, unreachedRuns: 0, maxResumeRuns: 1, messages: [id] }])
    expect(verify(c.events).violations).toEqual([])
  })
})
