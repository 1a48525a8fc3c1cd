/**
 * The replay invariants of the reducers (docs/spec/invariants.md P1, P2, P7), on hand-built logs, on the
 * local generator (logs.ts) and on `arbValidLog` (testing/arbitraries), plus independent oracles
 * for the surface, history, transcript and usage folds.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { deepFreeze, LogChecker, type EventOf, type LogEvent, type ModelMessage, type Usage } from '../../events/index.js'
import {
  createLiveProjection, foldEvents, type ReplayState, type TopItem, type TranscriptMessage, type TurnItem,
} from '../../reducers/index.js'
import { foldEventsWithImmer } from '../../reducers/projection.js'
import { replay, stateAt } from '../../replay/replay.js'
import { arbValidLog, checkerOptionsFor } from '../../testing/arbitraries/index.js'
import { arbOps, buildFromOps, LogBuilder } from './logs.js'
import { fcRuns, longRuns } from '../fc-runs.js'

const localLogs = arbOps.map((ops) => buildFromOps(ops))

/** Incremental (live), batch (plain draft) and immer-per-batch folds of one log. */
function allFolds(events: readonly LogEvent[]): { live: ReplayState; batch: ReplayState; immer: ReplayState; immerSmall: ReplayState } {
  const p = createLiveProjection()
  for (const e of events) p.apply(e)
  return {
    live: p.state,
    batch: foldEvents(events),
    immer: foldEventsWithImmer(events, 10_000),
    immerSmall: foldEventsWithImmer(events, 3, events.length, false),
  }
}

function expectP1(events: readonly LogEvent[]): void {
  const { live, batch, immer, immerSmall } = allFolds(events)
  expect(batch).toEqual(live)
  expect(immer).toEqual(live)
  expect(immerSmall).toEqual(live)
}

// ---- independent oracles -------------------------------------------------------------------------

const isSurface = (e: LogEvent) =>
  (e.type === 'user/message' || e.type === 'assistant/message' || e.type === 'tool/result') && e.surfaceOp !== undefined

/** The surface by the letter of docs/spec/events.md: indexOf the boundaries, splice. */
function naiveSurface(events: readonly LogEvent[]): { seqs: number[]; generation: number; hiddenBy: Map<number, number> } {
  const seqs: number[] = []
  const hiddenBy = new Map<number, number>()
  let generation = 0
  for (const e of events) {
    if (!isSurface(e)) continue
    const op = e.surfaceOp!
    if (op === 'append') seqs.push(e.seq)
    else {
      const from = seqs.indexOf(op.start)
      const to = seqs.indexOf(op.end)
      for (const q of seqs.splice(from, to - from + 1, e.seq)) hiddenBy.set(q, e.seq)
      generation++
    }
  }
  return { seqs, generation, hiddenBy }
}

/** Usage by its documented rule: per step, the message's usage else the stream's usage chunk; plus summaries. */
function naiveUsage(events: readonly LogEvent[]): { input: number; output: number; requests: number; failedInput: number } {
  let input = 0
  let output = 0
  let requests = 0
  let failedInput = 0
  let chunk: Usage | null = null
  let answered = false
  for (const e of events) {
    if (e.type === 'step/start') {
      chunk = null
      answered = false
    } else if (e.type === 'assistant/chunk') {
      const c = (e as EventOf<'assistant/chunk'>).data.chunk
      if (c.type === 'usage') chunk = c.usage
    } else if (e.type === 'assistant/message') {
      const u = (e as EventOf<'assistant/message'>).data.usage ?? chunk
      requests++
      input += u?.inputTokens ?? 0
      output += u?.outputTokens ?? 0
      answered = true
      chunk = null
    } else if (e.type === 'step/end') {
      if (!answered && chunk) {
        requests++
        input += chunk.inputTokens
        output += chunk.outputTokens
        failedInput += chunk.inputTokens
      }
      chunk = null
    } else if (e.type === 'compaction/summary') {
      const u = (e as EventOf<'compaction/summary'>).data.usage
      if (u) {
        requests++
        input += u.inputTokens
        output += u.outputTokens
      }
    }
  }
  return { input, output, requests, failedInput }
}

function transcriptMessages(items: ReadonlyArray<TopItem | TurnItem>): TranscriptMessage[] {
  const out: TranscriptMessage[] = []
  for (const it of items) {
    if (it.kind === 'message') out.push(it)
    else if (it.kind === 'turn' || it.kind === 'compaction') out.push(...transcriptMessages(it.items))
    else if (it.kind === 'step') out.push(...it.messages)
  }
  return out
}

function checkOracles(events: readonly LogEvent[]): void {
  const state = replay(events)
  const naive = naiveSurface(events)
  expect(state.surface.seqs).toEqual(naive.seqs)
  expect(state.surface.generation).toBe(naive.generation)
  const visible = naive.seqs.filter((q) => {
    const e = events[q]!
    return !(e.type === 'assistant/message' && (e.data as { message: ModelMessage }).message.content.length === 0)
  })
  expect(state.history.seqs).toEqual(visible)
  expect(state.history.messages).toEqual(visible.map((q) => (events[q]!.data as { message: ModelMessage }).message))
  // transcript: every surface event exactly once, in log order; replaced exactly when hidden, by whom hid it
  const msgs = transcriptMessages(state.transcript.items)
  expect(msgs.map((m) => m.seq)).toEqual(events.filter(isSurface).map((e) => e.seq))
  for (const m of msgs) expect(m.replacedBy).toBe(naive.hiddenBy.get(m.seq))
  const u = naiveUsage(events)
  expect([state.usage.total.inputTokens, state.usage.total.outputTokens, state.usage.total.requests, state.usage.failed.inputTokens])
    .toEqual([u.input, u.output, u.requests, u.failedInput])
  // the inbox: next-turn ids are what was sent and not yet claimed or cancelled, by Array.prototype.splice
  const lists: Record<string, string[]> = { 'next-turn': [], 'next-step': [] }
  for (const e of events) {
    if (e.type !== 'agent/inbox/spliced') continue
    const d = (e as EventOf<'agent/inbox/spliced'>).data
    lists[d.target]!.splice(d.start, d.removedCount ?? 0, ...d.inserted.map((m) => m.id))
  }
  expect(state.inbox.nextTurn.map((m) => m.id)).toEqual(lists['next-turn'])
  expect(state.inbox.nextStep.map((m) => m.id)).toEqual(lists['next-step'])
}

// ---- the tests ------------------------------------------------------------------------------------

describe('the local generator', () => {
  it('produces logs the LogChecker accepts (so the properties below run on valid logs)', () => {
    fc.assert(
      fc.property(localLogs, (events) => {
        const checker = new LogChecker({ maxStepsPerTurn: 64, maxRetries: 5 })
        for (const e of events) {
          expect(checker.check(e)).toEqual([])
          checker.apply(e)
        }
      }),
      { numRuns: fcRuns(300) },
    )
  })
})

describe('P1: incremental fold = batch fold', () => {
  it('P1 on a hand-built log with a prune, a compaction, a failure and a retry turn', () => {
    const b = new LogBuilder()
    b.send('q1')
    b.startStep(b.startTurn())
    b.runTools(b.respond({ text: '', calls: 3 }))
    b.endStep({ kind: 'tools' })
    b.prune(2)
    b.compact(0, 0)
    b.startStep([])
    b.failRequest({ code: 'SERVER', message: '502' })
    b.endStep({ kind: 'failed', failure: { code: 'SERVER', message: '502' } })
    b.retry(1, { code: 'SERVER', message: '502' })
    b.endTurn({ kind: 'error', failure: { code: 'SERVER', message: '502' } })
    b.startStep(b.startTurn(1))
    b.respond({ text: 'ok' })
    b.endStep({ kind: 'stop' })
    b.endTurn({ kind: 'completed' })
    expectP1(b.events)
    checkOracles(b.events)
    // and at every prefix, which is where the live agent reads it
    const p = createLiveProjection()
    b.events.forEach((e, n) => {
      p.apply(e)
      expect(foldEvents(b.events, { end: n + 1 })).toEqual(p.state)
    })
  })

  it('P1 on the local generator (300 runs), with the surface/history/transcript/usage/inbox oracles', () => {
    fc.assert(
      fc.property(localLogs, (events) => {
        expectP1(events)
        checkOracles(events)
      }),
      { numRuns: fcRuns(300) },
    )
  })

  // 250 runs in `npm test`, the full 1000 with TURNLOG_LONG=1 (`npm run test:long`, and CI's Node 24 lane; test/fc-runs.ts longRuns)
  it(`P1 on arbValidLog (${longRuns(250, 1000)} runs), with the oracles`, () => {
    fc.assert(
      fc.property(arbValidLog(), (events) => {
        expectP1(events)
        checkOracles(events)
      }),
      { numRuns: longRuns(250, 1000) },
    )
  })
})

describe('P2: stateAt(log, n) = the live state right after seq n', () => {
  it('P2 at every seq, on arbValidLog (100 runs) and the local generator (100 runs)', () => {
    const prop = (events: LogEvent[]) => {
      const p = createLiveProjection()
      for (const e of events) {
        p.apply(e)
        expect(JSON.stringify(stateAt(events, e.seq))).toBe(JSON.stringify(p.state))
      }
    }
    fc.assert(fc.property(arbValidLog(), prop), { numRuns: fcRuns(100) })
    fc.assert(fc.property(localLogs, prop), { numRuns: fcRuns(100) })
  })
})

describe('P7: no mutation of events, deterministic state', () => {
  it('P7 the folds never mutate events: deep-frozen events fold without a throw, unfrozen ones stay byte-identical', () => {
    fc.assert(
      fc.property(fc.oneof(arbValidLog(), localLogs), (generated) => {
        const text = JSON.stringify(generated)
        const frozen = deepFreeze(JSON.parse(text) as LogEvent[])
        const loose = JSON.parse(text) as LogEvent[]
        // ESM is strict mode: a write to a frozen event throws a TypeError
        expect(() => allFolds(frozen)).not.toThrow()
        allFolds(loose)
        expect(JSON.stringify(loose)).toBe(text)
      }),
      { numRuns: fcRuns(200) },
    )
  })

  it('P7 the same log gives the same state byte for byte (fresh copies, every runner)', () => {
    fc.assert(
      fc.property(fc.oneof(arbValidLog(), localLogs), (generated) => {
        const copy = () => JSON.parse(JSON.stringify(generated)) as LogEvent[]
        const a = JSON.stringify(replay(copy()))
        expect(JSON.stringify(replay(copy()))).toBe(a)
        const { live, immer, immerSmall } = allFolds(copy())
        expect(JSON.stringify(live)).toBe(a)
        expect(JSON.stringify(immer)).toBe(a)
        expect(JSON.stringify(immerSmall)).toBe(a)
      }),
      { numRuns: fcRuns(200) },
    )
  })

  it('P7 the replayed state is deep-frozen, and a live projection built from it is independent', () => {
    const events = buildFromOps([{ op: 'send', target: 'next-turn', text: 'hi' }, { op: 'turn', steps: [{ kind: 'tools', calls: 2, steer: true, prune: null, compact: null }] }])
    const s = replay(events)
    const stack: unknown[] = [s]
    let objects = 0
    while (stack.length) {
      const v = stack.pop()
      if (typeof v !== 'object' || v === null) continue
      objects++
      expect(Object.isFrozen(v)).toBe(true)
      stack.push(...Object.values(v))
    }
    expect(objects).toBeGreaterThan(20)
    const live = createLiveProjection(events)
    expect(Object.isFrozen(live.state.surface.seqs)).toBe(false)
  })
})
