/** Targeted behaviour of the inbox, usage, lifecycle and transcript folds on hand-built logs. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LogEvent, UserMessage } from '../../events/index.js'
import { inboxReducer, type TranscriptRetry, type TranscriptStep, type TranscriptTurn } from '../../reducers/index.js'
import { replay, stateAt } from '../../replay/replay.js'
import { LogBuilder } from './logs.js'
import { fcRuns } from '../fc-runs.js'

const um = (id: string): UserMessage => ({ id, role: 'user', content: [{ type: 'text', text: id }], source: { kind: 'user' } })

describe('inbox', () => {
  it('applies each splice like Array.prototype.splice on its target list (any start, removal, insertion)', () => {
    const arbSplice = fc.record({
      target: fc.constantFrom('next-turn' as const, 'next-step' as const),
      start: fc.nat({ max: 6 }),
      removedCount: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
      inserted: fc.array(fc.nat({ max: 99 }), { maxLength: 3 }),
    })
    fc.assert(
      fc.property(fc.array(arbSplice, { maxLength: 20 }), (splices) => {
        const s = inboxReducer.initial()
        const model: Record<string, string[]> = { 'next-turn': [], 'next-step': [] }
        splices.forEach((sp, seq) => {
          const inserted = sp.inserted.map((n) => um(`m${seq}_${n}`))
          const data = { target: sp.target, start: sp.start, inserted, ...(sp.removedCount ? { removedCount: sp.removedCount } : {}) }
          inboxReducer.apply(s, { seq, time: 0, type: 'agent/inbox/spliced', data } as LogEvent)
          model[sp.target]!.splice(sp.start, sp.removedCount ?? 0, ...inserted.map((m) => m.id))
        })
        expect(s.nextTurn.map((m) => m.id)).toEqual(model['next-turn'])
        expect(s.nextStep.map((m) => m.id)).toEqual(model['next-step'])
      }),
      { numRuns: fcRuns(300) },
    )
  })

  it('sends, a cancel in the middle, then a claim of next-step and of the first prompt', () => {
    const b = new LogBuilder()
    const [p1, p2, p3] = [b.send('a'), b.send('b'), b.send('c')]
    const s1 = b.send('steer', 'next-step')
    b.cancelPending('next-turn', 1)
    expect(replay(b.events).inbox).toEqual({ nextTurn: [p1, p3], nextStep: [s1] })
    b.startTurn()
    expect(replay(b.events).inbox).toEqual({ nextTurn: [p3], nextStep: [] })
    void p2
  })
})

describe('usage', () => {
  it('counts a failed request by its usage chunk (in total and failed), once, and a message without usage by its chunk', () => {
    const b = new LogBuilder()
    b.send('q')
    b.startStep(b.startTurn())
    b.failRequest({ code: 'SERVER', message: '500' }, { inputTokens: 30, outputTokens: 4, reasoningTokens: 2 })
    b.endStep({ kind: 'failed', failure: { code: 'SERVER', message: '500' } })
    b.retry(1, { code: 'SERVER', message: '500' })
    b.endTurn({ kind: 'error', failure: { code: 'SERVER', message: '500' } })
    b.startStep(b.startTurn(1))
    b.respond({ text: 'ok', usage: { inputTokens: 31, outputTokens: 5, cacheWriteTokens: 9 }, omitUsage: true })
    b.endStep({ kind: 'stop' })
    b.endTurn({ kind: 'completed' })
    const u = replay(b.events).usage
    expect(u.total).toEqual({ requests: 2, inputTokens: 61, outputTokens: 9, cacheReadTokens: 0, cacheWriteTokens: 9, reasoningTokens: 2 })
    expect(u.failed).toEqual({ requests: 1, inputTokens: 30, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 2 })
    expect(u.byTurn['1']).toMatchObject({ requests: 1, inputTokens: 30 })
    expect(u.byTurn['2']).toMatchObject({ requests: 1, inputTokens: 31, cacheWriteTokens: 9 })
    expect([u.pendingChunk, u.turn]).toEqual([null, null])
  })

  it('a failed request that reported no usage counts nothing', () => {
    const b = new LogBuilder()
    b.send('q')
    b.startStep(b.startTurn())
    b.failRequest({ code: 'TRANSPORT', message: 'reset' }, null)
    b.endStep({ kind: 'failed', failure: { code: 'TRANSPORT', message: 'reset' } })
    b.endTurn({ kind: 'error', failure: { code: 'TRANSPORT', message: 'reset' } })
    expect(replay(b.events).usage.total.requests).toBe(0)
  })
})

describe('lifecycle', () => {
  it('pending tool calls in model order, answered one by one; header and its seq follow the last request/header', () => {
    const b = new LogBuilder()
    b.send('q')
    b.startStep(b.startTurn(), 'first system')
    const firstHeader = b.events.length - 1
    const ids = b.respond({ text: 'x', calls: 3 })
    const calls = b.events.filter((e) => e.type === 'tool/call').map((e) => e.seq)
    let s = replay(b.events).lifecycle
    expect(s.pendingToolCalls.map((c) => [c.seq, c.callId])).toEqual(calls.map((q, i) => [q, ids[i]]))
    b.runTools(ids.slice(0, 1))
    s = replay(b.events).lifecycle
    expect(s.pendingToolCalls.map((c) => c.callId)).toEqual(ids.slice(1))
    expect([s.headerSeq, s.header?.system, s.header?.reason]).toEqual([firstHeader, 'first system', 'initial'])
    b.runTools(ids.slice(1))
    b.endStep({ kind: 'tools' })
    b.startStep([], 'second system')
    s = replay(b.events).lifecycle
    expect([s.headerSeq, s.header?.system, s.header?.reason, s.lastStep, s.openStep]).toEqual([b.events.length - 1, 'second system', 'change', 2, 2])
    expect(s.pendingToolCalls).toEqual([])
  })

  it('a retry turn records its cause; compaction brackets open and close; session/end-seed is remembered', () => {
    const b = new LogBuilder()
    b.send('q')
    b.startStep(b.startTurn())
    b.respond({ text: 'a' })
    b.endStep({ kind: 'stop' })
    b.endTurn({ kind: 'completed' })
    b.seedEnd()
    const seed = b.events.length - 1
    b.startTurn(undefined)
    expect(replay(b.events).lifecycle).toMatchObject({ openTurn: 2, lastTurn: 2, lastStep: 0, openTurnCause: null, seedEndSeq: seed })
    b.compact(0, 1)
    const start = b.events.findIndex((e) => e.type === 'compaction/start')
    expect(stateAt(b.events, start).lifecycle.openCompaction).toBe('c1')
    expect(replay(b.events).lifecycle.openCompaction).toBeNull()
    b.startStep(b.claimNextStep())
    b.failRequest({ code: 'SERVER', message: 'x' })
    b.endStep({ kind: 'failed', failure: { code: 'SERVER', message: 'x' } })
    b.endTurn({ kind: 'error', failure: { code: 'SERVER', message: 'x' } })
    b.startTurn(2)
    expect(replay(b.events).lifecycle).toMatchObject({
      openTurn: 3, openTurnCause: { kind: 'retry', of: 2 }, lastStepOutcome: { kind: 'failed' },
      lastTurnEndReason: { kind: 'error', failure: { code: 'SERVER' } },
    })
  })
})

describe('transcript', () => {
  it('a failed step keeps its stream usage and failure, the retry follows it, the retry turn says what it retries', () => {
    const b = new LogBuilder()
    b.send('q')
    b.startStep(b.startTurn())
    b.failRequest({ code: 'RATE_LIMIT', message: 'slow', status: 429 })
    b.endStep({ kind: 'failed', failure: { code: 'RATE_LIMIT', message: 'slow', status: 429 } })
    b.retry(1, { code: 'RATE_LIMIT', message: 'slow', status: 429 })
    b.endTurn({ kind: 'error', failure: { code: 'RATE_LIMIT', message: 'slow', status: 429 } })
    b.startStep(b.startTurn(1))
    b.respond({ text: 'fine' })
    b.endStep({ kind: 'stop' })
    b.endTurn({ kind: 'completed' })
    b.seedEnd()
    const items = replay(b.events).transcript.items
    expect(items.map((i) => i.kind)).toEqual(['turn', 'turn', 'seed-end'])
    const [t1, t2] = items as [TranscriptTurn, TranscriptTurn]
    expect(t1.items.map((i) => i.kind)).toEqual(['step', 'retry'])
    const step = t1.items[0] as TranscriptStep
    expect(step.messages.map((m) => m.type)).toEqual(['user/message'])
    expect(step).toMatchObject({ usage: { inputTokens: 5, outputTokens: 1 }, end: { outcome: { kind: 'failed', failure: { code: 'RATE_LIMIT', status: 429 } } } })
    expect(t1.items[1] as TranscriptRetry).toMatchObject({ turn: 1, step: 1, attempt: 1, delayMs: 500, failure: { code: 'RATE_LIMIT' } })
    expect(t1.end?.reason).toMatchObject({ kind: 'error' })
    expect(t2).toMatchObject({ turn: 2, cause: { kind: 'retry', of: 1 }, end: { reason: { kind: 'completed' } } })
  })

  it('an interrupted assistant message and a tool error are recorded as such', () => {
    const b = new LogBuilder()
    b.send('q')
    b.startStep(b.startTurn())
    b.runTools(b.respond({ text: '', calls: 2 }), { errorAt: 1 })
    b.endStep({ kind: 'tools' })
    b.startStep([])
    const chunks = b.chunks([{ type: 'block-start', index: 0, blockType: 'text' }, { type: 'text-delta', index: 0, text: 'hal' }])
    b.emit({
      type: 'assistant/message',
      data: { turn: 1, step: 2, message: { role: 'assistant', content: [{ type: 'text', text: 'hal' }] }, finish: 'stop', interrupted: true },
      surfaceOp: 'append', sourceEventSeqs: chunks,
    })
    b.endStep({ kind: 'aborted' })
    b.endTurn({ kind: 'aborted', cause: { kind: 'user' } })
    const s = replay(b.events)
    const [s1, s2] = (s.transcript.items[0] as TranscriptTurn).items as [TranscriptStep, TranscriptStep]
    expect(s1.messages[3]).toMatchObject({ type: 'tool/result', error: { code: 'TOOL_ERROR' }, message: { isError: true } })
    expect(s1.messages[2]!.error).toBeUndefined()
    expect(s2.messages[0]).toMatchObject({ type: 'assistant/message', interrupted: true, finish: 'stop' })
    expect(s.history.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'hal' }] })
  })
})
