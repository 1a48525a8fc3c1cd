/**
 * An independent oracle for the human transcript (reducers/transcript.ts; docs/spec/events.md "The surface",
 * last paragraph; issue 15 part 3: transcript.ts had 35 surviving mutants). The oracle reads the
 * transcript's facts off the whole log by their definitions rather than event by event, and the
 * fold must agree on every valid log (P1) and every prefix of one (P2: open turns, steps, brackets):
 *
 * - every `user/message`, `assistant/message` and `tool/result` appears once, in log order, with
 *   the event's own fields and nothing else (finish, explanation, usage, interrupted, callId, error);
 * - a message is marked replaced exactly when it is no longer on the surface; `replacedBy` is the
 *   replacement that hid it and `replacedAs` says how (a compaction summary, a pruned copy right
 *   after its `compaction/prune`, any other replacement);
 * - each turn carries its number, cause and end reason; each step its outcome, request header seq
 *   and usage (the message's, else the stream's usage chunk); each compaction bracket its summary
 *   and end error; prunes, retries and seed ends stand where the log put them.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { EventOf, LogEvent, UserMessage } from '../../events/index.js'
import { foldEvents } from '../../reducers/index.js'
import type { TopItem, TranscriptCompaction, TranscriptMessage, TranscriptStep, TranscriptTurn, TurnItem } from '../../reducers/transcript.js'
import { arbValidLog } from '../../testing/arbitraries/index.js'
import { fcRuns } from '../fc-runs.js'

const SURFACE_TYPES = new Set(['user/message', 'assistant/message', 'tool/result'])

/** Every item of the transcript, depth first, in the order a printer walks it; `parents` gets each
 * item's container seq (-1: the top level). */
function walk(
  items: ReadonlyArray<TopItem | TurnItem | TranscriptMessage>,
  out: Array<TopItem | TurnItem | TranscriptMessage> = [],
  parents = new Map<number, number>(),
  parent = -1,
) {
  for (const item of items) {
    out.push(item)
    parents.set(item.seq, parent)
    if (item.kind === 'turn' || item.kind === 'compaction') walk(item.items, out, parents, item.seq)
    else if (item.kind === 'step') walk(item.messages, out, parents, item.seq)
  }
  return out
}

/** Where each item belongs, from the log: a message in the open step, else the open compaction
 * bracket, else the open turn, else the top; a prune never in a step; a retry and a bracket in the
 * open turn or the top; a step in its turn; a turn and a seed end at the top. */
function expectedParents(events: readonly LogEvent[]): Map<number, number> {
  const parents = new Map<number, number>()
  let turn = -1
  let step = -1
  let bracket = -1
  for (const e of events) {
    switch (e.type) {
      case 'turn/start': parents.set(e.seq, -1); turn = e.seq; break
      case 'turn/end': turn = -1; break
      case 'step/start': parents.set(e.seq, turn); step = e.seq; break
      case 'step/end': step = -1; break
      case 'compaction/start': parents.set(e.seq, turn); bracket = e.seq; break
      case 'compaction/end': bracket = -1; break
      case 'compaction/prune': parents.set(e.seq, bracket >= 0 ? bracket : turn); break
      case 'llm/retry': parents.set(e.seq, turn); break
      case 'session/end-seed': parents.set(e.seq, -1); break
      case 'user/message': case 'assistant/message': case 'tool/result':
        parents.set(e.seq, step >= 0 ? step : bracket >= 0 ? bracket : turn)
        break
    }
  }
  return parents
}

/** The transcript message an event should give, from the event alone (no replacement marks). */
function expectedMessage(e: LogEvent): Record<string, unknown> {
  const d = e.data as Record<string, unknown>
  const m: Record<string, unknown> = {
    kind: 'message', seq: e.seq, time: e.time, type: e.type, message: d.message,
    surfaceOp: e.surfaceOp === undefined || e.surfaceOp === 'append' ? 'append' : 'replace',
  }
  if (e.type === 'assistant/message') {
    m.finish = d.finish
    if (d.explanation !== undefined) m.explanation = d.explanation // a refusal's (issue 23)
    if (d.usage !== undefined) m.usage = d.usage
    if (d.interrupted === true) m.interrupted = true
  }
  if (e.type === 'tool/result') {
    m.callId = d.callId
    if (d.error !== undefined) m.error = d.error
  }
  return m
}

/** Replacement marks from the final surface: which replacement hid which seq, and how. */
function replacementMarks(events: readonly LogEvent[]): Map<number, { by: number; as: string; replaces: number[] }> {
  const marks = new Map<number, { by: number; as: string; replaces: number[] }>()
  const surfaceAt = (n: number) => foldEvents(events.slice(0, n)).surface.seqs
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (!SURFACE_TYPES.has(e.type) || e.surfaceOp === undefined || e.surfaceOp === 'append') continue
    const before = surfaceAt(i)
    const after = new Set(surfaceAt(i + 1))
    const hidden = before.filter((s) => !after.has(s))
    const prev = events[i - 1]
    const as =
      e.type === 'user/message' && (e.data as { message: UserMessage }).message.source.kind === 'compaction' ? 'compacted'
        : e.type === 'tool/result' && prev?.type === 'compaction/prune' ? 'pruned'
          : 'replaced'
    marks.set(e.seq, { by: e.seq, as, replaces: hidden })
  }
  return marks
}

function checkTranscript(events: readonly LogEvent[]): void {
  const t = foldEvents(events).transcript
  const parents = new Map<number, number>()
  const all = walk(t.items, [], parents)
  expect(parents).toEqual(expectedParents(events))
  const bySeq = new Map(all.map((i) => [i.seq, i]))

  // Messages: exactly the surface events, in log order, each with its event's fields.
  const messages = all.filter((i): i is TranscriptMessage => i.kind === 'message')
  const surfaceEvents = events.filter((e) => SURFACE_TYPES.has(e.type))
  expect(messages.map((m) => m.seq)).toEqual(surfaceEvents.map((e) => e.seq))
  const marks = replacementMarks(events)
  const hiddenBy = new Map<number, { by: number; as: string }>()
  for (const mk of marks.values()) for (const s of mk.replaces) hiddenBy.set(s, mk)
  for (const e of surfaceEvents) {
    const want = expectedMessage(e)
    const mk = marks.get(e.seq)
    if (mk) want.replaces = mk.replaces
    const hid = hiddenBy.get(e.seq)
    if (hid) Object.assign(want, { replaced: true, replacedBy: hid.by, replacedAs: hid.as })
    const got = bySeq.get(e.seq) as TranscriptMessage
    expect({ ...got }).toEqual(want)
    expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort())
    expect(got.message).toBe((e.data as { message: unknown }).message)
  }

  // Containers: every turn, step, bracket, prune, retry and seed end, with their facts.
  const kinds: Record<string, string> = {
    'turn/start': 'turn', 'step/start': 'step', 'compaction/start': 'compaction', 'compaction/prune': 'prune',
    'llm/retry': 'retry', 'session/end-seed': 'seed-end',
  }
  const opened = events.filter((e) => kinds[e.type] !== undefined)
  expect(all.filter((i) => i.kind !== 'message').map((i) => [i.seq, i.kind])).toEqual(opened.map((e) => [e.seq, kinds[e.type]]))
  let turnItem = null as TranscriptTurn | null
  let step = null as TranscriptStep | null
  let bracket = null as TranscriptCompaction | null
  let chunkUsage: unknown = null
  for (const e of events) {
    const d = e.data as Record<string, unknown>
    switch (e.type) {
      case 'turn/start':
        turnItem = bySeq.get(e.seq) as TranscriptTurn
        expect([turnItem!.turn, turnItem!.cause, turnItem!.time]).toEqual([d.turn, d.cause ?? null, e.time])
        break
      case 'turn/end':
        expect(turnItem!.end).toEqual({ seq: e.seq, time: e.time, reason: d.reason })
        turnItem = null
        break
      case 'step/start':
        step = bySeq.get(e.seq) as TranscriptStep
        chunkUsage = null
        expect([step.turn, step.step, step.time]).toEqual([d.turn, d.step, e.time])
        break
      case 'request/header':
        if (step) expect(step.headerSeq).toBe(e.seq)
        break
      case 'assistant/chunk': {
        const c = (e as EventOf<'assistant/chunk'>).data.chunk
        if (c.type === 'usage') chunkUsage = c.usage
        break
      }
      case 'step/end': {
        expect(step!.end).toEqual({ seq: e.seq, time: e.time, outcome: d.outcome })
        const msg = step!.messages.find((m) => m.type === 'assistant/message')
        expect(step!.usage).toEqual(msg?.usage ?? chunkUsage)
        if (!events.some((x) => x.type === 'request/header' && x.seq > step!.seq && x.seq < e.seq)) expect(step!.headerSeq).toBeNull()
        step = null
        break
      }
      case 'compaction/start':
        bracket = bySeq.get(e.seq) as TranscriptCompaction
        expect([bracket!.compactionId, bracket!.turn, bracket!.time]).toEqual([d.compactionId, d.turn, e.time]) // its summary is checked at compaction/summary
        break
      case 'compaction/summary': {
        const want: Record<string, unknown> = { seq: e.seq, summary: d.summary, shadowedSeqs: d.shadowedSeqs }
        if (d.usage !== undefined) want.usage = d.usage
        expect(bracket!.summary).toEqual(want)
        expect(Object.keys(bracket!.summary!).sort()).toEqual(Object.keys(want).sort())
        break
      }
      case 'compaction/end': {
        const want: Record<string, unknown> = { seq: e.seq, time: e.time }
        if (d.error !== undefined) want.error = d.error
        expect(bracket!.end).toEqual(want)
        expect(Object.keys(bracket!.end!).sort()).toEqual(Object.keys(want).sort())
        bracket = null
        break
      }
      case 'compaction/prune':
        expect(bySeq.get(e.seq)).toEqual({ kind: 'prune', seq: e.seq, time: e.time, callId: d.callId, shadowedSeq: d.shadowedSeq, originalChars: d.originalChars })
        break
      case 'llm/retry':
        expect(bySeq.get(e.seq)).toEqual({ kind: 'retry', seq: e.seq, time: e.time, turn: d.turn, step: d.step, attempt: d.attempt, delayMs: d.delayMs, failure: d.failure })
        break
      case 'session/end-seed':
        expect(bySeq.get(e.seq)).toEqual({ kind: 'seed-end', seq: e.seq, time: e.time })
        expect(t.items).toContain(bySeq.get(e.seq))
        break
    }
  }
  // Open containers stay open.
  if (turnItem) expect(turnItem.end).toBeNull()
  if (step) expect(step.end).toBeNull()
  if (bracket) expect(bracket.end).toBeNull()
}

describe('the transcript agrees with an oracle read off the log (P1, P2, docs/spec/events.md "The surface")', () => {
  it('P1: on every valid log', () => {
    fc.assert(fc.property(arbValidLog({ minTurns: 2 }), (log) => checkTranscript(log)), { numRuns: fcRuns(150) })
  })

  it('P2: on every prefix of a valid log (open turns, steps and brackets)', () => {
    fc.assert(
      fc.property(arbValidLog({ minTurns: 1 }).chain((log) => fc.tuple(fc.constant(log), fc.nat({ max: log.length - 1 }))), ([log, n]) =>
        checkTranscript(log.slice(0, n + 1)),
      ),
      { numRuns: fcRuns(150) },
    )
  })

  it('P1: on logs biased to tools, prunes and compaction (every replacement kind)', () => {
    fc.assert(
      fc.property(arbValidLog({ minTurns: 3, stepWeights: { tools: 80 } }), (log) => checkTranscript(log)),
      { numRuns: fcRuns(100) },
    )
  })
})
