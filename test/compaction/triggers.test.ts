/**
 * Example tests of the two triggers and manual compaction, on small windows with scripted models.
 * Every log is checked by `verify` (L8, L14, L15 among the rest) and every turn request against the
 * history the log rebuilds at its seq (R3, with the driver's `checkRequests: 'full'` on as well).
 */
import { describe, expect, it } from 'vitest'
import { CompactionWarning, SUMMARY_PREFIX } from '../../compaction/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { findTranscriptMessage, type TranscriptState } from '../../reducers/transcript.js'
import { bigText, ctrace, expectRequestsFromLog, expectValid, make, textOf } from './helpers.js'

const long = (c: string, n = 400) => c.repeat(n)
const CWE = { error: { code: 'CONTEXT_WINDOW_EXCEEDED' } }
/** A small window; prune above 800 characters keeping 300 + 100. */
const SMALL = { contextWindow: 1000, pruneThresholdChars: 800, pruneHead: 300, pruneTail: 100 }

const of = <K extends LogEvent['type']>(events: readonly LogEvent[], type: K) => events.filter((e) => e.type === type)
const warnings = (m: ReturnType<typeof make>) => m.errors.filter((e) => e.error instanceof CompactionWarning)

describe('pressure (agent/pre-step)', () => {
  it('below the threshold nothing is written', async () => {
    const m = make([{ toolCalls: [{ name: 'big', args: { n: 200 } }] }, { text: 'done' }], [], SMALL)
    m.agent.followup('go')
    await m.agent.whenIdle()
    expect(ctrace(m.agent.events).filter((l) => l.startsWith('compaction'))).toEqual([])
    expect(m.plugin.measure(m.agent).tokens).toBeLessThan(800)
    expectValid(m.agent.events)
  })

  it('L15: above the threshold, pruning alone is enough (no summary); the pruned result is what the model sees next; idempotent', async () => {
    const m = make([{ toolCalls: [{ name: 'big', args: { n: 3200 } }] }, { text: 'done' }, { text: 'again' }], [], SMALL)
    m.agent.followup('go')
    await m.agent.whenIdle()
    const ev = m.agent.events
    const resultSeq = ev.findIndex((e) => e.type === 'tool/result')
    expect(ctrace(ev).slice(-9)).toEqual([
      'assistant/message tool-calls',
      'tool/result call_1',
      'step/end 1.1 tools',
      `compaction/prune call_1 ${resultSeq} 3200`,
      `tool/result call_1 replace ${resultSeq}..${resultSeq}`,
      'step/start 1.2',
      'assistant/message stop',
      'step/end 1.2 stop',
      'turn/end 1 completed',
    ])
    const replacing = ev.find((e) => e.type === 'tool/result' && e.surfaceOp !== 'append') as EventOf<'tool/result'>
    expect(ev[replacing.seq - 1]!.type).toBe('compaction/prune')
    expect(replacing.sourceEventSeqs).toEqual([resultSeq])
    const text = textOf(replacing.data.message)
    expect(text.startsWith('HEAD-r:')).toBe(true)
    expect(text.endsWith(':TAIL-r')).toBe(true)
    expect(text).toContain('2800 characters pruned')
    // The second request carries the pruned result, exactly as logged.
    const sent = m.turnRequests[1]!.request.messages
    expect(sent[sent.length - 1]).toBe(replacing.data.message)
    // Idempotent: another turn prunes nothing more.
    m.agent.followup('more')
    await m.agent.whenIdle()
    expect(of(m.agent.events, 'compaction/prune')).toHaveLength(1)
    expect(of(m.agent.events, 'compaction/start')).toHaveLength(0)
    expectRequestsFromLog(m)
    expectValid(m.agent.events)
  })

  it('L14, R3: above the threshold after pruning, the oldest range is summarised; the model sees exactly the derived surface; the transcript keeps every original, marked', async () => {
    // 4 turns of 2 × 104 tokens fill 832 of a 1,000 window: turn 5's pre-step is above 0.8.
    const turns = [{ text: long('a') }, { text: long('b') }, { text: long('c') }, { text: long('d') }, { text: 'e' }]
    const m = make(turns, [{ text: 'the user sent u1..u4 and got a1..a4' }], SMALL)
    for (const u of ['1', '2', '3', '4', '5']) {
      m.agent.followup(long(u))
      await m.agent.whenIdle()
    }
    const ev = m.agent.events
    const users = of(ev, 'user/message').filter((e) => e.surfaceOp === 'append').map((e) => e.seq)
    const assistants = of(ev, 'assistant/message').map((e) => e.seq)
    // Retained tail (0.16 × 1,000 = 160 tokens): only a4 (104); the range is u1..u4 (7 messages).
    const hidden = [users[0]!, assistants[0]!, users[1]!, assistants[1]!, users[2]!, assistants[2]!, users[3]!]
    expect(ctrace(ev).filter((l) => l.startsWith('compaction') || l.includes('replace'))).toEqual([
      'compaction/start',
      `compaction/summary [${hidden.join(',')}]`,
      `user/message compaction replace ${hidden[0]}..${hidden[6]}`,
      'compaction/end',
    ])
    const start = ev.findIndex((e) => e.type === 'compaction/start')
    expect(ev[start]!.data).toEqual({ compactionId: expect.any(String), turn: 5 })
    const replacing = ev[start + 2] as EventOf<'user/message'>
    expect(replacing.sourceEventSeqs).toEqual(hidden)
    expect(textOf(replacing.data.message)).toBe(SUMMARY_PREFIX + 'the user sent u1..u4 and got a1..a4')
    // The summary request: purpose, the last header's system and tools, the range + the instruction.
    const sreq = m.summaryRequests[0]!.request
    expect(sreq.purpose).toBe('compaction')
    expect(sreq.system).toBe('sys')
    expect(sreq.tools).toEqual(m.agent.lifecycle.header!.tools)
    expect(sreq.messages.slice(0, 7)).toEqual(hidden.map((s) => (ev[s]!.data as { message: unknown }).message))
    expect(sreq.messages).toHaveLength(8)
    // The fifth request: summary, a4, u5 — the derived surface.
    const last = m.turnRequests[4]!.request.messages
    expect(last).toEqual([replacing.data.message, (ev[assistants[3]!]!.data as { message: unknown }).message, (ev[users[4]!]!.data as { message: unknown }).message])
    expectRequestsFromLog(m)
    // The transcript still shows every original message, marked as compacted.
    const t = m.agent.transcript() as TranscriptState
    for (const s of hidden) expect(findTranscriptMessage(t, s)).toMatchObject({ replaced: true, replacedBy: replacing.seq, replacedAs: 'compacted' })
    expect(findTranscriptMessage(t, assistants[3]!)?.replaced).toBeUndefined()
    expectValid(ev)
  })

  it('a range too small is declined: nothing is written and the step runs', async () => {
    // One unprunable 16,000-character result (4,004 tokens) is the newest unit; older is 'go' (5 tokens).
    const m = make([{ toolCalls: [{ name: 'big', args: { n: 16000 } }] }, { text: 'done' }], [], { contextWindow: 5000, pruneThresholdChars: 100_000 })
    m.agent.followup('go')
    await m.agent.whenIdle()
    expect(m.plugin.measure(m.agent).tokens).toBeGreaterThan(4000)
    expect(ctrace(m.agent.events).filter((l) => l.startsWith('compaction'))).toEqual([])
    expect(m.summaryRequests).toHaveLength(0)
    expect(ctrace(m.agent.events).at(-1)).toBe('turn/end 1 completed')
    expectValid(m.agent.events)
  })

  it('L14: a failed summary is a warning, never a failed turn: compactionRetries + 1 brackets end with the error, the step runs', async () => {
    const turns = [{ text: long('a') }, { text: long('b') }, { text: long('c') }, { text: long('d') }, { text: 'e' }]
    const m = make(turns, [{ error: { code: 'SERVER' } }, { throw: new Error('summariser down') }], SMALL)
    for (const u of ['1', '2', '3', '4', '5']) {
      m.agent.followup(long(u))
      await m.agent.whenIdle()
    }
    expect(ctrace(m.agent.events).filter((l) => l.startsWith('compaction'))).toEqual([
      'compaction/start', 'compaction/end SERVER', 'compaction/start', 'compaction/end UNKNOWN',
    ])
    expect(warnings(m).map((w) => w.where)).toEqual(['compaction', 'compaction'])
    expect(ctrace(m.agent.events).at(-1)).toBe('turn/end 5 completed')
    expectValid(m.agent.events)
  })

  it('L14: a summary not smaller than its range is rejected', async () => {
    const turns = [{ text: long('a') }, { text: long('b') }, { text: long('c') }, { text: long('d') }, { text: 'e' }]
    const m = make(turns, [{ text: long('s', 4000) }], { ...SMALL, compactionRetries: 0 })
    for (const u of ['1', '2', '3', '4', '5']) {
      m.agent.followup(long(u))
      await m.agent.whenIdle()
    }
    expect(ctrace(m.agent.events).filter((l) => l.startsWith('compaction'))).toEqual(['compaction/start', 'compaction/end SUMMARY_NOT_SMALLER'])
    expect(of(m.agent.events, 'compaction/summary')).toHaveLength(0)
    expectValid(m.agent.events)
  })
})

/** Turn 1 with long messages (something to summarise), then turn 2 asks for a big tool result. */
function overflowScript(after: readonly object[]) {
  return [{ text: long('a') }, { toolCalls: [{ name: 'big', args: { n: 3000 } }] }, ...after]
}
async function twoTurns(m: ReturnType<typeof make>) {
  m.agent.followup(long('u'))
  await m.agent.whenIdle()
  m.agent.followup('go')
  await m.agent.whenIdle()
}

describe('overflow (agent/request-error)', () => {
  it('R6: overflow → prune → retry turn (the prune alone advanced the generation)', async () => {
    const m = make(overflowScript([CWE, { text: 'done' }]), [], { ...SMALL, contextWindow: 1300 })
    await twoTurns(m)
    const ev = m.agent.events
    const resultSeq = ev.findIndex((e) => e.type === 'tool/result')
    expect(ctrace(ev).slice(ctrace(ev).indexOf('step/start 2.2'))).toEqual([
      'step/start 2.2',
      'step/end 2.2 failed CONTEXT_WINDOW_EXCEEDED',
      `compaction/prune call_1 ${resultSeq} 3000`,
      `tool/result call_1 replace ${resultSeq}..${resultSeq}`,
      'turn/end 2 error CONTEXT_WINDOW_EXCEEDED',
      'turn/start 3 retry-of 2',
      'step/start 3.1',
      'assistant/message stop',
      'step/end 3.1 stop',
      'turn/end 3 completed',
    ])
    expect(m.summaryRequests).toHaveLength(0)
    expectRequestsFromLog(m)
    expectValid(ev)
  })

  it('R6: overflow where nothing can be compacted: the original error stands', async () => {
    const m = make([CWE], [], SMALL)
    m.agent.followup('hi')
    await m.agent.whenIdle()
    expect(ctrace(m.agent.events).slice(-2)).toEqual(['step/end 1.1 failed CONTEXT_WINDOW_EXCEEDED', 'turn/end 1 error CONTEXT_WINDOW_EXCEEDED'])
    expect(ctrace(m.agent.events).filter((l) => l.startsWith('compaction'))).toEqual([])
    expectValid(m.agent.events)
  })

  it('R6, L14: a summary that throws after a prune still retries (the prune advanced the generation)', async () => {
    // No window known: the pressure trigger is off; overflow prunes, then summarises regardless.
    const m = make(overflowScript([CWE, { text: 'done' }]), [{ throw: new Error('down') }, { throw: new Error('down') }], SMALL_NO_WINDOW())
    await twoTurns(m)
    expect(ctrace(m.agent.events).filter((l) => l.startsWith('compaction') || l.startsWith('turn/'))).toEqual([
      'turn/start 1', 'turn/end 1 completed', 'turn/start 2',
      expect.stringMatching(/^compaction\/prune call_1/),
      'compaction/start', 'compaction/end UNKNOWN', 'compaction/start', 'compaction/end UNKNOWN',
      'turn/end 2 error CONTEXT_WINDOW_EXCEEDED', 'turn/start 3 retry-of 2', 'turn/end 3 completed',
    ])
    expect(m.summaryRequests).toHaveLength(2)
    expect(warnings(m)).toHaveLength(2)
    expectRequestsFromLog(m)
    expectValid(m.agent.events)
  })

  it('R6: cancellation beats retry (the generation advanced, but the turn was cancelled during recovery)', async () => {
    let m!: ReturnType<typeof make>
    const summary = () => {
      m.agent.cancel({ kind: 'user' })
      return { text: 'never used' }
    }
    // An outer listener (options.hooks come before plugins) records what the plugin decided.
    const decisions: unknown[] = []
    m = make(overflowScript([CWE, { text: 'not reached' }]), [summary], SMALL_NO_WINDOW(), {
      hooks: { 'agent/request-error': async (_p, next) => {
        const d = await next()
        decisions.push(d)
        return d
      } },
    })
    await twoTurns(m)
    expect(decisions).toEqual([undefined])
    const lines = ctrace(m.agent.events)
    expect(lines.filter((l) => l.startsWith('compaction') || l.startsWith('turn/'))).toEqual([
      'turn/start 1', 'turn/end 1 completed', 'turn/start 2',
      expect.stringMatching(/^compaction\/prune call_1/),
      'compaction/start', 'compaction/end ABORTED',
      'turn/end 2 aborted user',
    ])
    expect(m.turnRequests).toHaveLength(3)
    expectValid(m.agent.events)
  })

  it.each([1, 2])('R6: the cap holds (maxOverflowRetries %i): later overflows of the same chain are not recovered, though compaction was possible', async (cap) => {
    const turns = [{ text: long('a') }, CWE, CWE, CWE, CWE]
    const summaries = [{ text: long('s', 100) }, { text: long('t', 50) }, { text: 'x' }]
    const m = make(turns, summaries, { ...SMALL_NO_WINDOW(), minRangeTokens: 0, maxOverflowRetries: cap })
    m.agent.followup(long('u'))
    await m.agent.whenIdle()
    m.agent.followup('go')
    await m.agent.whenIdle()
    const lines = ctrace(m.agent.events).filter((l) => l.startsWith('compaction/start') || l.startsWith('turn/'))
    const expected = ['turn/start 1', 'turn/end 1 completed', 'turn/start 2']
    for (let i = 0; i < cap; i++) expected.push('compaction/start', `turn/end ${2 + i} error CONTEXT_WINDOW_EXCEEDED`, `turn/start ${3 + i} retry-of ${2 + i}`)
    expected.push(`turn/end ${2 + cap} error CONTEXT_WINDOW_EXCEEDED`)
    expect(lines).toEqual(expected)
    expect(m.summaryRequests).toHaveLength(cap)
    expectValid(m.agent.events)
    // The budget is per failure chain: going idle resets it, so the next overflow recovers again.
    const m2 = m
    m2.agent.followup('next')
    await m2.agent.whenIdle()
    expect(m2.summaryRequests).toHaveLength(cap + 1)
  })

  it('R6: the budget resets on a successful assistant/message (a later overflow in the retry turn recovers again)', async () => {
    const turns = [{ text: long('a') }, CWE, { toolCalls: [{ name: 'big', args: { n: 10 } }] }, CWE, { text: 'ok' }]
    const m = make(turns, [{ text: long('s', 100) }, { text: 'x' }], { ...SMALL_NO_WINDOW(), minRangeTokens: 0 })
    m.agent.followup(long('u'))
    await m.agent.whenIdle()
    m.agent.followup('go')
    await m.agent.whenIdle()
    expect(ctrace(m.agent.events).filter((l) => /^(turn\/|compaction\/start|assistant)/.test(l))).toEqual([
      'turn/start 1', 'assistant/message stop', 'turn/end 1 completed',
      'turn/start 2', 'compaction/start', 'turn/end 2 error CONTEXT_WINDOW_EXCEEDED',
      'turn/start 3 retry-of 2', 'assistant/message tool-calls', 'compaction/start', 'turn/end 3 error CONTEXT_WINDOW_EXCEEDED',
      'turn/start 4 retry-of 3', 'assistant/message stop', 'turn/end 4 completed',
    ])
    expectRequestsFromLog(m)
    expectValid(m.agent.events)
  })

  it('maxOverflowRetries: 0 disables recovery (nothing pruned, the error stands)', async () => {
    const m = make(overflowScript([CWE]), [], { ...SMALL, contextWindow: 1300, maxOverflowRetries: 0 })
    await twoTurns(m)
    expect(ctrace(m.agent.events).filter((l) => l.startsWith('compaction'))).toEqual([])
    expect(ctrace(m.agent.events).at(-1)).toBe('turn/end 2 error CONTEXT_WINDOW_EXCEEDED')
    expectValid(m.agent.events)
  })

  it('R6, L16: transient and overflow retry budgets are independent in one run (1 each, in both orders)', async () => {
    const turns = [{ text: long('a') }, { error: { code: 'RATE_LIMIT' } }, CWE, { text: 'ok' }, CWE, { error: { code: 'RATE_LIMIT' } }, { text: 'ok2' }]
    const m = make(turns, [{ text: long('s', 100) }, { text: 'x' }], { ...SMALL_NO_WINDOW(), minRangeTokens: 0 }, { retry: { maxRetries: 1 } })
    m.agent.followup(long('u'))
    await m.agent.whenIdle()
    m.agent.followup('go')
    await m.agent.whenIdle()
    m.agent.followup('again')
    await m.agent.whenIdle()
    expect(ctrace(m.agent.events).filter((l) => /^(turn\/|llm\/retry|compaction\/start)/.test(l))).toEqual([
      'turn/start 1', 'turn/end 1 completed',
      // chain A: transient first, then overflow
      'turn/start 2', 'llm/retry 1 RATE_LIMIT', 'turn/end 2 error RATE_LIMIT',
      'turn/start 3 retry-of 2', 'compaction/start', 'turn/end 3 error CONTEXT_WINDOW_EXCEEDED',
      'turn/start 4 retry-of 3', 'turn/end 4 completed',
      // chain B: overflow first, then transient
      'turn/start 5', 'compaction/start', 'turn/end 5 error CONTEXT_WINDOW_EXCEEDED',
      'turn/start 6 retry-of 5', 'llm/retry 1 RATE_LIMIT', 'turn/end 6 error RATE_LIMIT',
      'turn/start 7 retry-of 6', 'turn/end 7 completed',
    ])
    expectRequestsFromLog(m)
    expectValid(m.agent.events)
  })
})

describe('manual compaction (compactNow)', () => {
  it('L14, L15: prunes and summarises from idle through runMaintenance; refused while running', async () => {
    const m = make(overflowScript([{ text: long('d') }, { text: 'later' }]), [{ text: 'summary' }], { ...SMALL, contextWindow: 1300 })
    await twoTurns(m)
    const report = await m.plugin.compactNow(m.agent)
    expect(report).toMatchObject({ trigger: 'manual', advanced: true, pruned: [expect.any(Number)], summaries: [{ kind: 'compacted' }] })
    expect(report.after.tokens).toBeLessThan(report.before.tokens)
    expect(m.agent.status).toBe('idle')
    const start = m.agent.events.find((e) => e.type === 'compaction/start')!
    expect(start.data).toEqual({ compactionId: expect.any(String), turn: 2 })
    m.agent.followup('next')
    await expect(m.plugin.compactNow(m.agent)).rejects.toMatchObject({ code: 'AGENT_BUSY' })
    await m.agent.whenIdle()
    expectRequestsFromLog(m)
    expectValid(m.agent.events)
  })

  it('options are checked: a prune that would not be idempotent is refused', () => {
    expect(() => make([], [], { pruneThresholdChars: 1000, pruneHead: 900, pruneTail: 100 })).toThrow(/idempotent/)
  })

  it('the context window comes from the model adapter when not given', async () => {
    const m = make([{ text: 'x' }], [], {}, {}, 4321)
    expect(m.plugin.measure(m.agent).window).toBe(4321)
    const m2 = make([{ text: 'x' }], [], { contextWindow: () => 999 }, {}, 4321)
    expect(m2.plugin.measure(m2.agent).window).toBe(999)
    expect(bigText(50)).toHaveLength(50)
  })
})

function SMALL_NO_WINDOW() {
  const { contextWindow: _w, ...rest } = SMALL
  return rest
}
