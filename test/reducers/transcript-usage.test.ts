/**
 * The transcript's usage figures (issue 15: per-step and summary usage were never asserted, so
 * dropping them survived mutation). A step's usage is its `assistant/message.usage` when present,
 * else its stream's `usage` chunk (a failed request); a compaction summary keeps the usage of the
 * summary call. P1: the incremental fold agrees with the batch fold on the same log.
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent, Usage } from '../../events/index.js'
import { createLiveProjection, foldEvents, type TopItem, type TranscriptCompaction, type TranscriptStep } from '../../reducers/index.js'
import { LogWriter, fail, text, um } from '../events/log-writer.js'

const chunkUsage: Usage = { inputTokens: 10, outputTokens: 5 }
const messageUsage: Usage = { inputTokens: 30, outputTokens: 7, cacheReadTokens: 20 }
const summaryUsage: Usage = { inputTokens: 900, outputTokens: 60 }

function log(): LogEvent[] {
  const w = new LogWriter()
  w.send(um('m1'))
  w.turnStart()
  // Step 1: the message's usage differs from the stream's usage chunk: the message wins.
  w.stepStart(w.claim())
  w.stream([text('a')], 'stop')
  w.append({ type: 'assistant/message', data: { turn: 1, step: 1, message: { role: 'assistant', content: [text('a')] }, finish: 'stop', usage: messageUsage }, surfaceOp: 'append', sourceEventSeqs: [...w.chunks] })
  w.stepEnd({ kind: 'stop' })
  w.turnEnd()
  // Turn 2: a request that failed after its usage chunk: the chunk's usage is the step's.
  w.send(um('m2'))
  w.turnStart()
  w.stepStart(w.claim())
  w.chunk({ type: 'usage', usage: chunkUsage })
  w.chunk({ type: 'finish', reason: 'error', failure: fail('SERVER') })
  w.stepEnd({ kind: 'failed', failure: fail('SERVER') })
  w.turnEnd({ kind: 'error', failure: fail('SERVER') })
  // A manual compaction between turns, with the summary call's usage; and one without usage.
  const first = w.session.events.find((e) => e.type === 'user/message')!.seq
  w.append({ type: 'compaction/start', data: { compactionId: 'k1', turn: 2 } })
  w.append({ type: 'compaction/summary', data: { compactionId: 'k1', summary: 'so far', shadowedSeqs: [first], usage: summaryUsage } })
  w.append({ type: 'user/message', data: { message: um('s1', 'so far', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start: first, end: first }, sourceEventSeqs: [first] })
  w.append({ type: 'compaction/end', data: { compactionId: 'k1' } })
  const second = w.session.events.find((e) => e.type === 'assistant/message')!.seq
  w.append({ type: 'compaction/start', data: { compactionId: 'k2', turn: 2 } })
  w.append({ type: 'compaction/summary', data: { compactionId: 'k2', summary: 'less', shadowedSeqs: [second] } })
  w.append({ type: 'user/message', data: { message: um('s2', 'less', { kind: 'compaction' }) }, surfaceOp: { op: 'replace', start: second, end: second }, sourceEventSeqs: [second] })
  w.append({ type: 'compaction/end', data: { compactionId: 'k2' } })
  return [...w.session.events]
}

function steps(items: readonly TopItem[]): TranscriptStep[] {
  return items.flatMap((t) => (t.kind === 'turn' ? t.items.filter((i): i is TranscriptStep => i.kind === 'step') : []))
}
function compactions(items: readonly TopItem[]): TranscriptCompaction[] {
  const out: TranscriptCompaction[] = []
  for (const t of items) {
    if (t.kind === 'compaction') out.push(t as TranscriptCompaction)
    if (t.kind === 'turn') for (const i of t.items) if (i.kind === 'compaction') out.push(i)
  }
  return out
}

describe('transcript usage', () => {
  const events = log()

  it('a step takes its assistant/message usage over its stream usage chunk; a failed step keeps the chunk usage', () => {
    const s = steps(foldEvents(events).transcript.items)
    expect(s.map((x) => [x.turn, x.step, x.usage])).toEqual([[1, 1, messageUsage], [2, 1, chunkUsage]])
    const msg = s[0]!.messages.find((m) => m.type === 'assistant/message')!
    expect(msg.usage).toEqual(messageUsage)
  })

  it('a compaction summary keeps the summary call usage, and has none when the call reported none', () => {
    const c = compactions(foldEvents(events).transcript.items)
    expect(c.map((x) => x.compactionId)).toEqual(['k1', 'k2'])
    expect(c[0]!.summary).toMatchObject({ summary: 'so far', usage: summaryUsage })
    expect(c[1]!.summary).not.toHaveProperty('usage')
  })

  it('P1: the live projection agrees', () => {
    const p = createLiveProjection()
    for (const e of events) p.apply(e)
    expect(p.state.transcript).toEqual(foldEvents(events).transcript)
  })
})
