/**
 * Re-execution of compacted sessions (issue 6: "re-execution reproduces compacted sessions"):
 * sessions recorded with the agent + `basicCompaction` + a scripted model, re-executed with the
 * same plugin options; the summariser's calls (`purpose: 'compaction'`) are served from the log.
 * Changing one compaction option must diverge at the first compaction event it changes.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { AgentOptions } from '../../agent/types.js'
import { basicCompaction, type CompactionOptions } from '../../compaction/index.js'
import type { LogEvent } from '../../events/index.js'
import type { ScriptedEntry } from '../../models/index.js'
import { reexecute, type ReexecuteResult } from '../../replay/reexecute.js'
import { verify } from '../../replay/verify.js'
import { MAX_STEPS, withTimeout } from './agent-runs.js'
import { arbCompactedCommands, arbCompactedScenario, recordCompactedRun } from './compacted-runs.js'
import { bigTool, ctrace, expectValid, make } from '../compaction/helpers.js'
import { censusSeed } from '../support/census-seed.js'

const long = (c: string, n = 400) => c.repeat(n)
const CWE = { error: { code: 'CONTEXT_WINDOW_EXCEEDED' } }
const SMALL: CompactionOptions = { contextWindow: 1000, pruneThresholdChars: 800, pruneHead: 300, pruneTail: 100 }
const { contextWindow: _w, ...NO_WINDOW } = SMALL
const FIVE = [{ text: long('a') }, { text: long('b') }, { text: long('c') }, { text: long('d') }, { text: 'e' }]

type Made = ReturnType<typeof make>

async function prompts(m: Made, texts: readonly string[]): Promise<void> {
  for (const t of texts) {
    m.agent.followup(t)
    await m.agent.whenIdle()
  }
}

/** Re-executes a made session with the same tools, compaction options and agent options. */
function again(m: Made, copts: CompactionOptions, aopts: Partial<AgentOptions> = {}, contextWindow?: number): Promise<ReexecuteResult> {
  return reexecute(m.agent.events, {
    tools: [bigTool],
    plugins: () => [basicCompaction(copts)],
    ...(aopts.retry !== undefined ? { retry: aopts.retry } : {}),
    ...(contextWindow !== undefined ? { contextWindow } : {}),
    stallMs: 500,
  })
}

function expectReproduced(r: ReexecuteResult, events: readonly LogEvent[]): void {
  if (!r.ok) throw new Error(r.divergence.diff)
  expect(r).toEqual({ ok: true, eventCount: events.length })
}

const compactionLines = (events: readonly LogEvent[]) => ctrace(events).filter((l) => l.startsWith('compaction'))

describe('reexecute: compacted sessions reproduce (P4 with the compaction plugin)', () => {
  it('pressure: a prune alone (L15)', async () => {
    const m = make([{ toolCalls: [{ name: 'big', args: { n: 3200 } }] }, { text: 'done' }, { text: 'again' }], [], SMALL)
    await prompts(m, ['go', 'more'])
    expect(compactionLines(m.agent.events)).toEqual([expect.stringMatching(/^compaction\/prune/)])
    expectReproduced(await again(m, SMALL), m.agent.events)
  })

  it('pressure: a summary (its text and usage served from compaction/summary)', async () => {
    const m = make(FIVE, [{ text: 'the user sent u1..u4', usage: { inputTokens: 900, outputTokens: 12 } }], SMALL)
    await prompts(m, ['1', '2', '3', '4', '5'].map((u) => long(u)))
    expect(compactionLines(m.agent.events)).toEqual(['compaction/start', expect.stringMatching(/^compaction\/summary/), 'compaction/end'])
    expect(m.agent.events.find((e) => e.type === 'compaction/summary')!.data).toMatchObject({ usage: { inputTokens: 900 } })
    expectReproduced(await again(m, SMALL), m.agent.events)
  })

  it('pressure: failed summaries (a model failure, a thrown error) are served as recorded', async () => {
    const m = make(FIVE, [{ error: { code: 'SERVER' } }, { throw: new Error('summariser down') }], SMALL)
    await prompts(m, ['1', '2', '3', '4', '5'].map((u) => long(u)))
    expect(compactionLines(m.agent.events)).toEqual(['compaction/start', 'compaction/end SERVER', 'compaction/start', 'compaction/end UNKNOWN'])
    expectReproduced(await again(m, SMALL), m.agent.events)
  })

  it('the summariser\'s own decisions: SUMMARY_NOT_SMALLER (same estimate) and EMPTY_SUMMARY', async () => {
    const opts = { ...SMALL, compactionRetries: 1 }
    const m = make(FIVE, [{ text: long('s', 4000) }, { reasoning: 'thinking', text: '  ' }], opts)
    await prompts(m, ['1', '2', '3', '4', '5'].map((u) => long(u)))
    expect(compactionLines(m.agent.events)).toEqual(['compaction/start', 'compaction/end SUMMARY_NOT_SMALLER', 'compaction/start', 'compaction/end EMPTY_SUMMARY'])
    expectReproduced(await again(m, opts), m.agent.events)
  })

  it('the window from the model (contextWindow option of reexecute)', async () => {
    const m = make(FIVE, [{ text: 'sum' }], NO_WINDOW, {}, 1000)
    await prompts(m, ['1', '2', '3', '4', '5'].map((u) => long(u)))
    expect(compactionLines(m.agent.events)).toContain('compaction/end')
    expectReproduced(await again(m, NO_WINDOW, {}, 1000), m.agent.events)
    // without it the pressure trigger is off: the re-execution diverges where the recording compacted
    const r = await again(m, NO_WINDOW)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.divergence.expected?.type).toMatch(/^compaction\//)
  })

  it('overflow → prune → retry turn (R6)', async () => {
    const opts = { ...SMALL, contextWindow: 1300 }
    const m = make([{ text: long('a') }, { toolCalls: [{ name: 'big', args: { n: 3000 } }] }, CWE, { text: 'done' }], [], opts)
    await prompts(m, [long('u'), 'go'])
    expect(ctrace(m.agent.events)).toContain('turn/start 3 retry-of 2')
    expectReproduced(await again(m, opts), m.agent.events)
  })

  it('overflow: summaries that throw after a prune, then the retry; the cap and its reset on success', async () => {
    const m = make([{ text: long('a') }, { toolCalls: [{ name: 'big', args: { n: 3000 } }] }, CWE, { text: 'done' }], [{ throw: new Error('down') }, { throw: new Error('down') }], NO_WINDOW)
    await prompts(m, [long('u'), 'go'])
    expectReproduced(await again(m, NO_WINDOW), m.agent.events)

    const opts = { ...NO_WINDOW, minRangeTokens: 0 }
    const m2 = make([{ text: long('a') }, CWE, { toolCalls: [{ name: 'big', args: { n: 10 } }] }, CWE, { text: 'ok' }], [{ text: long('s', 100) }, { text: 'x' }], opts)
    await prompts(m2, [long('u'), 'go'])
    expect(ctrace(m2.agent.events).filter((l) => l.includes('retry-of'))).toHaveLength(2)
    expectReproduced(await again(m2, opts), m2.agent.events)
  })

  it('transient and overflow retries in one run', async () => {
    const opts = { ...NO_WINDOW, minRangeTokens: 0 }
    const m = make([{ text: long('a') }, { error: { code: 'SERVER' } }, CWE, { text: 'ok' }], [{ text: 'x' }], opts, { retry: { maxRetries: 1 } })
    await prompts(m, [long('u'), 'go'])
    expect(ctrace(m.agent.events).some((l) => l.startsWith('llm/retry'))).toBe(true)
    expectReproduced(await again(m, opts, { retry: { maxRetries: 1 } }), m.agent.events)
  })

  it('a cancel during the recovery summary (ABORTED bracket): the cancel is re-issued, the turn ends aborted', async () => {
    let m!: Made
    const summary = () => {
      m.agent.cancel({ kind: 'user' })
      return { text: 'never used' }
    }
    m = make([{ text: long('a') }, { toolCalls: [{ name: 'big', args: { n: 3000 } }] }, CWE, { text: 'x' }], [summary], NO_WINDOW)
    m.agent.followup(long('u'))
    await m.agent.whenIdle()
    m.agent.followup('go')
    m.agent.followup('queued') // cleared by the cancel
    await m.agent.whenIdle()
    expect(compactionLines(m.agent.events)).toEqual([expect.stringMatching(/^compaction\/prune/), 'compaction/start', 'compaction/end ABORTED'])
    expectReproduced(await again(m, NO_WINDOW), m.agent.events)
  })

  it('a manual compaction (compactNow) is re-issued; a followup sent during it is latched and runs after it', async () => {
    const opts = { ...SMALL, contextWindow: 1300 }
    let m!: Made
    const summary = (): ScriptedEntry => {
      m.agent.followup('during the compaction')
      return { text: 'summary' }
    }
    m = make([{ text: long('a') }, { toolCalls: [{ name: 'big', args: { n: 3000 } }] }, { text: long('d') }, { text: 'later' }], [summary, { text: 's2' }], opts)
    await prompts(m, [long('u'), 'go'])
    await m.plugin.compactNow(m.agent)
    await m.agent.whenIdle()
    await m.plugin.compactNow(m.agent)
    const lines = ctrace(m.agent.events)
    expect(lines.indexOf('compaction/end') + 1).toBe(lines.indexOf('turn/start 3'))
    expectValid(m.agent.events)
    expectReproduced(await again(m, opts), m.agent.events)
  })
})

describe('reexecute: a changed compaction option diverges at the first compaction event it changes', () => {
  it('thresholdRatio: a lower threshold compacts earlier (an extra compaction event where the recording continued)', async () => {
    const m = make(FIVE, [{ text: 'sum' }, { text: 'sum' }, { text: 'sum' }], SMALL)
    await prompts(m, ['1', '2', '3', '4', '5'].map((u) => long(u)))
    const first = m.agent.events.find((e) => e.type.startsWith('compaction/'))!
    const r = await again(m, { ...SMALL, thresholdRatio: 0.5 })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.divergence.seq).toBeLessThan(first.seq)
    expect(r.divergence.actual?.type).toMatch(/^compaction\//)
    expect(r.divergence.kind).toBe('mismatch')
  })

  it('thresholdRatio: a higher threshold (1) does not compact where the recording did', async () => {
    const m = make(FIVE, [{ text: 'sum' }], SMALL)
    await prompts(m, ['1', '2', '3', '4', '5'].map((u) => long(u)))
    const first = m.agent.events.find((e) => e.type.startsWith('compaction/'))!
    const r = await again(m, { ...SMALL, thresholdRatio: 1 })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.divergence.seq).toBe(first.seq)
    expect(r.divergence.expected).toEqual(first)
  })

  it('pruneThresholdChars / pruneHead: the prune diverges at its compaction/prune or its replacing result', async () => {
    const m = make([{ toolCalls: [{ name: 'big', args: { n: 3200 } }] }, { text: 'done' }, { text: 'again' }], [], SMALL)
    await prompts(m, ['go', 'more'])
    const prune = m.agent.events.find((e) => e.type === 'compaction/prune')!
    // same prune, another head: the replacing tool/result differs
    const r = await again(m, { ...SMALL, pruneHead: 250 })
    expect(r.ok).toBe(false)
    if (!r.ok) expect([r.divergence.seq, r.divergence.expected?.type]).toEqual([prune.seq + 1, 'tool/result'])
    // a higher threshold: no prune where the recording pruned
    const r2 = await again(m, { ...SMALL, pruneThresholdChars: 5000 })
    expect(r2.ok).toBe(false)
    if (!r2.ok) expect(r2.divergence.seq).toBe(prune.seq)
  })

  it('without the plugin, the first compaction event is missing', async () => {
    const m = make(FIVE, [{ text: 'sum' }], SMALL)
    await prompts(m, ['1', '2', '3', '4', '5'].map((u) => long(u)))
    const first = m.agent.events.find((e) => e.type.startsWith('compaction/'))!
    const r = await reexecute(m.agent.events, { tools: [bigTool], stallMs: 300 })
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.divergence.seq).toBe(first.seq)
  })
})

const RUNS = Number(process.env.P4_COMPACTION_RUNS ?? 300)
/** The census seed: a coverage claim must not depend on luck. */
const CENSUS_SEED = censusSeed(20261130)
/** Fresh by default (P4 over runs no one has seen); P4_SEED pins one to reproduce a failure. */
const SEED = process.env.P4_SEED === undefined || process.env.P4_SEED === 'random' ? undefined : Number(process.env.P4_SEED)

/** One P4 pass over generated compacted runs (or, with `path`, the one run a counterexample names);
 * returns the census of what the runs contained. */
async function p4Pass(seed: number | undefined, path?: string, runs = RUNS): Promise<Map<string, number>> {
  const seen = new Map<string, number>()
  const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1)
    await fc.assert(
      fc.asyncProperty(arbCompactedScenario(), fc.scheduler(), arbCompactedCommands(14), async (sc, s, cmds) => {
        const run = await withTimeout(recordCompactedRun(sc, s, cmds), 5000, 'the recorded run')
        expect(verify(run.events, { maxStepsPerTurn: MAX_STEPS }).ok).toBe(true)
        const r = await withTimeout(reexecute(run.events, { ...run.reexec, stallMs: 300 }), 5000, 'reexecute')
        if (!r.ok) {
          const lo = Math.max(0, r.divergence.seq - 12)
          const ctx = run.events.slice(lo, r.divergence.seq + 3).map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 150)}`)
          throw new Error(`${r.divergence.diff}\nrecorded around it:\n${ctx.join('\n')}\ncommands: ${JSON.stringify(cmds)}`)
        }
        expect(r.eventCount).toBe(run.events.length)
        let openTurn = false
        for (const e of run.events) {
          const d = e.data as Record<string, any>
          if (e.type === 'turn/start') {
            openTurn = true
            if (d.cause) count('retry turn')
          } else if (e.type === 'turn/end') openTurn = false
          else if (e.type === 'compaction/prune') count('prune')
          else if (e.type === 'compaction/summary') count('summary')
          else if (e.type === 'compaction/start' && !openTurn) count('manual')
          else if (e.type === 'compaction/end' && d.error) count(`end ${d.error.code}`)
        }
        const ends = run.events.filter((e) => e.type === 'turn/end').map((e) => (e.data as any).reason)
        for (let i = 0; i < ends.length; i++) {
          if (ends[i].kind === 'error' && ends[i].failure.code === 'CONTEXT_WINDOW_EXCEEDED') count('overflow')
        }
      }),
      path !== undefined ? { numRuns: 1, seed, path, endOnFailure: true } : { numRuns: runs, ...(seed !== undefined ? { seed } : {}) },
    )
  return seen
}

describe('P4 over generated compacted runs', () => {
  // Half the runs on the census seed (the census is a coverage claim: it must not depend on luck),
  // half on a fresh seed each time (P4 over runs no one has seen; the failure names its seed and
  // path; P4_SEED=<n> replays it). Round 9: 45 fresh seeds of 300 runs each passed before this.
  it(`P4: every generated compacted run (pressure, overflow, prunes, failed and cancelled summaries, manual compactions) re-executes to the same log (${Math.ceil(RUNS / 2)} runs, census seed)`, async () => {
    const seen = await p4Pass(CENSUS_SEED, undefined, Math.ceil(RUNS / 2))
    if (process.env.TURNLOG_CENSUS) console.log(JSON.stringify([...seen]))
    for (const k of ['prune', 'summary', 'manual', 'overflow', 'retry turn', 'end SUMMARY_NOT_SMALLER', 'end SERVER', 'end ABORTED', 'end EMPTY_SUMMARY']) {
      expect(seen.get(k) ?? 0, k).toBeGreaterThan(0)
    }
  }, 600_000)

  it(`P4: every generated compacted run re-executes to the same log (${Math.floor(RUNS / 2)} runs, ${SEED === undefined ? 'a fresh seed' : `seed ${SEED}`})`, async () => {
    await p4Pass(SEED, undefined, Math.floor(RUNS / 2))
  }, 600_000)
})

// Counterexamples fresh seeds found (issue 10 item 9), replayed by seed and path. Both failed before
// the fix in replay/reexecute (the cancel against bodies settling around it), both pass now.
describe('P4 regressions: bodies that settle around a cancel in the tool phase', () => {
  it('P4: a body that threw before the cancel keeps its TOOL_ERROR although its result commits after an aborted one (seed -1525755858, run 151)', async () => {
    // call_1 ABORTED (threw after the cancel), call_2 TOOL_ERROR (threw before it): results commit in
    // model order, so call_2's result follows the abort; re-execution used to cancel first (ABORTED).
    await p4Pass(-1525755858, '150:3:2:2:2:2:2:2:2:2:3:2:3:3:2:2:4:4:4:4:4:6:5:17:19:19:19:16:16')
  }, 60_000)

  it('P4: a body that returns its output after the cancel (inside the grace period), the next call never started (seed -1525755858, run 154)', async () => {
    // cap 1: call_1's output commits after the cancel, call_2 gets the cancelled synthetic pair;
    // re-execution used to settle call_1 first, which freed the slot and started call_2.
    await p4Pass(-1525755858, '153:4:3:3:3:3:2:2:2:2:2:2:2:2:2:2:2:2:6:5:8:13:13:8:8:8')
  }, 60_000)
})

// A counterexample CI found (Node 24 lane, a fresh seed): sends right after a cancel, while the
// cancelled stream was still being cut, are latched and the next turn opens at once; re-execution
// issued them before the cancel (the abort's estimated usage chunk did not count as a cancel's
// trace), so the agent went idle in between, which resets the overflow budget, and recovered from
// an overflow the recording could not.
describe('P4 regressions: sends after a cancel of a streaming step', () => {
  it('P4 (L2): a send latched during the abort of a stream keeps the overflow budget spent (no idle between the turns)', async () => {
    const opts = { ...NO_WINDOW, minRangeTokens: 0, maxOverflowRetries: 1 }
    const m = make([{ text: long('a') }, CWE, { text: long('b'), chunkSize: 5 }, CWE, { text: 'ok' }], [{ text: 'x' }], opts)
    await prompts(m, [long('u')])
    let cut = false
    m.agent.on('agent/assistant-stream', ({ turn }) => {
      if (turn !== 3 || cut) return
      cut = true
      m.agent.cancel({ kind: 'user' }, { keepInbox: false })
      m.agent.followup('p')
      m.agent.followup('q')
    })
    m.agent.followup('go')
    await m.agent.whenIdle()
    const lines = ctrace(m.agent.events)
    // turn 3 (the retry of 2) is cut mid-stream; turn 4 opens at once and its overflow is final
    expect(lines).toContain('turn/start 3 retry-of 2')
    expect(lines.filter((l) => l.startsWith('turn/start'))).toEqual(['turn/start 1', 'turn/start 2', 'turn/start 3 retry-of 2', 'turn/start 4', 'turn/start 5'])
    const usage = m.agent.events.find((e) => e.type === 'assistant/chunk' && (e.data as any).turn === 3 && (e.data as any).chunk.type === 'usage')
    expect((usage?.data as any)?.chunk.usage.estimated).toBe(true)
    expect(m.agent.events.filter((e) => e.type === 'turn/end').map((e) => (e.data as any).reason.kind)).toEqual(['completed', 'error', 'aborted', 'error', 'completed'])
    expectReproduced(await again(m, opts), m.agent.events)
  })
})
