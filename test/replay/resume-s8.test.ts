/**
 * docs/spec/lifecycle.md §8 "Resume answers every accepted message", and issue 9 item 8 (hooks on resume).
 * Crashes are simulated without timing: a model or hook that never settles, and the run is taken
 * as it stands once the test knows (explicit signal) the agent is stuck there.
 */
import fc from 'fast-check'
import { z } from 'zod'
import { describe, expect, it } from 'vitest'
import { createAgent, type TurnlogAgent } from '../../agent/agent.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel, type ModelAdapter } from '../../models/index.js'
import { memoryStore } from '../../stores/memory.js'
import { inboxReducer } from '../../reducers/inbox.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import { planResume } from '../../replay/resume-plan.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { poisonModel } from './given-up-log.js'

const text = (e: LogEvent): string => ((e.data as any).message.content[0]?.text as string) ?? ''


function stuck(): { promise: Promise<void>; signal: () => void } {
  let signal!: () => void
  const promise = new Promise<void>((r) => (signal = r))
  return { promise, signal }
}

let idn = 0
const ids = () => `id${++idn}`

describe('§8: messages claimed and never entered are re-inserted', () => {
  it('L11 §8.1: a prompt claimed by a turn that crashed inside agent/pre-step is re-inserted (new id, source resume) and answered by an ordinary turn', async () => {
    const hang = stuck()
    const a = createAgent({
      model: scriptedModel(() => ({ text: 'ok' })), ids,
      hooks: { 'agent/pre-step': async () => { hang.signal(); return new Promise(() => {}) } },
    })
    const id = a.followup('question')
    await hang.promise
    const crashed = [...a.events]
    const plan = planResume([...crashed, { seq: crashed.length, time: 0, type: 'turn/end', data: { turn: 1, reason: { kind: 'interrupted' } } } as LogEvent])
    expect(plan).toMatchObject({ interrupted: 1, rerunOf: null, limited: null })
    expect(plan.reinsert.map((m) => m.id)).toEqual([id])

    const b = await resumeAgent({ log: crashed, model: scriptedModel(() => ({ text: 'answer' })), ids })
    await b.whenIdle()
    const after = b.events.slice(crashed.length)
    const splice = after.find((e) => e.type === 'agent/inbox/spliced') as EventOf<'agent/inbox/spliced'>
    expect(splice.data).toMatchObject({ target: 'next-turn', start: 0 })
    expect(splice.data.inserted).toHaveLength(1)
    const re = splice.data.inserted[0]!
    expect(re.id).not.toBe(id)
    expect(re.source).toEqual({ kind: 'resume', of: id })
    expect(re.content).toEqual([{ type: 'text', text: 'question' }])
    // nothing of turn 1 was logged, so the re-inserted prompt wakes an ordinary turn (§8.3)
    expect(after.filter((e) => e.type === 'turn/start').map((e) => e.data)).toEqual([{ turn: 2 }])
    const um = after.find((e) => e.type === 'user/message') as EventOf<'user/message'>
    expect(um.data.message.id).toBe(re.id)
    expect(after.at(-1)?.data).toEqual({ turn: 2, reason: { kind: 'completed' } })
    expect(verify(b.events).ok).toBe(true)
  })

  it('L11 L13 §8.2: a steer claimed after tools and never entered is re-inserted; the resume turn answers the tool results; the steer gets its own turn', async () => {
    const hang = stuck()
    let proposals = 0
    const tool = defineTool({ name: 't', description: 't', parameters: z.object({}), execute: async () => ({ ok: true }) })
    const a = createAgent({
      model: scriptedModel([{ toolCalls: [{ name: 't', args: {} }] }, { text: 'never' }]), ids, tools: [tool as AnyTool],
      hooks: {
        'agent/pre-step': async (p, next) => {
          if (++proposals === 2) {
            hang.signal()
            return new Promise(() => {})
          }
          return next()
        },
        'tools/post-execute': async (_p, next) => {
          a.steer('also this')
          return next()
        },
      },
    })
    a.followup('use the tool')
    await hang.promise
    const crashed = [...a.events]
    const b = await resumeAgent({ log: crashed, model: scriptedModel(() => ({ text: 'done' })), ids })
    await b.whenIdle()
    const after = b.events.slice(crashed.length)
    expect(after.filter((e) => e.type === 'turn/start').map((e) => e.data)).toEqual([
      { turn: 2, cause: { kind: 'resume', of: 1, maxResumeRuns: 3 } }, { turn: 3 },
    ])
    const ums = after.filter((e) => e.type === 'user/message') as EventOf<'user/message'>[]
    expect(ums.map((e) => [e.data.message.source, text(e)])).toEqual([[{ kind: 'resume', of: expect.any(String) }, 'also this']])
    expect(after.filter((e) => e.type === 'turn/end').map((e) => (e.data as any).reason.kind)).toEqual(['interrupted', 'completed', 'completed'])
    expect(verify(b.events).ok).toBe(true)
  })
})

describe('§8 poison: maxResumeRuns bounds re-runs', () => {
  it('L13 §8: a turn that crashes every time is re-run maxResumeRuns (3) times, then RESUME_LIMIT and the session goes on', async () => {
    let log: readonly LogEvent[] = []
    {
      const hang = stuck()
      const a = createAgent({ model: poisonModel(hang.signal), ids })
      a.followup('poison pill')
      await hang.promise
      log = [...a.events]
    }
    const errors: string[] = []
    for (let round = 1; round <= 3; round++) {
      const hang = stuck()
      const b = await resumeAgent({ log, model: poisonModel(hang.signal), ids })
      await hang.promise
      log = [...b.events]
      const starts = log.filter((e) => e.type === 'turn/start').map((e) => e.data)
      expect(starts.at(-1)).toEqual({ turn: round + 1, cause: { kind: 'resume', of: round, maxResumeRuns: 3 } })
    }
    const c = await resumeAgent({
      log, model: poisonModel(() => { throw new Error('must not be re-run') }), ids,
      hooks: { 'agent/error': (e) => errors.push(`${(e.error as any).code}@${e.where}`) },
    })
    await c.whenIdle()
    expect(errors).toEqual(['RESUME_LIMIT@resume'])
    expect(c.events.filter((e) => e.type === 'turn/start').length).toBe(4)
    c.followup('something else')
    await c.whenIdle()
    expect(c.events.at(-1)?.data).toEqual({ turn: 5, reason: { kind: 'completed' } })
    expect(verify(c.events).ok).toBe(true)
  })

  it('L11 §8: a prompt whose turn crashes before it is entered is re-inserted at most maxResumeRuns × 3 times (amended §8: it never reached a request)', async () => {
    const preStepHang = (signal: () => void) => ({
      'agent/pre-step': async () => { signal(); return new Promise<never>(() => {}) },
    })
    let log: readonly LogEvent[] = []
    {
      const hang = stuck()
      const a = createAgent({ model: scriptedModel(() => ({ text: 'ok' })), ids, hooks: preStepHang(hang.signal) })
      a.followup('poison at claim')
      await hang.promise
      log = [...a.events]
    }
    for (let round = 1; round <= 6; round++) {
      const hang = stuck()
      await resumeAgent({ log, model: scriptedModel(() => ({ text: 'ok' })), ids, hooks: preStepHang(hang.signal), maxResumeRuns: 2 }).then((b) => hang.promise.then(() => (log = [...b.events])))
    }
    const errors: unknown[] = []
    const c = await resumeAgent({ log, model: scriptedModel(() => ({ text: 'ok' })), ids, maxResumeRuns: 2, hooks: { 'agent/error': (e) => errors.push(e.error) } })
    await c.whenIdle()
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatchObject({ code: 'RESUME_LIMIT' })
    const reinserted = c.events.flatMap((e) => e.type === 'agent/inbox/spliced' ? (e as EventOf<'agent/inbox/spliced'>).data.inserted : [])
      .filter((m) => m.source.kind === 'resume')
    expect(reinserted).toHaveLength(6)
    expect(verify(c.events, { maxResumeRuns: 2 }).ok).toBe(true)
  })
})

describe('hooks on resume (issue 9 item 8)', () => {
  it('§8: with autoStart: false a pre-step listener added before wake() rejects the resumed prompt; the model is never called', async () => {
    const hang = stuck()
    const a = createAgent({ model: poisonModel(hang.signal), ids })
    a.followup('poison: forbidden request')
    await hang.promise
    const crashed = [...a.events]
    let calls = 0
    const model: ModelAdapter = { info: { name: 'm' }, stream: (r, s) => { calls++; return scriptedModel(() => ({ text: 'x' })).stream(r, s) } }
    const b = await resumeAgent({ log: crashed, model, ids, autoStart: false })
    expect(b.status).toBe('idle')
    const seen: boolean[] = []
    b.on('agent/pre-step', async (p) => {
      seen.push(p.resume)
      return { kind: 'reject' }
    })
    expect(b.wake()).toBe(true)
    await b.whenIdle()
    expect(calls).toBe(0)
    expect(seen).toEqual([true])
    expect(b.events.at(-2)?.data).toEqual({ turn: 2, cause: { kind: 'resume', of: 1, maxResumeRuns: 3 } })
    expect(b.events.at(-1)?.data).toEqual({ turn: 2, reason: { kind: 'blocked' } })
    expect(verify(b.events).ok).toBe(true)
  })

  it('autoStart: false from a store: nothing runs until wake(); the re-insertion is already durable', async () => {
    const store = memoryStore()
    const hang = stuck()
    const a = createAgent({ model: scriptedModel(() => ({ text: 'ok' })), ids, hooks: { 'agent/pre-step': async () => { hang.signal(); return new Promise(() => {}) } } })
    a.followup('hello')
    await hang.promise
    await store.create('s', { createdAt: 0 })
    const w = await store.open('s', 'write')
    await w.append([...a.events], { expectedSeq: 0 })
    await w.close()
    const b = await resumeAgent({ store, sessionId: 's', model: scriptedModel(() => ({ text: 'hi' })), ids, autoStart: false })
    expect(b.status).toBe('idle')
    expect(b.inbox.nextTurn.map((m) => m.source)).toEqual([{ kind: 'resume', of: expect.any(String) }])
    await b.flush()
    expect(b.wake()).toBe(true)
    await b.whenIdle()
    await b.flush()
    await b.dispose()
    const r = await store.open('s', 'read')
    const events: LogEvent[] = []
    for await (const e of r.events()) events.push(e)
    await r.close()
    expect(events.at(-1)?.data).toEqual({ turn: 2, reason: { kind: 'completed' } })
    expect(verify(events).ok).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------
// The property: crash at any event boundary, repair, resume (repeatedly): every acknowledged
// followup is answered.

type Cmd = { kind: 'followup' | 'steer'; text: string } | { kind: 'idle' }

/** Records a session: followups and steers, a model that calls tools on some requests. */
async function record(cmds: Cmd[], toolSteps: boolean[]): Promise<LogEvent[]> {
  let n = 0
  const tool = defineTool({ name: 't', description: 't', parameters: z.object({}), isConcurrencySafe: () => true, execute: async () => ({ ok: 1 }) })
  const a = createAgent({
    ids: () => `r${++n}`, tools: [tool as AnyTool], clock: () => 1,
    model: scriptedModel((req) => {
      const k = req.messages.length
      return toolSteps[k % toolSteps.length] && req.messages[k - 1]?.role !== 'tool'
        ? { toolCalls: [{ name: 't', args: {} }, { name: 't', args: {} }] } : { text: `answer ${k}` }
    }),
  })
  for (const c of cmds) {
    if (c.kind === 'idle') await a.whenIdle()
    else a[c.kind](c.text)
  }
  await a.whenIdle()
  return [...a.events]
}

/**
 * The acknowledged followups, by id: every message a send put in next-turn, and every steer (a
 * next-step send) a turn claimed. A steer still pending at the crash is not owed a turn: in the log
 * it is a pending next-step item like an inject, and those never open a turn (docs/spec/lifecycle.md §3.8).
 */
function acknowledged(events: readonly LogEvent[]): string[] {
  const out: string[] = []
  const inbox = inboxReducer.initial()
  for (const e of events) {
    if (e.type !== 'agent/inbox/spliced') continue
    const d = (e as EventOf<'agent/inbox/spliced'>).data
    const removed = d.removedCount ?? 0
    if (d.outcome === undefined && removed === 0 && d.target === 'next-turn') {
      for (const m of d.inserted) if (m.source.kind === 'user') out.push(m.id)
    }
    if (d.outcome === undefined && removed > 0 && d.target === 'next-step') {
      for (const m of inbox.nextStep.slice(d.start, d.start + removed)) if (m.source.kind === 'user') out.push(m.id)
    }
    inboxReducer.apply(inbox, e)
  }
  return out
}

/** True when a user/message of `id` (or of a re-insertion of it) is answered by a complete assistant/message in its turn's chain. */
function answered(events: readonly LogEvent[], id: string): boolean {
  const origin = new Map<string, string>()
  const root = new Map<number, number>()
  let turn = 0
  const um: Array<{ seq: number; root: number }> = []
  const answers: Array<{ seq: number; root: number }> = []
  for (const e of events) {
    if (e.type === 'agent/inbox/spliced') {
      for (const m of (e as EventOf<'agent/inbox/spliced'>).data.inserted) {
        origin.set(m.id, m.source.kind === 'resume' ? origin.get(m.source.of) ?? m.source.of : m.id)
      }
    } else if (e.type === 'turn/start') {
      const d = (e as EventOf<'turn/start'>).data
      turn = d.turn
      root.set(turn, d.cause ? root.get(d.cause.of) ?? d.cause.of : turn)
    } else if (e.type === 'user/message') {
      const m = (e as EventOf<'user/message'>).data.message
      if ((origin.get(m.id) ?? m.id) === id) um.push({ seq: e.seq, root: root.get(turn)! })
    } else if (e.type === 'assistant/message' && !(e as EventOf<'assistant/message'>).data.interrupted) {
      answers.push({ seq: e.seq, root: root.get(turn)! })
    }
  }
  return um.some((u) => answers.some((a) => a.seq > u.seq && a.root === u.root))
}

describe('§8 property: crash at random event boundaries, repair, resume', () => {
  it('L11 L13 P5 §8: every acknowledged followup (and claimed steer) gets answered (a user/message followed by a complete answer in its turn chain), over 1-3 crashes', async () => {
    const cmd = fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom('followup' as const, 'steer' as const), text: fc.constantFrom('a', 'b', 'c') }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'idle' as const }) },
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(cmd, { minLength: 1, maxLength: 6 }), fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat({ max: 1_000_000 }), { minLength: 1, maxLength: 3 }),
        async (cmds, toolSteps, cuts) => {
          const full = await record(cmds, toolSteps)
          let log: readonly LogEvent[] = full.slice(0, cuts[0]! % (full.length + 1))
          const acked = acknowledged(log)
          let n = 0
          for (let round = 0; round < cuts.length; round++) {
            const store = memoryStore()
            await store.create('s', { createdAt: 0 })
            const w = await store.open('s', 'write')
            if (log.length) await w.append([...log], { expectedSeq: 0 })
            await w.close()
            const b = await resumeAgent({ store, sessionId: 's', model: scriptedModel(() => ({ text: 'resumed' })), ids: () => `x${round}-${++n}` }) as TurnlogAgent
            await b.whenIdle()
            await b.dispose()
            const done = [...b.events]
            expect(verify(done).ok).toBe(true)
            // the next round crashes somewhere in what this resume wrote
            const next = cuts[round + 1]
            log = next === undefined ? done : done.slice(0, log.length + (next % (done.length - log.length + 1)))
          }
          for (const id of acked) expect(answered(log, id), `${id} in ${JSON.stringify(log.map((e) => e.type))}`).toBe(true)
        },
      ),
      { numRuns: 80 },
    )
  })
})
