/** The reference log of the design (example.jsonl): exact state after replaying it, and at chosen seqs. */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { deepFreeze, TurnlogError, type LogEvent } from '../../events/index.js'
import { createLiveProjection, foldEvents } from '../../reducers/index.js'
import { replay, stateAt } from '../../replay/replay.js'

const EXAMPLE = new URL('../../examples/weather.jsonl', import.meta.url)

function loadExample(): LogEvent[] {
  const lines = readFileSync(EXAMPLE, 'utf8').split('\n').filter((l) => l.trim() !== '')
  return lines.slice(1).map((l) => deepFreeze(JSON.parse(l) as LogEvent)) // line 1 is the header
}

const events = loadExample()
const data = (seq: number) => events[seq]!.data as Record<string, unknown>
const user = (data(4) as { message: unknown }).message
const call = (data(12) as { message: unknown }).message
const result = (data(14) as { message: unknown }).message
const answer = (data(23) as { message: unknown }).message

describe('example.jsonl', () => {
  it('has the 26 events the reducers expect', () => {
    expect(events).toHaveLength(26)
    expect(events.map((e) => e.seq)).toEqual([...Array(26).keys()])
  })

  it('surface: the four message seqs, no replacement', () => {
    expect(replay(events).surface).toEqual({ seqs: [4, 12, 14, 23], generation: 0, anchors: {} })
  })

  it('history: the four messages verbatim (same objects), with their seqs', () => {
    const h = replay(events).history
    expect(h.seqs).toEqual([4, 12, 14, 23])
    expect(h.messages).toEqual([
      { id: 'm1', role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }], source: { kind: 'user' } },
      { role: 'assistant', content: [{ type: 'tool-call', id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }] },
      { role: 'tool', callId: 'call_1', content: [{ type: 'text', text: '{"city":"Paris","tempC":21}' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'It is 21 °C in Paris.' }] },
    ])
    expect(h.messages[0]).toBe(user)
    expect(h.messages[1]).toBe(call)
    expect(h.messages[2]).toBe(result)
    expect(h.messages[3]).toBe(answer)
  })

  it('inbox: the prompt was sent, then claimed', () => {
    expect(replay(events).inbox).toEqual({ nextTurn: [], nextStep: [] })
    expect(stateAt(events, 0).inbox.nextTurn).toEqual([user])
    expect(stateAt(events, 1).inbox.nextTurn).toEqual([user])
    expect(stateAt(events, 2).inbox).toEqual({ nextTurn: [], nextStep: [] })
  })

  it('lifecycle: everything closed at the end', () => {
    expect(replay(events).lifecycle).toEqual({
      lastSeq: 25,
      openTurn: null,
      openTurnSeq: null,
      openTurnCause: null,
      openStep: null,
      lastTurn: 1,
      lastStep: 2,
      streaming: false,
      pendingToolCalls: [],
      lastStepOutcome: { kind: 'stop' },
      lastTurnEndReason: { kind: 'completed' },
      openCompaction: null,
      header: data(5),
      headerSeq: 5,
      seedEndSeq: null,
      parkedSeq: null,
    })
  })

  it('lifecycle: open turn and step, streaming, and the pending call mid-log', () => {
    const at3 = stateAt(events, 3).lifecycle
    expect([at3.openTurn, at3.openTurnSeq, at3.openStep, at3.lastStep, at3.header]).toEqual([1, 1, 1, 1, null])
    expect(stateAt(events, 8).lifecycle.streaming).toBe(true)
    const at13 = stateAt(events, 13).lifecycle
    expect(at13.streaming).toBe(false)
    expect(at13.pendingToolCalls).toEqual([{ seq: 13, callId: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }])
    expect(stateAt(events, 14).lifecycle.pendingToolCalls).toEqual([])
    const at15 = stateAt(events, 15).lifecycle
    expect([at15.openStep, at15.lastStep, at15.lastStepOutcome]).toEqual([null, 1, { kind: 'tools' }])
    expect(stateAt(events, 16).lifecycle.lastStep).toBe(2)
  })

  it('usage: the two requests, bucket by bucket, in total and for turn 1', () => {
    const u = replay(events).usage
    const two = { requests: 2, inputTokens: 113, outputTokens: 16, cacheReadTokens: 40, cacheWriteTokens: 0, reasoningTokens: 0 }
    const none = { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }
    expect(u).toEqual({ total: two, failed: none, compaction: none, byTurn: { 1: two }, pendingChunk: null, turn: null })
    // Mid-request (usage chunk seen, no message yet): nothing is counted twice, nothing early.
    expect(stateAt(events, 10).usage.total.requests).toBe(0)
    expect(stateAt(events, 12).usage.total.inputTokens).toBe(42)
  })

  it('transcript: one turn, two steps, messages, usage and outcomes', () => {
    const t = replay(events).transcript
    expect(t.items).toHaveLength(1)
    const turn = t.items[0]!
    expect(turn).toMatchObject({ kind: 'turn', seq: 1, turn: 1, cause: null, end: { seq: 25, reason: { kind: 'completed' } } })
    if (turn.kind !== 'turn') throw new Error('not a turn')
    expect(turn.items.map((i) => i.kind)).toEqual(['step', 'step'])
    const [s1, s2] = turn.items as [Extract<(typeof turn.items)[number], { kind: 'step' }>, Extract<(typeof turn.items)[number], { kind: 'step' }>]
    expect(s1).toMatchObject({ step: 1, seq: 3, headerSeq: 5, usage: { inputTokens: 42, outputTokens: 9 }, end: { seq: 15, outcome: { kind: 'tools' } } })
    expect(s1.messages.map((m) => [m.seq, m.type, m.surfaceOp])).toEqual([
      [4, 'user/message', 'append'], [12, 'assistant/message', 'append'], [14, 'tool/result', 'append'],
    ])
    expect(s1.messages[1]).toMatchObject({ finish: 'tool-calls', usage: { inputTokens: 42, outputTokens: 9 } })
    expect(s1.messages[2]).toMatchObject({ callId: 'call_1' })
    expect(s1.messages.some((m) => m.replaced)).toBe(false)
    expect(s2).toMatchObject({ step: 2, headerSeq: null, usage: { inputTokens: 71, outputTokens: 7, cacheReadTokens: 40 }, end: { seq: 24, outcome: { kind: 'stop' } } })
    expect(s2.messages.map((m) => m.message)).toEqual([answer])
    expect(t.surface).toEqual([4, 12, 14, 23])
  })

  it('live projection and bulk fold agree on the example (P1), byte for byte (P7)', () => {
    const live = createLiveProjection()
    for (const e of events) live.apply(e)
    expect(live.count).toBe(26)
    expect(live.state).toEqual(replay(events))
    expect(JSON.stringify(live.state)).toBe(JSON.stringify(foldEvents(events, { runner: 'immer', batchSize: 4 })))
  })
})

describe('stateAt', () => {
  it('equals the replay of the prefix, for every seq of the example', () => {
    for (let n = 0; n < events.length; n++) {
      expect(stateAt(events, n)).toEqual(replay(events.slice(0, n + 1)))
    }
    expect(stateAt(events, 25)).toEqual(replay(events))
  })

  it.each([-1, 26, 1.5, Number.NaN, 1e9])('refuses seq %s with a coded INVALID_ARGUMENT', (seq) => {
    let err: unknown
    try {
      stateAt(events, seq)
    } catch (e) {
      err = e
    }
    expect(TurnlogError.is(err, 'INVALID_ARGUMENT')).toBe(true)
    if (Number.isFinite(seq)) expect((err as TurnlogError).seq).toBe(seq)
  })

  it('refuses any seq of an empty log', () => {
    expect(() => stateAt([], 0)).toThrow(/INVALID_ARGUMENT/)
  })

  it('refuses a log whose seqs are not their indexes (BAD_SEQ)', () => {
    const shifted = events.map((e) => ({ ...e, seq: e.seq + 1 }))
    expect(() => stateAt(shifted, 3)).toThrow(expect.objectContaining({ code: 'BAD_SEQ', expectedSeq: 3, actualSeq: 4 }))
  })

  it('returns a deep-frozen state', () => {
    const s = stateAt(events, 20)
    expect(Object.isFrozen(s)).toBe(true)
    expect(Object.isFrozen(s.surface.seqs)).toBe(true)
    expect(Object.isFrozen(s.transcript.items[0])).toBe(true)
    expect(() => (s.history.seqs as number[]).push(1)).toThrow(TypeError)
  })
})
