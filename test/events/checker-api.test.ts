/**
 * LogChecker's public surface beyond `check` (issue 15: mutation showed these untested): its
 * position and open turn/step, the surface seqs and replacement generation, the default retry
 * budget (L16: 5), and that an extension event is invisible to the core invariants both when
 * checked and when applied, even between a compaction/summary and its replacing message (L14).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { EventDraft, LogEvent } from '../../events/envelope.js'
import { LogChecker } from '../../events/invariants/checker.js'
import { defaultRegistry } from '../../events/registry.js'
import { verify } from '../../replay/verify.js'
import { LogWriter, fail, um } from './log-writer.js'

function checked(events: readonly LogEvent[], c = new LogChecker()): LogChecker {
  for (const e of events) {
    expect(c.check(e)).toEqual([])
    c.apply(e)
  }
  return c
}

describe('LogChecker state', () => {
  it('tracks the position, the open turn and step, the surface and the generation', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    w.stepStart(w.claim())
    const open = checked(w.session.events)
    expect({ position: open.position, turn: open.openTurn, step: open.openStep }).toEqual({ position: w.next, turn: 1, step: 1 })
    const userSeq = w.session.events.find((e) => e.type === 'user/message')!.seq
    expect(open.surfaceSeqs()).toEqual([userSeq])
    expect(open.generation).toBe(0)

    w.stream([{ type: 'text', text: 'a' }], 'stop')
    const msgSeq = w.message([{ type: 'text', text: 'a' }], 'stop')
    w.stepEnd({ kind: 'stop' })
    w.turnEnd()
    w.append({ type: 'compaction/start', data: { compactionId: 'k', turn: 1 } })
    w.append({ type: 'compaction/summary', data: { compactionId: 'k', summary: 's', shadowedSeqs: [userSeq] } })
    const sumSeq = w.append({ type: 'user/message', data: { message: um('s', 's', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start: userSeq, end: userSeq }, sourceEventSeqs: [userSeq] }).seq
    w.append({ type: 'compaction/end', data: { compactionId: 'k' } })
    const closed = checked(w.session.events)
    expect({ position: closed.position, turn: closed.openTurn, step: closed.openStep }).toEqual({ position: w.next, turn: null, step: null })
    expect(closed.surfaceSeqs()).toEqual([sumSeq, msgSeq])
    expect(closed.generation).toBe(1)
  })

  it('L16: by default a failure chain may retry 5 times; the sixth attempt is a violation', () => {
    const w = new LogWriter()
    w.send(um('m1'))
    w.turnStart()
    const retry = (attempt: number): EventDraft => ({ type: 'llm/retry', data: { turn: 1, step: w.step, attempt, delayMs: 0, failure: fail('SERVER') } })
    w.failedStep('SERVER', w.claim())
    for (let attempt = 1; attempt <= 5; attempt++) {
      w.append(retry(attempt))
      w.failedStep('SERVER')
    }
    const c = checked(w.session.events)
    expect(c.check({ seq: w.next, time: 0, ...retry(6) } as LogEvent).map((v) => v.invariant)).toEqual(['L16'])
    expect(checked(w.session.events, new LogChecker({ maxRetries: 6 })).check({ seq: w.next, time: 0, ...retry(6) } as LogEvent)).toEqual([])
  })
})

describe('extension events', () => {
  const registry = defaultRegistry.extend().register('acme/note', { data: z.strictObject({ note: z.string() }) })
  const note = (seq: number): LogEvent => ({ seq, time: 0, type: 'acme/note', data: { note: 'hi' } } as unknown as LogEvent)

  function summarised(): { w: LogWriter; userSeq: number } {
    const w = new LogWriter()
    w.simpleTurn('m1')
    const userSeq = w.session.events.find((e) => e.type === 'user/message')!.seq
    w.append({ type: 'compaction/start', data: { compactionId: 'k', turn: 1 } })
    w.append({ type: 'compaction/summary', data: { compactionId: 'k', summary: 's', shadowedSeqs: [userSeq] } })
    return { w, userSeq }
  }

  it('L14: an extension event between compaction/summary and its replacing message breaks nothing', () => {
    const { w, userSeq } = summarised()
    const events: LogEvent[] = [...w.session.events, note(w.next)]
    const reply = { seq: events.length, time: 0, type: 'user/message', data: { message: um('s', 's', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start: userSeq, end: userSeq }, sourceEventSeqs: [userSeq] } as LogEvent
    events.push(reply, { seq: events.length + 1, time: 0, type: 'compaction/end', data: { compactionId: 'k' } } as LogEvent)
    expect(verify(events, { registry })).toEqual({ ok: true, violations: [] })
  })

  it('L14: applying an extension event does not consume the expectation of the replacing message', () => {
    const { w } = summarised()
    const c = checked(w.session.events)
    expect(c.check(note(w.next))).toEqual([])
    c.apply(note(w.next))
    const end = { seq: w.next + 1, time: 0, type: 'compaction/end', data: { compactionId: 'k' } } as LogEvent
    expect(c.check(end).map((v) => v.invariant)).toContain('L14')
  })
})
