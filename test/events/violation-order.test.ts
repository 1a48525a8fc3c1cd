/**
 * The checker reports the violations of one event ordered by invariant number, whichever module
 * found them first (issue 15: checker.ts's sort survived mutation). L8 (surface rules) is found by
 * the surface module, which runs after the step-content module that finds L10, so an event breaking
 * both must still come out as [L8, L10].
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { LogChecker } from '../../events/invariants/checker.js'
import { verify } from '../../replay/verify.js'
import { LogWriter, toolBlock, um } from './log-writer.js'

function prefix(): LogEvent[] {
  const w = new LogWriter()
  w.send(um('m1'))
  w.turnStart()
  w.stepStart(w.claim())
  w.stream([toolBlock('a')], 'max-tokens')
  w.message([toolBlock('a')], 'max-tokens')
  return [...w.session.events]
}

/** A tool/call after a max-tokens message (L10) that also carries a surfaceOp (L8). */
function badCall(seq: number): LogEvent {
  return { seq, time: 0, type: 'tool/call', data: { turn: 1, step: 1, callId: 'a', name: 'echo', arguments: '{}' }, surfaceOp: 'append' } as LogEvent
}

describe('violation order', () => {
  it('L8, L10: one event breaking two invariants reports them by invariant number', () => {
    const events = prefix()
    const c = new LogChecker()
    for (const e of events) {
      expect(c.check(e)).toEqual([])
      c.apply(e)
    }
    const v = c.check(badCall(events.length))
    expect(v.map((x) => x.invariant)).toEqual(['L8', 'L10'])
    expect(v.every((x) => x.seq === events.length)).toBe(true)
  })

  it('L1, L8, L10: a wrong seq comes first; verify reports the same order', () => {
    const events = prefix()
    const r = verify([...events, badCall(events.length + 5)])
    expect(r.violations.map((x) => [x.invariant, x.seq])).toEqual([['L1', events.length], ['L8', events.length], ['L10', events.length]])
  })
})
