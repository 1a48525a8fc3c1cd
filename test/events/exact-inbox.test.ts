/**
 * L11 inbox conservation (events/invariants/inbox.ts), one rule at a time, with the exact verdicts
 * (invariant, seq, message); the nearest valid event of each case gives no violation.
 */
import { describe, expect, it } from 'vitest'
import type { EventDraft, SessionEvent } from '../../events/envelope.js'
import { LogWriter, um } from './log-writer.js'
import { InboxState } from '../../events/invariants/inbox.js'
import { TurnState } from '../../events/invariants/structure.js'
import { at, expectAfter, expectClean, expectExactly, forced } from './exact.js'

type SpliceData = Extract<EventDraft, { type: 'agent/inbox/spliced' }>['data']
const splice = (data: SpliceData): EventDraft => ({ type: 'agent/inbox/spliced', data })
const userMsg = (id: string): EventDraft => ({ type: 'user/message', data: { message: um(id) }, surfaceOp: 'append' })
const claimTurn = (n = 1): EventDraft => splice({ target: 'next-turn', start: 0, removedCount: n, inserted: [] })

/** m1 pending (next-turn), turn 1 open. */
function pendingInTurn(): LogWriter {
  const w = new LogWriter()
  w.send(um('m1'))
  w.turnStart()
  return w
}

describe('L11 splices, exact verdicts', () => {
  it('L11: a splice start beyond the list', () => {
    const w = new LogWriter()
    w.send(um('a'))
    expectExactly(w, splice({ target: 'next-turn', start: 2, inserted: [um('b')] }), [['L11', "splice start 2 beyond the next-turn list's length 1"]])
    expectExactly(w, splice({ target: 'next-step', start: 1, inserted: [um('b')] }), [['L11', "splice start 1 beyond the next-step list's length 0"]])
    expectClean(w, splice({ target: 'next-turn', start: 1, inserted: [um('b')] }))
  })

  it('L11: a splice removing past the end of the list', () => {
    const w = new LogWriter()
    w.send(um('a'))
    w.send(um('b'))
    const cancel = (start: number, removedCount: number): EventDraft => splice({ target: 'next-turn', start, removedCount, inserted: [], outcome: 'canceled' })
    expectExactly(w, cancel(1, 2), [['L11', "splice removes 2 from 1, beyond the next-turn list's length 2"]])
    expectExactly(w, cancel(0, 3), [['L11', "splice removes 3 from 0, beyond the next-turn list's length 2"]])
    expectClean(w, cancel(1, 1))
    expectClean(w, cancel(0, 2))
  })

  it('L11: a splice that removes and inserts nothing', () => {
    const w = new LogWriter()
    expectExactly(w, splice({ target: 'next-step', start: 0, inserted: [] }), [['L11', 'a splice that removes and inserts nothing']])
    expectClean(w, splice({ target: 'next-step', start: 0, inserted: [um('a')] }))
  })

  it('L11: a splice inserting one id twice', () => {
    const w = new LogWriter()
    expectExactly(w, splice({ target: 'next-turn', start: 0, inserted: [um('a'), um('b'), um('a')] }), [['L11', 'splice inserts id a twice']])
    expectClean(w, splice({ target: 'next-turn', start: 0, inserted: [um('a'), um('b')] }))
  })

  it('L11: a splice inserting an id pending in either list, unless the splice removes it', () => {
    const w = new LogWriter()
    w.send(um('a'))
    w.send(um('b'), 'next-step')
    expectExactly(w, splice({ target: 'next-turn', start: 1, inserted: [um('b')] }), [['L11', 'splice inserts id b, which is already pending']])
    expectExactly(w, splice({ target: 'next-step', start: 0, inserted: [um('a')] }), [['L11', 'splice inserts id a, which is already pending']])
    // pending in the same list, but not among what this splice removes
    w.send(um('c'))
    expectExactly(w, splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [um('c')], outcome: 'canceled' }), [['L11', 'splice inserts id c, which is already pending']])
    // an edit: a cancel that removes a and inserts its new version
    expectClean(w, splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [um('a', 'edited')], outcome: 'canceled' }))
  })

  it('L11: a splice inserting an id claimed before, or one its own claim removes', () => {
    const w = pendingInTurn()
    w.append(claimTurn())
    expectExactly(w, splice({ target: 'next-step', start: 0, inserted: [um('m1')] }), [['L11', 'splice inserts id m1, which was claimed before']])
    w.send(um('m2'), 'next-step')
    expectExactly(w, splice({ target: 'next-step', start: 0, removedCount: 1, inserted: [um('m2')] }), [['L11', 'splice inserts id m2, which was claimed before']])
    expectClean(w, splice({ target: 'next-step', start: 0, removedCount: 1, inserted: [um('m3')] }))
  })

  it('L11: a claim with no turn open', () => {
    const w = new LogWriter()
    w.send(um('a'))
    expectExactly(w, claimTurn(), [['L11', 'a claim (a splice that removes without outcome) with no turn open']])
    // a cancel between turns is fine
    expectClean(w, splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' }))
  })

  it('L11: a claim not at start 0', () => {
    const w = new LogWriter()
    w.send(um('a'))
    w.send(um('b'))
    w.turnStart()
    expectExactly(w, splice({ target: 'next-turn', start: 1, removedCount: 1, inserted: [] }), [['L11', 'a claim (a splice that removes without outcome) at start 1, not 0']])
    expectClean(w, splice({ target: 'next-turn', start: 1, removedCount: 1, inserted: [], outcome: 'canceled' }))
    expectClean(w, claimTurn())
  })

  it('L11: a claim both out of a turn and not at 0 gives both messages', () => {
    const w = new LogWriter()
    w.send(um('a'))
    w.send(um('b'))
    expectExactly(w, splice({ target: 'next-turn', start: 1, removedCount: 1, inserted: [] }), [
      ['L11', 'a claim (a splice that removes without outcome) with no turn open'],
      ['L11', 'a claim (a splice that removes without outcome) at start 1, not 0'],
    ])
  })
})

describe('L11 user/message against the inbox, exact verdicts', () => {
  it('L11: a user/message whose id is still pending', () => {
    const w = pendingInTurn()
    w.stepStart()
    expectExactly(w, userMsg('m1'), [['L11', 'user/message id m1 is still pending in the inbox']])
  })

  it('L11: a user/message of an id no splice inserted is clean (agent/pre-step may enter one)', () => {
    const w = pendingInTurn()
    w.stepStart()
    expectClean(w, userMsg('fresh'))
  })

  it('L11: a user/message whose id was canceled', () => {
    const w = pendingInTurn()
    w.append(splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' }))
    w.stepStart()
    expectExactly(w, userMsg('m1'), [['L11', 'user/message id m1 was canceled from the inbox, never claimed']])
  })

  it('L11: a canceled id inserted again and claimed may appear', () => {
    const w = pendingInTurn()
    w.append(splice({ target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' }))
    w.append(splice({ target: 'next-turn', start: 0, inserted: [um('m1', 'again')] }))
    w.append(claimTurn())
    w.stepStart()
    expectClean(w, userMsg('m1'))
  })

  it('L11: a user/message claimed in an earlier turn names both turns', () => {
    const w = pendingInTurn()
    w.append(claimTurn())
    w.turnEnd() // the turn ended before its step (a rejected prompt): m1 never appeared
    w.turnStart()
    w.stepStart()
    expectExactly(w, userMsg('m1'), [['L11', 'user/message id m1 was claimed in turn 1, not in the open turn 2']])
  })

  it('L11: a replacing user/message of a claimed id outside any turn names no open turn', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    const first = w.session.events.find((e) => e.type === 'user/message')!.seq
    w.send(um('m2'))
    w.turnStart()
    w.claim()
    w.turnEnd()
    const draft: EventDraft = { type: 'user/message', data: { message: um('m2', 'x', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start: first, end: first }, sourceEventSeqs: [first] }
    expectExactly(w, draft, [['L11', 'user/message id m2 was claimed in turn 2, not in the open turn (none)']])
    expectClean(w, { ...draft, data: { message: um('sum', 'x', { kind: 'compaction' }) } })
  })

  it('L11: a user/message id seen before in the log', () => {
    const w = new LogWriter()
    w.simpleTurn('m1')
    w.turnStart()
    w.stepStart()
    expectExactly(w, userMsg('m1'), [
      ['L11', 'user/message id m1 appears a second time in the log'],
      ['L11', 'user/message id m1 was claimed in turn 1, not in the open turn 2'],
    ])
    expectExactly(w, userMsg('m9'), [])
    w.append(userMsg('m9'))
    expectExactly(w, userMsg('m9'), [['L11', 'user/message id m9 appears a second time in the log']])
  })
})

describe('L11 the lists as the splices leave them', () => {
  it('L11: a splice inserts at its start (before the pending messages), and a claim takes the front', () => {
    const w = new LogWriter()
    w.send(um('a'))
    w.append(splice({ target: 'next-turn', start: 0, inserted: [um('b')] })) // b, a
    w.turnStart()
    w.append(claimTurn()) // claims b
    w.stepStart()
    expectExactly(w, userMsg('a'), [['L11', 'user/message id a is still pending in the inbox']])
    expectClean(w, userMsg('b'))
  })

  it('L11: a splice with a start past the list (applied anyway) inserts at the end', () => {
    const w = new LogWriter()
    w.send(um('a'))
    const events = forced(w.session.events, splice({ target: 'next-turn', start: 5, inserted: [um('b')] }))
    expectAfter(events, splice({ target: 'next-turn', start: 2, inserted: [um('c')] }), [])
    expectAfter(events, splice({ target: 'next-turn', start: 1, removedCount: 1, inserted: [], outcome: 'canceled' }), [])
  })

  it('L11: a cancel removes from the pending set; what it removed may be inserted again', () => {
    const w = new LogWriter()
    w.send(um('a'))
    w.send(um('b'))
    w.append(splice({ target: 'next-turn', start: 1, removedCount: 1, inserted: [], outcome: 'canceled' }))
    expectClean(w, splice({ target: 'next-step', start: 0, inserted: [um('b')] }))
    expectExactly(w, splice({ target: 'next-step', start: 0, inserted: [um('a')] }), [['L11', 'splice inserts id a, which is already pending']])
  })

  it('L11: the two lists are separate', () => {
    const w = new LogWriter()
    w.send(um('a'))
    w.send(um('s'), 'next-step')
    w.turnStart()
    w.append(splice({ target: 'next-step', start: 0, removedCount: 1, inserted: [] }))
    w.stepStart()
    expectClean(w, userMsg('s'))
    expectExactly(w, userMsg('a'), [['L11', 'user/message id a is still pending in the inbox']])
    expectExactly(w, splice({ target: 'next-step', start: 0, removedCount: 1, inserted: [] }), [['L11', "splice removes 1 from 0, beyond the next-step list's length 0"]])
  })
})

describe('L11 InboxState.pending', () => {
  it('L11: pending lists the ids of one list in order, after inserts, cancels and claims', () => {
    const inbox = new InboxState(new TurnState(64, 5))
    const apply = (seq: number, data: SpliceData) => inbox.apply(at(seq, splice(data)) as SessionEvent)
    apply(0, { target: 'next-turn', start: 0, inserted: [um('a'), um('b')] })
    apply(1, { target: 'next-turn', start: 1, inserted: [um('c')] })
    apply(2, { target: 'next-step', start: 0, inserted: [um('s')] })
    expect(inbox.pending('next-turn')).toEqual(['a', 'c', 'b'])
    expect(inbox.pending('next-step')).toEqual(['s'])
    apply(3, { target: 'next-turn', start: 1, removedCount: 1, inserted: [], outcome: 'canceled' })
    apply(4, { target: 'next-turn', start: 0, removedCount: 1, inserted: [] })
    expect(inbox.pending('next-turn')).toEqual(['b'])
  })
})
