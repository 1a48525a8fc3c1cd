/**
 * P4 for goldens: sessions made by the fuzzer (its scenario generator, hook plans, tools, inbox
 * commands and cancels, interleaved by fc.scheduler) re-run with their recorded model and tool
 * results reproduce themselves, `time` aside — from the first turn and from any later turn.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { EventOf } from '../../events/index.js'
import { evaluate, noDivergence, recordedModel, rerun, sameAnswers, sameToolResults } from '../../evals/index.js'
import { arbCommandList, arbScenario, instantTimers, MAX_STEPS, recordRun, withTimeout } from '../replay/agent-runs.js'
import { explain, reproducesFromTurnOne } from './golden-property.js'

const RUNS = Number(process.env.GOLDEN_RUNS ?? 100)
// A fixed seed: a fuzzer session still diverges now and then (one new kind per ~500–3000
// sessions from turn 1 (docs/decisions/golden-sessions.md), so a random seed would make
// this suite flaky. GOLDEN_SEED=random (or a number) and GOLDEN_RUNS explore further.
const SEED = { seed: process.env.GOLDEN_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.GOLDEN_SEED ?? 20261201) }
// GOLDEN_PROVIDER=1: property 1 also draws the provider-stream scenarios (issue 23) when exploring
const PROVIDER = process.env.GOLDEN_PROVIDER === '1'
// printed, so a run that explored can be repeated (fast-check names the seed only on a failure)
console.log(`golden fuzz: seed ${SEED.seed}, ${process.env.GOLDEN_RUNS ?? 100} runs per property`)
/** Long explorations (GOLDEN_RUNS in the thousands) get time in proportion (~0.1 s a session, ×5 for a loaded machine). */
const budget = (ms: number): number => Math.max(ms, RUNS * 500)

describe('P4 for goldens made by the fuzzer', () => {
  it(`P4: a fuzzer session re-run from turn 1 with its recorded model, tools and hooks reproduces it (${RUNS} runs)`, async () => {
    await fc.assert(
      reproducesFromTurnOne({ providerStreams: PROVIDER }),
      { numRuns: RUNS, ...SEED },
    )
  }, budget(300_000))

  it(`P4: … and from any later turn (hooks that decide by position, not by a counter) (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(arbScenario(), fc.scheduler(), arbCommandList(10), fc.nat(), async (sc0, s, cmds, pick) => {
        const sc = { ...sc0, preStep: ['next' as const], stopping: ['none' as const] }
        const run = await withTimeout(recordRun(sc, s, cmds), 5000, 'the recorded run')
        const turns = run.events.filter((e) => e.type === 'turn/start').map((e) => (e as EventOf<'turn/start'>).data.turn)
        const turn = turns[pick % turns.length]!
        const r = await withTimeout(rerun(run.events, {
          from: { turn }, model: recordedModel(run.events), tools: run.reexec.tools, hooks: run.reexec.hooks,
          maxParallelToolCalls: sc.maxParallel, maxStepsPerTurn: MAX_STEPS, timers: instantTimers, timeoutMs: 3000,
        }), 8000, 'rerun')
        if (r.divergence) throw new Error(`from turn ${turn}: ${explain(r)}`)
        expect(r.log.events.slice(0, r.liveFrom)).toEqual(run.events.slice(0, r.liveFrom))
        expect(r.verify.ok).toBe(true)
      }),
      { numRuns: RUNS, ...SEED },
    )
  }, budget(300_000))

  it(`a changed system prompt, tool result or model response is found at its turn by the right grader (${RUNS} fuzzer goldens)`, async () => {
    const stats = { system: 0, tool: 0, model: 0 }
    await fc.assert(
      fc.asyncProperty(arbScenario(), fc.scheduler(), arbCommandList(10), fc.nat(), async (sc0, s, cmds, pick) => {
        const sc = { ...sc0, preStep: ['next' as const], stopping: ['none' as const] }
        const run = await withTimeout(recordRun(sc, s, cmds), 5000, 'the recorded run')
        const ev = run.events
        const opts = {
          tools: run.reexec.tools, hooks: run.reexec.hooks, maxParallelToolCalls: sc.maxParallel, maxStepsPerTurn: MAX_STEPS,
          timers: instantTimers, timeoutMs: 3000, graders: [noDivergence(), sameToolResults(), sameAnswers()],
        }
        const reasons = async (o: Parameters<typeof evaluate>[1]) => {
          const r = await withTimeout(evaluate([ev], o), 8000, 'evaluate')
          return Object.fromEntries(r.goldens[0]!.trials[0]!.graders.map((g) => [g.name, g.pass ? null : g.reason ?? '']))
        }
        // 1. the system prompt from a turn that makes a request
        const asking = [...new Set(ev.filter((e) => e.type === 'assistant/chunk').map((e) => (e as EventOf<'assistant/chunk'>).data.turn))]
        if (asking.length > 0) {
          const k = asking[pick % asking.length]!
          const g = await reasons({ ...opts, from: { turn: k }, model: recordedModel(ev), system: 'changed' })
          expect(g['no divergence']).toContain(`(turn ${k}, step `)
          stats.system++
        }
        // 2. one tool result a body gave
        const ok = ev.filter((e) => e.type === 'tool/result' && e.surfaceOp === 'append' && (e as EventOf<'tool/result'>).data.error === undefined) as EventOf<'tool/result'>[]
        if (ok.length > 0) {
          const target = ok[pick % ok.length]!.data
          const g = await reasons({
            ...opts, model: recordedModel(ev),
            toolResults: (call) => (call.turn === target.turn && call.callId === target.callId ? { changed: true } : call.recorded()),
          })
          expect(g['same tool results']).toMatch(new RegExp(`^turn ${target.turn}: result \\d+ \\(\\w+ ${target.callId}\\)`))
          expect(g['same answer in every turn']).toBeNull() // the recorded model answers the same
          stats.tool++
        }
        // 3. the model's last answer in a turn
        const answers = ev.filter((e) => e.type === 'assistant/message' && !(e as EventOf<'assistant/message'>).data.interrupted &&
          (e as EventOf<'assistant/message'>).data.message.content.some((b) => b.type === 'text' && (b as { text: string }).text !== '')) as EventOf<'assistant/message'>[]
        const last = [...new Map(answers.map((m) => [m.data.turn, m])).values()]
        if (last.length > 0) {
          const at = last[pick % last.length]!.data
          const g = await reasons({
            ...opts, model: recordedModel(ev, { replace: (p) => (p.turn === at.turn && p.step === at.step ? { text: 'a changed answer' } : undefined) }),
          })
          expect(g['same answer in every turn']).toMatch(new RegExp(`^turn ${at.turn}: answer "a changed answer"`))
          expect(g['no divergence']).toContain(`(turn ${at.turn}, step ${at.step})`)
          stats.model++
        }
      }),
      { numRuns: RUNS, ...SEED },
    )
    // the generator gives every kind of change a fair share of goldens
    expect(Math.min(stats.system, stats.tool, stats.model)).toBeGreaterThan(RUNS / 10)
  }, budget(600_000))
})
