/**
 * The transcript's nesting on logs that break it (L4, L11, L14 broken; `report` and `inspect` show
 * such a log beside its violations, so the fold must stay faithful to where each event stands):
 * what is logged after a step or a compaction bracket closed stands after it, never inside it; a
 * `compaction/summary` or `compaction/end` with no bracket open changes nothing; a `step/start`
 * while only a manual compaction bracket is open opens no step. And `findTranscriptMessage` finds
 * messages only: the seq of any other event answers null. Issue 15 part 3: reducers/transcript.ts
 * survivors at its container lookups (`lastOpen`, `openTurn`, the bracket checks), which a valid
 * log never reaches.
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { findTranscriptMessage, foldEvents, type TranscriptTurn } from '../../reducers/index.js'
import { LogBuilder } from './logs.js'

// schema-valid events (the builder validates each), in an order the checker refuses
const builder = () => new LogBuilder()

/** Turn 1, left open after one completed tool step: u a r, step closed. */
function openTurnAfterStep(): LogBuilder {
  const b = builder()
  b.send('question')
  b.startStep(b.startTurn())
  b.runTools(b.respond({ text: 'looking', calls: 1 }))
  b.endStep({ kind: 'tools' })
  return b
}

const turnOf = (events: readonly LogEvent[], i = 0) => foldEvents(events).transcript.items[i] as TranscriptTurn

describe('transcript nesting on broken logs (L4, L14)', () => {
  it('L4: a user/message logged after its step closed stands in the turn after the step, not in the closed step', () => {
    const b = openTurnAfterStep()
    const step = turnOf(b.events).items[0]!
    const before = JSON.stringify(step)
    const e = b.emit({ type: 'user/message', data: { message: b.message('late') }, surfaceOp: 'append' })
    const turn = turnOf(b.events)
    expect(turn.items.map((i) => [i.kind, i.seq])).toEqual([['step', step.seq], ['message', e.seq]])
    expect(JSON.stringify(turn.items[0])).toBe(before)
  })

  it('L14: a prune logged after a compaction bracket closed stands in the turn after the bracket, not in it', () => {
    const b = openTurnAfterStep()
    b.compact(0, 0)
    const bracketBefore = turnOf(b.events).items.at(-1)!
    expect(bracketBefore.kind).toBe('compaction')
    b.prune(2) // the tool result: compaction/prune + its replacing tool/result, outside any bracket
    const turn = turnOf(b.events)
    expect(turn.items.map((i) => i.kind)).toEqual(['step', 'compaction', 'prune', 'message'])
    expect(turn.items[1]).toEqual(bracketBefore)
  })

  it('L14: compaction/summary and compaction/end with no bracket open change nothing in the transcript', () => {
    const b = openTurnAfterStep()
    const before = foldEvents(b.events).transcript
    b.emit({ type: 'compaction/summary', data: { compactionId: 'ghost', summary: 's', shadowedSeqs: [1] } })
    b.emit({ type: 'compaction/end', data: { compactionId: 'ghost', error: { code: 'SUMMARY_FAILED', message: 'no' } } })
    expect(foldEvents(b.events).transcript).toEqual(before)
    // and at the top level, outside any turn
    const idle = builder()
    idle.send('q')
    const top = foldEvents(idle.events).transcript
    idle.emit({ type: 'compaction/summary', data: { compactionId: 'ghost', summary: 's', shadowedSeqs: [] } })
    idle.emit({ type: 'compaction/end', data: { compactionId: 'ghost' } })
    expect(foldEvents(idle.events).transcript).toEqual(top)
  })

  it('L11: a step/start while only a manual compaction bracket is open (no turn) opens no step anywhere', () => {
    const b = builder()
    b.send('q')
    b.emit({ type: 'compaction/start', data: { compactionId: 'c9', turn: 0 } })
    const before = foldEvents(b.events).transcript
    b.emit({ type: 'step/start', data: { turn: 1, step: 1 } })
    expect(foldEvents(b.events).transcript).toEqual(before)
  })
})

describe('findTranscriptMessage', () => {
  it('answers null for the seq of an event that is not a message (turn, step, chunk, header, end)', () => {
    const b = openTurnAfterStep()
    const state = foldEvents(b.events)
    for (const e of b.events) {
      const found = findTranscriptMessage(state.transcript, e.seq)
      if (e.type === 'user/message' || e.type === 'assistant/message' || e.type === 'tool/result') expect(found?.seq).toBe(e.seq)
      else expect(found).toBeNull()
    }
  })
})

describe('history on broken logs (L8)', () => {
  it('L8: an empty assistant/message that replaces a range (only summaries and pruned copies may) hides the range from history and puts nothing in its place', () => {
    const b = openTurnAfterStep()
    const before = foldEvents(b.events).history
    expect(before.seqs).toHaveLength(3) // u a r
    const [u, a, r] = before.seqs as [number, number, number]
    const e = b.emit({
      type: 'assistant/message',
      data: { turn: 1, step: 1, message: { role: 'assistant', content: [] }, finish: 'stop' },
      surfaceOp: { op: 'replace', start: a, end: a },
      sourceEventSeqs: [a],
    } as never)
    const state = foldEvents(b.events)
    expect(state.history.seqs).toEqual([u, r])
    expect(state.history.messages).toEqual([before.messages[0], before.messages[2]])
    expect(state.surface.seqs).toEqual([u, e.seq, r])
    // the replaced range's anchor is kept, so a later replacement still finds its place (order.ts)
    expect(state.history.anchors[e.seq]).toBeDefined()
  })
})
