/**
 * Unit tests of the three pieces: the token meter (anchor + signed delta, full estimate, the live
 * projection equals a fold of the whole log), the pruner's text cut, and the summariser's range
 * choice (the cut never separates a tool call from its results; too small is declined).
 */
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import {
  ContextMeter, charTokenizer, chooseRange, estimateHeader, estimateMessage, prunedText, pruneMarker,
} from '../../compaction/index.js'
import type { LogEvent } from '../../events/index.js'
import { findLossy } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { bigTool, expectValid, make } from './helpers.js'

const long = (c: string, n = 400) => c.repeat(n)

describe('token meter', () => {
  it('without provider usage the measure is the full estimate: header + every visible message', async () => {
    const m = make([{ text: 'hi there' }], [], { contextWindow: 100_000 })
    m.agent.followup('hello')
    await m.agent.whenIdle()
    const header = m.agent.lifecycle.header!
    const expected = estimateHeader(header.system, header.tools) + estimateMessage(m.agent.history()[0]!) + estimateMessage(m.agent.history()[1]!)
    const got = m.plugin.measure(m.agent)
    expect(got).toMatchObject({ source: 'estimate', tokens: expected, estimate: expected, window: 100_000 })
    // ceil(chars/4) + 4 per message: 'hello' → 6, 'hi there' → 6.
    expect(estimateMessage(m.agent.history()[0]!)).toBe(6)
  })

  it('provider usage anchors the measure; later appends and replacements are a signed estimated delta', async () => {
    const m = make(
      [
        { text: 'hi there', usage: { inputTokens: 1000, outputTokens: 5, cacheReadTokens: 200, cacheWriteTokens: 10 } },
        { toolCalls: [{ name: 'big', args: { n: 2000 } }] },
        { text: 'done' },
      ],
      [],
      { contextWindow: 100_000, pruneThresholdChars: 1000, pruneHead: 300, pruneTail: 100 },
    )
    m.agent.followup('hello')
    await m.agent.whenIdle()
    const anchorSeq = m.agent.events.findIndex((e) => e.type === 'assistant/message')
    expect(m.plugin.measure(m.agent)).toMatchObject({ source: 'usage', tokens: 1210 + 6, anchorSeq })
    m.agent.followup('again')
    await m.agent.whenIdle()
    await m.plugin.compactNow(m.agent) // prunes the 2,000-character result (a replacement)
    expect(m.agent.events.some((e) => e.type === 'compaction/prune')).toBe(true)
    // delta = (surface estimate now) − (surface estimate just before the anchoring message).
    const before = ContextMeter.fromLog(m.agent.events.slice(0, anchorSeq)).state.estimate
    const now = ContextMeter.fromLog(m.agent.events).state.estimate
    expect(m.plugin.measure(m.agent)).toMatchObject({ source: 'usage', tokens: 1210 + now - before })
    expect(now - before).toBeLessThan(2000 / 4) // the pruned result counts as its pruned size
    expectValid(m.agent.events)
  })

  it('a header change since the anchor falls back to the full estimate', () => {
    const meter = new ContextMeter()
    const ev = (seq: number, type: string, data: unknown, surfaceOp?: LogEvent['surfaceOp']): LogEvent =>
      ({ seq, time: seq, type, data, ...(surfaceOp ? { surfaceOp } : {}) }) as LogEvent
    const header = (seq: number, system: string) => ev(seq, 'request/header', { reason: 'initial', config: { model: 'x' }, system, tools: [] })
    const user = { id: 'u', role: 'user', content: [{ type: 'text', text: 'abcd' }], source: { kind: 'user' } }
    meter.apply(ev(0, 'user/message', { message: user }, 'append'))
    meter.apply(header(1, 'sys'))
    meter.apply(ev(2, 'assistant/message', {
      turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }, finish: 'stop',
      usage: { inputTokens: 50, outputTokens: 1 },
    }, 'append'))
    expect(meter.measure()).toMatchObject({ source: 'usage', tokens: 55 })
    meter.apply(header(3, 'a different system prompt'))
    expect(meter.measure()).toEqual({
      source: 'estimate', tokens: charTokenizer('a different system prompt') + 5 + 5, estimate: charTokenizer('a different system prompt') + 10,
    })
  })

  it('the live projection equals the meter folded from the whole log (P1 for the meter)', async () => {
    const m = make(
      [{ toolCalls: [{ name: 'big', args: { n: 5000 } }], usage: { inputTokens: 70, outputTokens: 3 } }, { text: long('a') }, { text: 'x' }],
      [{ text: 'short summary' }],
      { contextWindow: 1500, pruneThresholdChars: 800, pruneHead: 300, pruneTail: 100, minRangeTokens: 0 },
    )
    m.agent.followup(long('u'))
    await m.agent.whenIdle()
    m.agent.followup('more')
    await m.agent.whenIdle()
    const live = m.plugin.measure(m.agent)
    const folded = ContextMeter.fromLog(m.agent.events).measure()
    expect({ ...live, window: undefined }).toEqual({ ...folded, window: undefined })
    expect(m.agent.events.some((e) => e.type === 'compaction/prune')).toBe(true)
  })
})

describe('pruner text', () => {
  it('head + marker naming the cut characters + tail; short texts are unchanged', () => {
    expect(prunedText('abcdef', 3, 3)).toBe('abcdef')
    const t = 'H'.repeat(10) + 'x'.repeat(100) + 'T'.repeat(5)
    expect(prunedText(t, 10, 5)).toBe('H'.repeat(10) + pruneMarker(100) + 'T'.repeat(5))
    expect(pruneMarker(100)).toContain('100 characters pruned')
  })

  it('never splits a surrogate pair (the log refuses lone surrogates)', () => {
    const t = '😀'.repeat(50) // 100 code units
    for (const [h, tl] of [[3, 3], [4, 5], [1, 1], [7, 9]] as const) {
      const p = prunedText(t, h, tl)
      expect(findLossy({ p })).toBeNull()
      expect(p.length).toBeLessThanOrEqual(h + tl + pruneMarker(100).length)
    }
  })
})

describe('summary range', () => {
  /** A finished run without compaction: [u1, a1, u2, aCall(2 calls), r1, r2, aDone]. */
  async function surface() {
    const model = scriptedModel([
      { text: long('a') },
      { toolCalls: [{ name: 'big', args: { n: 200 } }, { name: 'big', args: { n: 300 } }] },
      { text: 'done' },
    ])
    const agent = createAgent({ model, tools: [bigTool], system: 'sys', clock: fakeClock(), ids: counterIds(), timers: instantTimers() })
    agent.followup(long('u'))
    await agent.whenIdle()
    agent.followup('go')
    await agent.whenIdle()
    const meter = ContextMeter.fromLog(agent.events)
    const seqs = [...meter.seqs]
    const tok = seqs.map((s) => meter.node(s)!.tokens)
    expect(seqs.map((s) => agent.events[s]!.type)).toEqual([
      'user/message', 'assistant/message', 'user/message', 'assistant/message', 'tool/result', 'tool/result', 'assistant/message',
    ])
    return { meter, seqs, tok }
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)

  it('a cut that would separate a tool call from its results moves before the call', async () => {
    const { meter, seqs, tok } = await surface()
    // Retaining exactly [r2, aDone] would cut between r1 and r2 (and between the call and r2).
    let r = chooseRange(meter, { retainTokens: sum(tok.slice(5)), minRangeTokens: 0 })
    expect(r).toMatchObject({ kind: 'range', seqs: seqs.slice(0, 3) })
    // Retaining [r1, r2, aDone] would cut between the call and r1: moves too.
    r = chooseRange(meter, { retainTokens: sum(tok.slice(4)), minRangeTokens: 0 })
    expect(r).toMatchObject({ kind: 'range', seqs: seqs.slice(0, 3) })
    // Retaining only [aDone] is a clean cut and stays.
    r = chooseRange(meter, { retainTokens: tok[6]!, minRangeTokens: 0 })
    expect(r).toMatchObject({ kind: 'range', seqs: seqs.slice(0, 6) })
  })

  it('retention 0 keeps the newest indivisible unit', async () => {
    const { meter, seqs } = await surface()
    expect(chooseRange(meter, { retainTokens: 0, minRangeTokens: 0 })).toMatchObject({ kind: 'range', seqs: seqs.slice(0, 6) })
  })

  it('a range below minRangeTokens, or nothing older than the tail, is declined', async () => {
    const { meter, tok } = await surface()
    const all = sum(tok)
    expect(chooseRange(meter, { retainTokens: all, minRangeTokens: 0 })).toMatchObject({ kind: 'declined' })
    const r = chooseRange(meter, { retainTokens: sum(tok.slice(3)), minRangeTokens: sum(tok.slice(0, 3)) + 1 })
    expect(r).toMatchObject({ kind: 'declined', reason: expect.stringContaining('too small') })
  })
})
