/** Surface replacement semantics (docs/spec/events.md "The surface"; L8, L14, L15): compaction summaries over
 * a range, pruned tool results, empty assistant messages at a range boundary, replacements of
 * replacements — checked on the surface, the history and the transcript together. */
import { describe, expect, it } from 'vitest'
import type { LogEvent, ModelMessage } from '../../events/index.js'
import {
  createLiveProjection, findTranscriptMessage, type ReplayState, type TranscriptCompaction, type TranscriptTurn,
} from '../../reducers/index.js'
import { replay } from '../../replay/replay.js'
import { LogBuilder } from './logs.js'

const msg = (events: readonly LogEvent[], seq: number) => (events[seq]!.data as { message: ModelMessage }).message
const lastSeq = (b: LogBuilder, type: string) => b.events.findLast((e) => e.type === type)!.seq

/** Turn 1: a question answered by text. Turn 2 (left open): a question, two tool calls, then text.
 * Surface: u1 a1 u2 a2 r0 r1 a3. */
function twoTurns(): { b: LogBuilder; s: number[] } {
  const b = new LogBuilder()
  b.send('first question')
  b.startStep(b.startTurn())
  b.respond({ text: 'first answer' })
  b.endStep({ kind: 'stop' })
  b.endTurn({ kind: 'completed' })
  b.send('second question')
  b.startStep(b.startTurn())
  b.runTools(b.respond({ text: 'let me look', calls: 2 }))
  b.endStep({ kind: 'tools' })
  b.startStep([])
  b.respond({ text: 'second answer' })
  b.endStep({ kind: 'stop' })
  return { b, s: b.surface.map((n) => n.seq) }
}

function check(events: LogEvent[]): ReplayState {
  const state = replay(events)
  const live = createLiveProjection(events)
  expect(live.state).toEqual(state) // every scenario here also checks P1
  // history = surface projected to messages, minus empty assistant messages
  const projected = state.surface.seqs.filter((q) => {
    const e = events[q]!
    return !(e.type === 'assistant/message' && msg(events, q).content.length === 0)
  })
  expect(state.history.seqs).toEqual(projected)
  expect(state.history.messages).toEqual(projected.map((q) => msg(events, q)))
  expect(state.transcript.surface).toEqual(state.surface.seqs)
  return state
}

function transcriptOf(state: ReplayState, seq: number) {
  const m = findTranscriptMessage(state.transcript, seq)
  if (!m) throw new Error(`no transcript message at seq ${seq}`)
  return m
}

describe('replace: a compaction summary over a range (L8, L14)', () => {
  it('replaces the inclusive range by the summary seq, hides it from history, marks it compacted in the transcript', () => {
    const { b, s } = twoTurns()
    const [u1, a1, u2, a2, r0, r1, a3] = s as [number, number, number, number, number, number, number]
    b.compact(0, 2) // u1 a1 u2
    const sum = lastSeq(b, 'user/message')
    const state = check(b.events)
    expect(state.surface).toEqual({ seqs: [sum, a2, r0, r1, a3], generation: 1, anchors: { [sum]: u1 } })
    expect(state.history.messages[0]).toBe(msg(b.events, sum))
    for (const q of [u1, a1, u2]) {
      expect(transcriptOf(state, q)).toMatchObject({ replaced: true, replacedBy: sum, replacedAs: 'compacted' })
    }
    for (const q of [a2, r0, r1, a3]) expect(transcriptOf(state, q).replaced).toBeUndefined()
    expect(transcriptOf(state, sum)).toMatchObject({ surfaceOp: 'replace', replaces: [u1, a1, u2], type: 'user/message' })
    // The bracket stands in turn 2, between its steps, with its summary and end.
    const turn2 = state.transcript.items[1] as TranscriptTurn
    expect(turn2.items.map((i) => i.kind)).toEqual(['step', 'step', 'compaction'])
    const bracket = turn2.items[2] as TranscriptCompaction
    expect(bracket).toMatchObject({ compactionId: 'c1', turn: 2, summary: { shadowedSeqs: [u1, a1, u2] }, end: { seq: sum + 1 } })
    expect(bracket.items.map((i) => i.seq)).toEqual([sum])
    expect(state.lifecycle.openCompaction).toBeNull()
  })

  it('a replacement of a replacement: the second summary covers the first (anchors keep the order)', () => {
    const { b, s } = twoTurns()
    const [u1, , , a2, r0, r1, a3] = s as [number, number, number, number, number, number, number]
    b.compact(0, 2)
    const sum1 = lastSeq(b, 'user/message')
    b.compact(0, 3) // sum1 a2 r0 r1: sum1's seq is the largest so far, but it stands first
    const sum2 = lastSeq(b, 'user/message')
    const state = check(b.events)
    expect(state.surface).toEqual({ seqs: [sum2, a3], generation: 2, anchors: { [sum1]: u1, [sum2]: u1 } })
    expect(transcriptOf(state, sum1)).toMatchObject({ replaces: expect.any(Array), replaced: true, replacedBy: sum2 })
    expect(transcriptOf(state, sum2).replaces).toEqual([sum1, a2, r0, r1])
    expect(transcriptOf(state, u1).replacedBy).toBe(sum1) // not re-marked by the second summary
  })

  it('a range in the middle keeps what stands before and after it', () => {
    const { b, s } = twoTurns()
    const [u1, a1, u2, a2, r0, r1, a3] = s as [number, number, number, number, number, number, number]
    b.compact(1, 2) // a1 u2
    const sum = lastSeq(b, 'user/message')
    const state = check(b.events)
    expect(state.surface.seqs).toEqual([u1, sum, a2, r0, r1, a3])
    expect(transcriptOf(state, u1).replaced).toBeUndefined()
    expect(transcriptOf(state, a1).replacedBy).toBe(sum)
    expect(transcriptOf(state, u2).replacedBy).toBe(sum)
  })

  it('a failed compaction (end with error, no summary) changes no surface', () => {
    const { b, s } = twoTurns()
    b.compact(0, 2, true)
    const state = check(b.events)
    expect(state.surface).toEqual({ seqs: s, generation: 0, anchors: {} })
    const bracket = (state.transcript.items[1] as TranscriptTurn).items[2] as TranscriptCompaction
    expect(bracket).toMatchObject({ summary: null, items: [], end: { error: { code: 'SUMMARY_FAILED' } } })
  })

  it('a manual compaction from idle is a top-level transcript item; its usage counts in total and compaction, not per turn', () => {
    const { b } = twoTurns()
    b.endTurn({ kind: 'completed' })
    const before = replay(b.events).usage
    b.compact(0, 2)
    const state = check(b.events)
    expect(state.transcript.items.map((i) => i.kind)).toEqual(['turn', 'turn', 'compaction'])
    expect(state.usage.compaction).toMatchObject({ requests: 1, inputTokens: 100, outputTokens: 20 })
    expect(state.usage.total.inputTokens).toBe(before.total.inputTokens + 100)
    expect(state.usage.byTurn).toEqual(before.byTurn)
  })
})

describe('replace: a pruned tool result (L8, L15)', () => {
  it('replaces exactly one result in place; history holds the pruned copy; the transcript marks the original pruned', () => {
    const { b, s } = twoTurns()
    const [u1, a1, u2, a2, r0, r1, a3] = s as [number, number, number, number, number, number, number]
    b.prune(4) // r0
    const pruned = lastSeq(b, 'tool/result')
    const state = check(b.events)
    expect(state.surface).toEqual({ seqs: [u1, a1, u2, a2, pruned, r1, a3], generation: 1, anchors: { [pruned]: r0 } })
    expect(state.history.messages[4]).toEqual({
      role: 'tool', callId: 'call_2_1_0', content: [{ type: 'text', text: 'res…[pruned]…ult' }],
    })
    expect(transcriptOf(state, r0)).toMatchObject({ replaced: true, replacedBy: pruned, replacedAs: 'pruned', callId: 'call_2_1_0' })
    expect(transcriptOf(state, r1).replaced).toBeUndefined()
    expect(transcriptOf(state, pruned)).toMatchObject({ surfaceOp: 'replace', replaces: [r0], callId: 'call_2_1_0' })
    const turn2 = state.transcript.items[1] as TranscriptTurn
    expect(turn2.items.map((i) => i.kind)).toEqual(['step', 'step', 'prune', 'message'])
    expect(turn2.items[2]).toMatchObject({ kind: 'prune', callId: 'call_2_1_0', shadowedSeq: r0 })
    // A replacing result answers no call: nothing pending, and the step's record is untouched.
    expect(state.lifecycle.pendingToolCalls).toEqual([])
  })

  it('pruning the pruned copy again hides the copy, not the original twice', () => {
    const { b } = twoTurns()
    b.prune(4)
    const first = lastSeq(b, 'tool/result')
    b.prune(4)
    const second = lastSeq(b, 'tool/result')
    const state = check(b.events)
    expect(state.surface.seqs[4]).toBe(second)
    expect(state.surface.generation).toBe(2)
    expect(transcriptOf(state, first)).toMatchObject({ replaced: true, replacedBy: second })
  })
})

describe('replace: how a hidden message is marked (transcript replacedAs)', () => {
  /** Prunes r0 of `twoTurns`, then moves its replacing copy one event later, `between` writing the
   * event that stands between the prune and the copy. Returns the original's transcript marks. */
  function pruneWithEventBetween(between: (b: LogBuilder) => void) {
    const { b, s } = twoTurns()
    const r0 = s[4]!
    b.prune(4)
    const pruneEvent = b.events.at(-2)!
    const copy = b.events.at(-1)!
    b.events.pop()
    between(b)
    b.emit({ type: copy.type, data: copy.data, surfaceOp: copy.surfaceOp, sourceEventSeqs: copy.sourceEventSeqs } as never)
    const moved = lastSeq(b, 'tool/result')
    expect(moved).toBe(pruneEvent.seq + 2)
    return { marks: transcriptOf(replay(b.events), r0), moved }
  }

  /* A tool/result replacement not right after its `compaction/prune` (a broken L15 log, which
   * `report` and `inspect` still show): the original is marked `replaced`, not `pruned` — `pruned`
   * claims a prune the reader can find right above it. */
  it('L15: a replacing tool/result with an inbox edit (no transcript item) between it and its prune marks the original replaced', () => {
    // the prune is still the copy's previous sibling in the transcript, but not its previous seq
    const { marks, moved } = pruneWithEventBetween((b) => b.send('typed while compacting'))
    expect(marks).toMatchObject({ replaced: true, replacedBy: moved, replacedAs: 'replaced' })
  })

  it('L15: a replacing tool/result with a retry notice (a transcript item) between it and its prune marks the original replaced', () => {
    // the copy's previous seq is a transcript item that is not a prune
    const { marks, moved } = pruneWithEventBetween((b) =>
      b.emit({ type: 'llm/retry', data: { turn: 2, step: 2, attempt: 1, delayMs: 10, failure: { code: 'SERVER', message: 'x' } } } as never),
    )
    expect(marks).toMatchObject({ replaced: true, replacedBy: moved, replacedAs: 'replaced' })
  })
})

describe('empty assistant messages', () => {
  /** Turn 1: u1, then an empty assistant message (a stop with no content). Turn 2: u2 a2. */
  function withEmpty(): { b: LogBuilder; s: number[] } {
    const b = new LogBuilder()
    b.send('hello')
    b.startStep(b.startTurn())
    b.respond({ text: '' })
    b.endStep({ kind: 'stop' })
    b.endTurn({ kind: 'completed' })
    b.send('hello again')
    b.startStep(b.startTurn())
    b.respond({ text: 'hi' })
    b.endStep({ kind: 'stop' })
    return { b, s: b.surface.map((n) => n.seq) }
  }

  it('stand on the surface and in the transcript, never in history', () => {
    const { b, s } = withEmpty()
    const [u1, empty, u2, a2] = s as [number, number, number, number]
    const state = check(b.events)
    expect(state.surface.seqs).toEqual([u1, empty, u2, a2])
    expect(state.history.seqs).toEqual([u1, u2, a2])
    expect(transcriptOf(state, empty).message).toEqual({ role: 'assistant', content: [] })
  })

  it('as the start of a replaced range: the summary lands after u1 and hides u2', () => {
    const { b, s } = withEmpty()
    const [u1, empty, u2, a2] = s as [number, number, number, number]
    b.compact(1, 2) // empty u2
    const sum = lastSeq(b, 'user/message')
    const state = check(b.events)
    expect(state.surface.seqs).toEqual([u1, sum, a2])
    expect(state.history.seqs).toEqual([u1, sum, a2])
    expect(transcriptOf(state, empty).replacedBy).toBe(sum)
  })

  it('as the end of a replaced range: the summary hides u1 and keeps u2', () => {
    const { b, s } = withEmpty()
    const [u1, empty, u2, a2] = s as [number, number, number, number]
    b.compact(0, 1) // u1 empty
    const sum = lastSeq(b, 'user/message')
    const state = check(b.events)
    expect(state.surface.seqs).toEqual([sum, u2, a2])
    expect(state.history.seqs).toEqual([sum, u2, a2])
    expect(transcriptOf(state, u1).replacedBy).toBe(sum)
    expect(transcriptOf(state, empty).replacedBy).toBe(sum)
  })

  it('as the whole range: only the surface changes shape in history terms (one message in)', () => {
    const { b, s } = withEmpty()
    const [u1, , u2, a2] = s as [number, number, number, number]
    b.compact(1, 1)
    const sum = lastSeq(b, 'user/message')
    const state = check(b.events)
    expect(state.surface.seqs).toEqual([u1, sum, u2, a2])
    expect(state.history.seqs).toEqual([u1, sum, u2, a2])
  })
})
