import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { StreamChunk } from '../../events/chunks.js'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import type { CheckerOptions } from '../../events/invariants/types.js'
import { Failure, Usage, UserMessage, Block } from '../../events/messages.js'
import { StreamGrammar } from '../../events/grammar.js'
import { Session } from '../../events/session.js'
import { verify } from '../../replay/verify.js'
import {
  arbBlock, arbFailure, arbLogMutation, arbStreamChunks, arbUsage, arbUserMessage, arbValidLog, arbValidLogWithPlan,
  buildLog, checkerOptionsFor, LOG_INVARIANTS, mutateToBreak,
} from '../../testing/index.js'
import { longRuns } from '../fc-runs.js'
import { censusSeed } from '../support/census-seed.js'

const OPTS = checkerOptionsFor()

/** Appends every event through a checking Session; returns the first refusal, or null. */
function appendAll(log: readonly LogEvent[], check: CheckerOptions): { seq: number; invariant: string; message: string } | null {
  let i = 0
  const s = new Session({ id: 'arb', clock: () => log[i]!.time, check })
  for (; i < log.length; i++) {
    const e = log[i]!
    try {
      s.append({ type: e.type, data: e.data, surfaceOp: e.surfaceOp, sourceEventSeqs: e.sourceEventSeqs as number[] } as never)
    } catch (err) {
      if (TurnlogError.is(err) && err.code === 'INVARIANT') return { seq: err.seq!, invariant: err.invariant!, message: err.message }
      throw err
    }
  }
  expect(s.events).toEqual(log)
  return null
}

function show(log: readonly LogEvent[], around: number): string {
  return log
    .slice(Math.max(0, around - 12), around + 3)
    .map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 140)}${e.surfaceOp ? ` op=${JSON.stringify(e.surfaceOp)}` : ''}${e.sourceEventSeqs ? ` src=${JSON.stringify(e.sourceEventSeqs)}` : ''}`)
    .join('\n')
}

function assertValid(log: readonly LogEvent[], check: CheckerOptions = OPTS): void {
  const refused = appendAll(log, check)
  if (refused) expect.fail(`Session refused seq ${refused.seq} (${refused.invariant}): ${refused.message}\n${show(log, refused.seq)}`)
  const v = verify(log, check)
  if (!v.ok) expect.fail(`verify: ${JSON.stringify(v.violations.slice(0, 3))}\n${show(log, v.violations[0]!.seq)}`)
  // Complete: seq from 0, time non-decreasing, no turn left open, no step left open.
  let open = false
  log.forEach((e, i) => {
    expect(e.seq).toBe(i)
    if (i > 0) expect(e.time).toBeGreaterThanOrEqual(log[i - 1]!.time)
    if (e.type === 'turn/start') open = true
    if (e.type === 'turn/end') open = false
  })
  expect(open).toBe(false)
}

describe('arbValidLog (L1–L16 hold by construction)', () => {
  // 250 runs in `npm test`, the full 1000 with TURNLOG_LONG=1 (`npm run test:long`, and CI's Node 24 lane; test/fc-runs.ts longRuns)
  it(`L1–L16: every generated log is accepted by Session and by verify (${longRuns(250, 1000)} runs)`, () => {
    fc.assert(fc.property(arbValidLog(), (log) => assertValid(log)), { numRuns: longRuns(250, 1000) })
  })

  it('L1–L16: logs with other budgets (maxStepsPerTurn 1 and 5, maxRetries 1) are valid under those budgets', () => {
    for (const o of [{ maxStepsPerTurn: 1, maxRetries: 1 }, { maxStepsPerTurn: 5, maxRetries: 5 }]) {
      fc.assert(fc.property(arbValidLog(o), (log) => assertValid(log, checkerOptionsFor(o))), { numRuns: 150 })
    }
  })

  it('L1–L16: big logs are valid', () => {
    let events = 0
    fc.assert(
      fc.property(arbValidLog({ big: true }), (log) => {
        events += log.length
        assertValid(log)
      }),
      { numRuns: 6 },
    )
    expect(events / 6).toBeGreaterThan(1000)
  })

  it('is deterministic: a plan builds the same log twice', () => {
    fc.assert(
      fc.property(arbValidLogWithPlan(), ({ plan, log }) => {
        expect(buildLog(plan, OPTS)).toEqual(log)
      }),
      { numRuns: 100 },
    )
  })

  it('covers every event type, turn end reason and step outcome (and the finer shapes)', () => {
    const seen = new Map<string, number>()
    const count = (k: string): void => {
      seen.set(k, (seen.get(k) ?? 0) + 1)
    }
    const logs = fc.sample(arbValidLog(), { numRuns: 400, seed: censusSeed(42) })
    for (const log of logs) {
      const shapesOfLog = new Set<string>()
      for (const e of log) {
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        const d = e.data as any
        shapesOfLog.add(`type ${e.type}`)
        if (e.type === 'turn/end') shapesOfLog.add(`turn-end ${d.reason.kind}`)
        if (e.type === 'turn/start' && d.cause) shapesOfLog.add('retry turn')
        if (e.type === 'step/end') shapesOfLog.add(`step-outcome ${d.outcome.kind}`)
        if (e.type === 'assistant/message') shapesOfLog.add(d.interrupted ? 'interrupted message' : `finish ${d.finish}`)
        if (e.type === 'assistant/chunk') shapesOfLog.add(`chunk ${d.chunk.type}${d.chunk.type === 'finish' ? ` ${d.chunk.reason}` : ''}`)
        // issue 23: what real providers send besides deltas
        if (e.type === 'assistant/chunk' && d.chunk.type === 'block-end' && d.chunk.providerData) shapesOfLog.add('chunk block-end providerData')
        if (e.type === 'assistant/chunk' && d.chunk.type === 'block') shapesOfLog.add(`whole ${d.chunk.block.type}${d.chunk.block.providerExecuted ? ' provider-executed' : ''}`)
        if (e.type === 'assistant/message' && d.explanation !== undefined) shapesOfLog.add('refusal explanation')
        if (e.type === 'assistant/message') {
          for (const b of d.message.content) {
            if (b.type === 'reasoning' && b.providerData?.anthropic?.signature) shapesOfLog.add('signed thinking')
            if (b.type === 'reasoning' && b.text === '' && b.providerData?.anthropic?.redactedData) shapesOfLog.add('redacted thinking')
            if (b.type === 'tool-call' && b.providerExecuted) shapesOfLog.add('message provider-executed call')
          }
          if (d.message.content.some((b: { providerExecuted?: boolean }) => b.providerExecuted) && d.finish === 'tool-calls') shapesOfLog.add('provider-executed beside runnable calls')
        }
        if (e.type === 'tool/result' && e.surfaceOp === 'append') shapesOfLog.add(`tool-result ${d.error?.code ?? 'ok'}`)
        if (e.type === 'tool/result' && e.surfaceOp !== 'append') shapesOfLog.add('pruned tool/result')
        if (e.type === 'user/message') shapesOfLog.add(`user-message source ${d.message.source.kind}`)
        if (e.type === 'request/header') shapesOfLog.add(`header ${d.reason}`)
        if (e.type === 'compaction/end') shapesOfLog.add(d.error ? 'compaction failed' : 'compaction ok')
        if (e.type === 'agent/inbox/spliced') {
          shapesOfLog.add(d.outcome === 'canceled' ? (d.inserted.length > 0 ? 'splice replace' : 'splice cancel') : d.removedCount ? `claim ${d.target}` : `send ${d.target}`)
        }
      }
      for (const s of shapesOfLog) count(s)
    }
    const required = [
      ...['turn/start', 'turn/end', 'step/start', 'step/end', 'user/message', 'assistant/chunk', 'assistant/message',
        'tool/call', 'tool/result', 'request/header', 'agent/inbox/spliced', 'llm/retry', 'compaction/start',
        'compaction/summary', 'compaction/prune', 'compaction/end', 'session/end-seed'].map((t) => `type ${t}`),
      ...['completed', 'max-tokens', 'blocked', 'step-limit', 'aborted', 'error', 'interrupted', 'forked'].map((r) => `turn-end ${r}`),
      ...['tools', 'stop', 'concluded', 'max-tokens', 'failed', 'aborted'].map((o) => `step-outcome ${o}`),
      'retry turn', 'interrupted message', 'finish stop', 'finish tool-calls', 'finish max-tokens', 'chunk finish error',
      'chunk finish aborted', 'chunk usage', 'chunk reasoning-delta', 'tool-result ok', 'tool-result UNKNOWN_TOOL',
      'tool-result DENIED', 'tool-result TOOL_ERROR', 'tool-result ABORTED', 'tool-result ABORTED_BEFORE_DISPATCH',
      'tool-result TOOL_OUTCOME_UNKNOWN', 'pruned tool/result', 'user-message source tool', 'user-message source hook',
      'user-message source compaction', 'header initial', 'header change', 'header resume', 'compaction failed',
      'compaction ok', 'splice replace', 'splice cancel', 'claim next-turn', 'claim next-step', 'send next-step',
      'finish refusal', 'chunk finish refusal', 'refusal explanation', 'chunk block-end providerData', 'signed thinking',
      'redacted thinking', 'whole source', 'whole file', 'whole tool-call provider-executed', 'whole tool-result',
      'message provider-executed call', 'provider-executed beside runnable calls',
    ]
    const missing = required.filter((k) => !seen.has(k))
    expect(missing, `never generated: ${missing.join(', ')}`).toEqual([])
    // Every required shape in at least 1% of the logs.
    const rare = required.filter((k) => seen.get(k)! < logs.length / 100)
    expect(rare, `rarer than 1%: ${rare.join(', ')}`).toEqual([])
  })
})

describe('one-invariant mutations (first violation is the named invariant at the named seq)', () => {
  it.each(LOG_INVARIANTS)('%s: mutated logs are rejected by verify with that invariant first (200 runs)', (inv) => {
    const variants = new Set<string>()
    fc.assert(
      fc.property(arbLogMutation(inv), (m) => {
        variants.add(m.description.replace(/\([^)]*\)/g, '').replace(/[\w/-]*\d[\w.-]*/g, '#'))
        expect(m.invariant).toBe(inv)
        const v = verify(m.log, OPTS)
        const first = v.violations[0]
        if (!first || first.invariant !== inv || first.seq !== m.seq) {
          expect.fail(`${m.description}: expected ${inv} at ${m.seq}, verify says ${JSON.stringify(v.violations.slice(0, 3))}\n${show(m.log, first?.seq ?? m.seq)}`)
        }
        if (inv !== 'L1') {
          // Session assigns seqs itself, so L1 is verify's alone; the others refuse the append.
          const refused = appendAll(m.log, OPTS)
          expect(refused, m.description).not.toBeNull()
          expect({ invariant: refused!.invariant, seq: refused!.seq }).toEqual({ invariant: inv, seq: m.seq })
        }
      }),
      { numRuns: 200 },
    )
    // Each invariant is broken in more than one way.
    expect(variants.size, [...variants].join(' | ')).toBeGreaterThanOrEqual(2)
  })

  it('mutateToBreak returns null when the log lacks the shape (L16 needs an llm/retry)', () => {
    const log = fc.sample(arbValidLog({ stepWeights: { fail: 0 } }), { numRuns: 1, seed: 7 })[0]!
    expect(mutateToBreak(log, 'L16', 0)).toBeNull()
    expect(mutateToBreak(log, 'L14', 0)).not.toBeNull()
  })
})

describe('building-block arbitraries', () => {
  it('arbStreamChunks obeys the stream grammar and the chunk schema', () => {
    fc.assert(
      fc.property(arbStreamChunks(), (chunks) => {
        const g = new StreamGrammar()
        for (const c of chunks) {
          expect(StreamChunk.safeParse(c).success).toBe(true)
          expect(g.push(c)).toBeNull()
        }
        expect(g.finished).toBe(true)
      }),
      { numRuns: 300 },
    )
  })

  it('arbUserMessage, arbBlock, arbUsage, arbFailure produce schema-valid values', () => {
    fc.assert(
      fc.property(arbUserMessage(), arbBlock(), arbUsage(), arbFailure(), (m, b, u, f) => {
        expect(UserMessage.safeParse(m).success).toBe(true)
        expect(Block.safeParse(b).success).toBe(true)
        expect(Usage.safeParse(u).success).toBe(true)
        expect(Failure.safeParse(f).success).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})
