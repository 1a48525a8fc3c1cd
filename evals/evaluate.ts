/**
 * `evaluate(goldens, options)`: every golden re-run `trials` times with the change under test,
 * each trial graded by every grader; per golden pass@k, pass^k, flakiness and cost; a `maxCostUsd`
 * stop. Goldens and trials run one after another (a model under test is usually rate limited, and
 * a trial's result must not depend on another's timing). A golden that cannot be read, or a
 * re-run that throws, fails its trials with the error; it never stops the evaluation.
 */
import { basename } from 'node:path'
import { TurnlogError } from '../events/errors.js'
import { replay } from '../replay/replay.js'
import { costUsd, liveUsage, tokenCost } from './cost.js'
import type {
  EvalReport, EvaluateOptions, GoldenReport, GoldenSet, GradedLog, Grader, GraderResult, GraderScore, TrialResult,
} from './evaluate-types.js'
import { goldenGaps, interruptedText, loadGolden } from './golden.js'
import { defaultGraders } from './graders.js'
import { rerun } from './rerun.js'
import { passRates } from './stats.js'
import type { Golden, GoldenInput, RerunResult } from './types.js'

function named(goldens: GoldenSet): Array<{ name: string | null; input: GoldenInput }> {
  if (Array.isArray(goldens)) return (goldens as GoldenInput[]).map((input) => ({ name: typeof input === 'string' ? basename(input) : null, input }))
  if (typeof goldens !== 'object' || goldens === null) throw new TurnlogError('INVALID_ARGUMENT', 'goldens must be a list or an object of goldens', { field: 'goldens' })
  return Object.entries(goldens as Record<string, GoldenInput>).map(([name, input]) => ({ name, input }))
}

function asGrader(g: Grader | ((...a: never[]) => unknown), i: number): Grader {
  if (typeof g === 'function') return { name: g.name || `grader ${i + 1}`, grade: g as Grader['grade'] }
  if (typeof g !== 'object' || g === null || typeof g.grade !== 'function') {
    throw new TurnlogError('INVALID_OPTION', `graders[${i}] must be a function or { name, grade }`, { field: `graders[${i}]` })
  }
  return g
}

function verdict(g: Grader, s: GraderScore): GraderResult {
  if (typeof s === 'boolean') return { name: g.name, pass: s }
  if (typeof s === 'number') return { name: g.name, pass: Number.isFinite(s) && s >= (g.threshold ?? 1), score: s }
  if (typeof s === 'object' && s !== null && typeof s.pass === 'boolean') {
    return { name: g.name, pass: s.pass, ...(typeof s.score === 'number' ? { score: s.score } : {}), ...(typeof s.reason === 'string' ? { reason: s.reason } : {}) }
  }
  return { name: g.name, pass: false, reason: `the grader returned ${typeof s}, not a boolean, a number or { pass }` }
}

/** Runs the evaluation. Options are checked before anything runs (`INVALID_OPTION` naming the field). */
export async function evaluate(goldens: GoldenSet, options: EvaluateOptions): Promise<EvalReport> {
  const trials = options.trials ?? 1
  if (!Number.isInteger(trials) || trials < 1) throw new TurnlogError('INVALID_OPTION', `trials must be an integer >= 1, got ${String(trials)}`, { field: 'trials' })
  if (options.maxCostUsd !== undefined && options.price === undefined) {
    throw new TurnlogError('INVALID_OPTION', 'maxCostUsd needs price (USD per million tokens)', { field: 'maxCostUsd' })
  }
  const graders = (options.graders ?? defaultGraders()).map((g, i) => asGrader(g as Grader, i))
  const list = named(goldens)
  const reports: GoldenReport[] = []
  let spent = 0
  let stopped = false
  for (let gi = 0; gi < list.length; gi++) {
    const { input } = list[gi]!
    let golden: Golden | null = null
    let loadError: string | null = null
    try {
      golden = await loadGolden(input)
    } catch (err) {
      loadError = (err as Error)?.message ?? String(err)
    }
    const name = list[gi]!.name ?? golden?.header.id ?? `golden ${gi + 1}`
    const results: TrialResult[] = []
    for (let trial = 0; trial < trials && !stopped; trial++) {
      if (options.maxCostUsd !== undefined && spent >= options.maxCostUsd) {
        stopped = true
        break
      }
      const { result, run } = golden === null
        ? { result: failedTrial(trial, `cannot read the golden: ${loadError}`), run: null }
        : await runTrial(golden, name, trial, graders, options)
      spent += result.costUsd ?? 0
      results.push(result)
      options.onTrial?.({ name, trial, trials, index: gi, goldens: list.length, result, run })
    }
    const n = results.length
    const passed = results.filter((t) => t.pass).length
    const rates = n > 0 ? passRates(n, passed) : { passAtK: {}, passHatK: {} }
    const cost = results.reduce((s, t) => s + (t.costUsd ?? 0), 0)
    reports.push({
      name, ...(typeof input === 'string' ? { path: input } : {}), trials: results, n, passed, ...rates,
      flaky: passed > 0 && passed < n,
      pass: n > 0 && (options.passWhen === 'any' ? passed > 0 : passed === n),
      ...(options.price !== undefined ? { costUsd: cost } : {}),
    })
  }
  const passedGoldens = reports.filter((r) => r.pass).length
  return {
    goldens: reports,
    summary: {
      goldens: reports.length, passed: passedGoldens, failed: reports.length - passedGoldens, flaky: reports.filter((r) => r.flaky).length,
      trials: reports.reduce((s, r) => s + r.n, 0),
      ...(options.price !== undefined ? { costUsd: spent } : {}),
      ...(stopped ? { stopped: 'maxCostUsd' as const } : {}),
    },
    ok: reports.length > 0 && passedGoldens === reports.length,
  }
}

function failedTrial(trial: number, error: string): TrialResult {
  return {
    trial, pass: false, graders: [], divergence: null, durationMs: 0, error,
    usage: { requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
  }
}

async function runTrial(
  golden: Golden, name: string, trial: number, graders: readonly Grader[], options: EvaluateOptions,
): Promise<{ result: TrialResult; run: RerunResult | null }> {
  const started = Date.now()
  let run: RerunResult
  try {
    const model = typeof options.model === 'function' ? options.model({ golden, name, trial }) : options.model
    run = await rerun(golden, { ...options, model })
  } catch (err) {
    return { result: failedTrial(trial, `the re-run failed: ${(err as Error)?.message ?? String(err)}`), run: null }
  }
  const usage = liveUsage(run.log.events, run.liveFrom)
  const goldenUsage = liveUsage(golden.events, run.liveFrom)
  let usd: number | null = null
  let goldenUsd: number | null = null
  let priceError: string | null = null
  try {
    usd = costUsd(usage, options.price)
    goldenUsd = costUsd(goldenUsage, options.price)
  } catch (err) {
    priceError = `the price function threw: ${(err as Error)?.message ?? String(err)}`
  }
  const cost = usd !== null && goldenUsd !== null
    ? { golden: goldenUsd, rerun: usd, unit: 'usd' as const }
    : { golden: tokenCost(goldenUsage), rerun: tokenCost(usage), unit: 'tokens' as const }
  const log: GradedLog = { header: run.log.header, events: run.log.events, state: replay(run.log.events) }
  const gold: GradedLog = { header: golden.header, events: golden.events, state: replay(golden.events) }
  const results: GraderResult[] = []
  for (const g of graders) {
    try {
      results.push(verdict(g, await g.grade(log, gold, { run, name, trial, cost })))
    } catch (err) {
      results.push({ name: g.name, pass: false, reason: `the grader threw: ${(err as Error)?.message ?? String(err)}` })
    }
  }
  const pass = results.every((r) => r.pass)
  // a failed trial of a golden recorded through crashes says why it cannot match (issue 38.15)
  const gaps = pass && !run.timedOut ? undefined : interruptedText(goldenGaps(golden.events, run.liveFrom))
  const error = priceError ?? (run.timedOut ? ['the re-run made no progress and was stopped (timeoutMs)', gaps].filter(Boolean).join('; ') : gaps)
  const { expected: _e, actual: _a, ...divergence } = run.divergence ?? { expected: null, actual: null }
  return {
    run,
    result: {
      trial, pass: priceError === null && !run.timedOut && pass, graders: results,
      divergence: run.divergence ? divergence as TrialResult['divergence'] : null,
      usage, ...(usd !== null ? { costUsd: usd } : {}), durationMs: Date.now() - started, ...(error !== undefined ? { error } : {}),
    },
  }
}
