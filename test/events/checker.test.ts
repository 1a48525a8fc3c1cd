/**
 * The LogChecker and verify beyond single refusals: L1 by position, purity of `check`, best-effort
 * continuation after a violation, schema failures, extension events, and a fuzz of schema-valid
 * (but mostly invariant-breaking) event sequences that must never make the checker throw.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { LogChecker } from '../../events/invariants/checker.js'
import type { Violation } from '../../events/invariants/types.js'
import { defaultRegistry } from '../../events/registry.js'
import { verify } from '../../replay/verify.js'
import { z } from 'zod'
import { LogWriter, expectRefused, text, um } from './log-writer.js'
import { fcRuns } from '../fc-runs.js'

/** A valid two-turn log, as plain events. */
function validLog(): LogEvent[] {
  const w = new LogWriter()
  w.simpleTurn('m1')
  w.simpleTurn('m2')
  return [...w.session.events]
}
const clone = <T>(x: T): T => structuredClone(x) as T

describe('L1 seq == index', () => {
  it('L1: an event whose seq is not its position is reported at its position; later events are judged by position', () => {
    const events = clone(validLog()) as { seq: number }[]
    events[4]!.seq = 40
    const r = verify(events)
    expect(r.violations).toEqual([{ invariant: 'L1', seq: 4, message: expect.stringContaining('40') }])
  })

  it('L1: LogChecker.check reports a wrong seq and apply still advances', () => {
    const c = new LogChecker()
    const e = { seq: 1, time: 0, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [um('a')] } } as LogEvent
    expect(c.check(e).map((v) => v.invariant)).toEqual(['L1'])
    c.apply(e)
    expect(c.position).toBe(1)
    expect(c.check({ ...e, seq: 1, data: { target: 'next-turn', start: 1, inserted: [um('b')] } } as LogEvent)).toEqual([])
  })

  it('L1: a Session prefix with a wrong seq is refused before the checker (BAD_SEQ)', async () => {
    const { Session } = await import('../../events/session.js')
    const events = clone(validLog()) as { seq: number }[]
    events[2]!.seq = 7
    expect(() => new Session({ id: 'x', prefix: events as LogEvent[] })).toThrow(/BAD_SEQ/)
  })
})

describe('check is pure', () => {
  it('L9: a chunk refused for another invariant does not advance the stream grammar', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    // fits the grammar, but names step 2 (L4): check pushed it into the grammar, apply never ran
    expectRefused(w, { type: 'assistant/chunk', data: { turn: 1, step: 2, chunk: { type: 'block-start', index: 0, blockType: 'text' } } }, 'L4')
    w.chunk({ type: 'block-start', index: 0, blockType: 'text' }) // not "started twice"
    w.chunk({ type: 'block-end', index: 0 })
    expectRefused(w, { type: 'assistant/chunk', data: { turn: 1, step: 3, chunk: { type: 'finish', reason: 'stop' } } }, 'L4')
    w.chunk({ type: 'finish', reason: 'stop' }) // not "after finish"
    w.message([text('')], 'stop')
  })

  it('L1–L16: check called twice gives the same answer and changes nothing', () => {
    const events = validLog()
    const c = new LogChecker()
    for (const e of events) {
      const a = c.check(e)
      const b = c.check(e)
      expect(b).toEqual(a)
      expect(a).toEqual([])
      c.apply(e)
    }
  })
})

describe('verify', () => {
  it('L5, L12: verify keeps going after a violation and reports each in log order', () => {
    const w = new LogWriter({})
    w.send(um('m1'))
    w.turnStart()
    w.toolStep(['a'], w.claim())
    const events = clone([...w.session.events]) as LogEvent[]
    const resultAt = events.findIndex((e) => e.type === 'tool/result')
    const [removed] = events.splice(resultAt, 1)
    events.forEach((e, i) => ((e as { seq: number }).seq = i))
    events.push({ seq: events.length, time: 0, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } } as LogEvent)
    expect(removed?.type).toBe('tool/result')
    const r = verify(events)
    expect(r.ok).toBe(false)
    expect(r.violations.map((v) => [v.invariant, v.seq])).toEqual([['L5', resultAt], ['L12', events.length - 1]])
  })

  it('SCHEMA: a schema failure names the field, is skipped by the checker, and still counts its position for L1', () => {
    const events = clone(validLog()) as { seq: number; data: Record<string, unknown> }[]
    const i = events.findIndex((e) => (e as unknown as LogEvent).type === 'assistant/message')
    events[i]!.data.finish = 'done'
    const r = verify(events)
    // skipping the message breaks nothing else, and no later event is off by one (L1)
    expect(r.violations).toEqual([
      { invariant: 'SCHEMA', seq: i, field: 'data.finish', message: expect.stringContaining('data.finish') },
    ])
  })

  it('SCHEMA: lossy values (-0) are schema failures', () => {
    const events = clone(validLog()) as { data: Record<string, unknown> }[]
    events[0]!.data.start = -0
    const r = verify(events)
    expect(r.violations[0]).toMatchObject({ invariant: 'SCHEMA', seq: 0, field: 'data.start' })
  })

  it('L1–L16: a plugin-registered event type is ignored by the checker except for L1', () => {
    const registry = defaultRegistry.extend().register('acme/note', { data: z.strictObject({ note: z.string() }) })
    const events = clone(validLog()) as LogEvent[]
    const at = events.findIndex((e) => e.type === 'step/start')
    events.splice(at, 0, { seq: at, time: 0, type: 'acme/note', data: { note: 'hi' } })
    events.forEach((e, i) => ((e as { seq: number }).seq = i))
    // the citations after the insert moved by one: rebuild them
    for (const e of events) {
      if (e.sourceEventSeqs) (e as unknown as { sourceEventSeqs: number[] }).sourceEventSeqs = e.sourceEventSeqs.map((s) => (s >= at ? s + 1 : s))
    }
    expect(verify(events, { registry })).toEqual({ ok: true, violations: [] })
    expect(verify(events).violations.map((v) => v.invariant)).toEqual(['SCHEMA'])
  })

  it('L12: verify passes its checker options on (maxStepsPerTurn)', () => {
    const w = new LogWriter({ maxStepsPerTurn: 1 })
    w.send(um('m1'))
    w.turnStart()
    w.toolStep(['a'], w.claim())
    w.turnEnd({ kind: 'step-limit' })
    const events = [...w.session.events]
    expect(verify(events, { maxStepsPerTurn: 1 }).ok).toBe(true)
    expect(verify(events).violations.map((v) => v.invariant)).toEqual(['L12'])
  })
})

// ───────────── fuzz: schema-valid events in any order never make the checker throw ─────────────

const small = fc.integer({ min: 1, max: 3 })
const seqRef = fc.integer({ min: 0, max: 30 })
const msgId = fc.constantFrom('a', 'b', 'c', 'd')
const callId = fc.constantFrom('c1', 'c2', 'c3')
const failure = fc.record({ code: fc.constantFrom('SERVER', 'RATE_LIMIT'), message: fc.constant('x') })
const user = msgId.chain((id) => fc.constant(um(id)))
const surfaceOp = fc.oneof(fc.constant('append' as const), fc.record({ op: fc.constant('replace' as const), start: seqRef, end: seqRef }))
const sources = fc.option(fc.array(seqRef, { maxLength: 4 }), { nil: undefined })
const chunk = fc.oneof(
  fc.record({ type: fc.constant('block-start'), index: fc.nat(2), blockType: fc.constantFrom('text', 'reasoning', 'tool-call') }),
  fc.record({ type: fc.constant('text-delta'), index: fc.nat(2), text: fc.constant('t') }),
  fc.record({ type: fc.constant('reasoning-delta'), index: fc.nat(2), text: fc.constant('r') }),
  fc.record({ type: fc.constant('tool-call-delta'), index: fc.nat(2), id: callId, argumentsDelta: fc.constant('{}') }),
  fc.record({ type: fc.constant('block-end'), index: fc.nat(2) }),
  fc.record({ type: fc.constant('usage'), usage: fc.constant({ inputTokens: 1, outputTokens: 1 }) }),
  fc.record({ type: fc.constant('finish'), reason: fc.constantFrom('stop', 'tool-calls', 'max-tokens') }),
  fc.record({ type: fc.constant('finish'), reason: fc.constantFrom('error', 'aborted'), failure }),
)
const block = fc.oneof(callId.map((id) => ({ type: 'tool-call', id, name: 'echo', arguments: '{}' })), fc.constant(text('x')))
const turnEndReason = fc.oneof(
  ...['completed', 'max-tokens', 'blocked', 'step-limit', 'interrupted', 'forked'].map((kind) => fc.constant({ kind })),
  fc.constant({ kind: 'aborted', cause: { kind: 'user' } }),
  failure.map((f) => ({ kind: 'error', failure: f })),
)
const outcome = fc.oneof(
  ...['tools', 'stop', 'concluded', 'max-tokens', 'aborted'].map((kind) => fc.constant({ kind })),
  failure.map((f) => ({ kind: 'failed', failure: f })),
)
type Draft = { type: string; data: unknown; surfaceOp?: unknown; sourceEventSeqs?: number[]; ignorable?: true }
const withSurface = (type: string, data: fc.Arbitrary<unknown>): fc.Arbitrary<Draft> =>
  fc.record({ data, surfaceOp: fc.option(surfaceOp, { nil: undefined }), sourceEventSeqs: sources }).map((r) => ({ type, ...r }))
const plain = (type: string, data: fc.Arbitrary<unknown>): fc.Arbitrary<Draft> => data.map((d) => ({ type, data: d }))

const draft: fc.Arbitrary<Draft> = fc.oneof(
  plain('turn/start', fc.record({ turn: small, cause: fc.option(fc.record({ kind: fc.constant('retry'), of: small }), { nil: undefined }) })),
  plain('turn/end', fc.record({ turn: small, reason: turnEndReason })),
  plain('step/start', fc.record({ turn: small, step: small })),
  plain('step/end', fc.record({ turn: small, step: small, outcome })),
  withSurface('user/message', fc.record({ message: fc.oneof(user, msgId.map((id) => um(id, 's', { kind: 'compaction' }))) })),
  plain('assistant/chunk', fc.record({ turn: small, step: small, chunk })),
  withSurface('assistant/message', fc.record({
    turn: small, step: small, message: fc.record({ role: fc.constant('assistant'), content: fc.array(block, { maxLength: 3 }) }),
    finish: fc.constantFrom('stop', 'tool-calls', 'max-tokens'), interrupted: fc.option(fc.constant(true as const), { nil: undefined }),
  })),
  plain('tool/call', fc.record({ turn: small, step: small, callId, name: fc.constant('echo'), arguments: fc.constant('{}') })),
  withSurface('tool/result', callId.chain((id) => fc.record({
    turn: small, step: small, callId: fc.constant(id), message: fc.constant({ role: 'tool', callId: id, content: [text('r')] }),
  }))),
  plain('request/header', fc.constant({ reason: 'initial', config: { model: 'm' }, system: '', tools: [] })),
  plain('agent/inbox/spliced', fc.record({
    target: fc.constantFrom('next-turn', 'next-step'), start: fc.nat(3),
    removedCount: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }), inserted: fc.array(user, { maxLength: 2 }),
    outcome: fc.option(fc.constant('canceled'), { nil: undefined }),
  })),
  plain('llm/retry', fc.record({ turn: small, step: small, attempt: small, delayMs: fc.constant(0), failure })),
  plain('compaction/start', fc.record({ compactionId: fc.constantFrom('k1', 'k2'), turn: fc.nat(3) })),
  plain('compaction/summary', fc.record({ compactionId: fc.constantFrom('k1', 'k2'), summary: fc.constant('s'), shadowedSeqs: fc.array(seqRef, { maxLength: 2 }) })),
  plain('compaction/prune', fc.record({ callId, shadowedSeq: seqRef, originalChars: fc.nat(10) })),
  plain('compaction/end', fc.record({ compactionId: fc.constantFrom('k1', 'k2'), error: fc.option(fc.constant({ code: 'X', message: 'x' }), { nil: undefined }) })),
  plain('session/end-seed', fc.constant({})),
  fc.constant({ type: 'acme/whatever', data: { x: 1 }, ignorable: true as const }),
)

/** Schema-valid events with seq = index (drafts that do not validate are dropped). */
function toEvents(drafts: Draft[]): LogEvent[] {
  const out: LogEvent[] = []
  for (const d of drafts) {
    const raw: Record<string, unknown> = { seq: out.length, time: 0, ...d }
    for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k]
    try {
      out.push(defaultRegistry.validate(raw))
    } catch {
      // not schema-valid (cannot happen for the shapes above, but the checker only promises schema-valid input)
    }
  }
  return out
}

describe('fuzz', () => {
  it('L1–L16: the checker never throws on schema-valid events, whatever their order', () => {
    fc.assert(
      fc.property(fc.array(draft, { maxLength: 80 }), (drafts) => {
        const events = toEvents(drafts)
        expect(events.length).toBe(drafts.length)
        const c = new LogChecker({ maxStepsPerTurn: 3, maxRetries: 2 })
        for (const e of events) {
          for (const v of c.check(e)) expect(v.invariant).toMatch(/^L([1-9]|1[0-6])$/)
          c.apply(e)
        }
      }),
      { numRuns: fcRuns(400) },
    )
  })

  it('L1–L16: extra check calls between applies change no verdict (check is pure)', () => {
    fc.assert(
      fc.property(fc.array(draft, { maxLength: 60 }), fc.array(draft, { maxLength: 60 }), (drafts, probes) => {
        const events = toEvents(drafts)
        const probeEvents = toEvents(probes)
        const plainRun = new LogChecker()
        const probed = new LogChecker()
        const a: Violation[][] = []
        const b: Violation[][] = []
        events.forEach((e, i) => {
          a.push(plainRun.check(e))
          plainRun.apply(e)
          const p = probeEvents[i]
          if (p) probed.check({ ...p, seq: i } as LogEvent)
          b.push(probed.check(e))
          if (p) probed.check({ ...p, seq: i } as LogEvent)
          probed.apply(e)
        })
        expect(b).toEqual(a)
      }),
      { numRuns: fcRuns(300) },
    )
  })

  it('SCHEMA: verify never throws on arbitrary JSON values or on random field mutations of a valid log', () => {
    const base = validLog()
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 5 }), fc.array(fc.tuple(fc.nat(), fc.constantFrom('seq', 'type', 'data', 'surfaceOp', 'sourceEventSeqs'), fc.jsonValue())), (junk, edits) => {
        const events = clone(base) as unknown as Record<string, unknown>[]
        for (const [i, k, v] of edits) events[i % events.length]![k] = v
        const r = verify([...events, ...junk])
        if (edits.length === 0 && junk.length === 0) expect(r.ok).toBe(true)
        for (const v of r.violations) expect(v.invariant).toMatch(/^(SCHEMA|L([1-9]|1[0-6]))$/)
        if (junk.length > 0) expect(r.ok).toBe(false)
      }),
      { numRuns: fcRuns(300) },
    )
  })
})
