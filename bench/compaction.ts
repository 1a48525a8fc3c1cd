/**
 * COMPACTION (the closing note's figure): tokens sent per request in a generated 2,000-step
 * session with large tool outputs, with and without the compaction plugin.
 *
 * - The session: 40 turns of 50 steps (49 tool steps, then a text answer), so 2,000 steps and
 *   2,000 turn requests. Each tool step reads one "file": a deterministic generator makes 25% of
 *   the outputs 20,000–40,000 characters and the rest 500–3,000.
 * - The model is `scriptedModel`; it reports `usage.inputTokens` = the size of the request it got,
 *   counted with the default heuristic (compaction/meter.ts: ceil(chars/4) + 4 per message, plus the
 *   header), so the meter's anchor is exact and both runs are counted with the same ruler. The
 *   summariser (a `purpose: 'compaction'` request to the same model) answers with 2,000 characters.
 * - Without compaction nothing limits the history (a hypothetical provider that accepts anything);
 *   with it, `basicCompaction({ contextWindow: 128_000 })` and the defaults.
 * - `value` is the mean tokens per turn request with compaction; the target is the pressure
 *   threshold (0.8 × 128,000). `detail` has mean/p50/p95/max per request and totals for both runs,
 *   the summariser's own requests, the number of prunes and summaries, and wall time.
 *   `TURNLOG_BENCH_COMPACTION_STEPS` changes the step count (a multiple of 50).
 */
import { z } from 'zod'
import { createAgent } from '../agent/agent.js'
import { basicCompaction } from '../compaction/plugin.js'
import { estimateHeader, estimateMessage } from '../compaction/meter.js'
import type { ModelMessage } from '../events/index.js'
import { scriptedModel, type ModelRequest } from '../models/index.js'
import { defineTool } from '../tools/define.js'
import { envInt, type BenchResult } from './common.js'

const WINDOW = 128_000
const STEPS_PER_TURN = 50

/** Deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function fileText(i: number, chars: number): string {
  const line = `file ${i}: lorem ipsum dolor sit amet, consectetur adipiscing elit ${i % 97}\n`
  return line.repeat(Math.ceil(chars / line.length)).slice(0, chars)
}

interface RunStats {
  requests: number[]
  summaryRequests: number[]
  prunes: number
  summaries: number
  ms: number
}

const cost = new WeakMap<ModelMessage, number>()
function requestTokens(r: ModelRequest): number {
  let n = estimateHeader(r.system, r.tools)
  for (const m of r.messages) {
    let c = cost.get(m)
    if (c === undefined) cost.set(m, (c = estimateMessage(m)))
    n += c
  }
  return n
}

async function runSession(steps: number, compaction: boolean): Promise<RunStats> {
  const rnd = prng(20261129)
  const sizes = Array.from({ length: steps }, () => (rnd() < 0.25 ? 20_000 + Math.floor(rnd() * 20_000) : 500 + Math.floor(rnd() * 2_500)))
  const read = defineTool({
    name: 'read_file',
    description: 'Reads a file',
    parameters: z.object({ i: z.number() }),
    execute: ({ i }) => fileText(i, sizes[i] ?? 1000),
  })
  const stats: RunStats = { requests: [], summaryRequests: [], prunes: 0, summaries: 0, ms: 0 }
  let step = 0
  const model = scriptedModel((req) => {
    const tokens = requestTokens(req)
    const usage = { inputTokens: tokens, outputTokens: 20 }
    if (req.purpose === 'compaction') {
      stats.summaryRequests.push(tokens)
      return { text: 'Summary: '.padEnd(2_000, 'x'), usage }
    }
    stats.requests.push(tokens)
    const i = step++
    if ((i + 1) % STEPS_PER_TURN === 0) return { text: `done with batch ${i}`, usage }
    return { toolCalls: [{ name: 'read_file', args: { i } }], usage }
  }, { recordRequests: false, info: { name: 'bench', contextWindow: WINDOW } })
  const agent = createAgent({
    model,
    tools: [read],
    system: 'You are a code reading agent.',
    maxStepsPerTurn: STEPS_PER_TURN,
    retry: false,
    ids: (() => { let n = 0; return () => `b${++n}` })(),
    plugins: compaction ? [basicCompaction({ contextWindow: WINDOW })] : [],
  })
  agent.subscribe((e) => {
    if (e.type === 'compaction/prune') stats.prunes++
    else if (e.type === 'compaction/summary') stats.summaries++
  })
  const t0 = performance.now()
  for (let t = 0; t < steps / STEPS_PER_TURN; t++) {
    agent.followup(`Read the next ${STEPS_PER_TURN - 1} files and report.`)
    await agent.whenIdle()
  }
  stats.ms = performance.now() - t0
  await agent.dispose()
  return stats
}

function describeRun(s: RunStats) {
  const sorted = [...s.requests].sort((a, b) => a - b)
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
  const total = s.requests.reduce((a, b) => a + b, 0)
  const summariser = s.summaryRequests.reduce((a, b) => a + b, 0)
  return {
    requests: s.requests.length,
    meanTokensPerRequest: Math.round(total / Math.max(1, s.requests.length)),
    p50: q(0.5),
    p95: q(0.95),
    max: sorted[sorted.length - 1] ?? 0,
    totalTokensSent: total,
    summariserRequests: s.summaryRequests.length,
    summariserTokensSent: summariser,
    totalIncludingSummariser: total + summariser,
    prunes: s.prunes,
    summaries: s.summaries,
    wallMs: Math.round(s.ms),
  }
}

export async function benchCompaction(log: (line: string) => void = () => {}): Promise<BenchResult> {
  const steps = Math.max(STEPS_PER_TURN, Math.round(envInt('TURNLOG_BENCH_COMPACTION_STEPS', 2000) / STEPS_PER_TURN) * STEPS_PER_TURN)
  log(`  ${steps} steps without compaction…`)
  const without = describeRun(await runSession(steps, false))
  log(`  ${steps} steps with basicCompaction({ contextWindow: ${WINDOW} })…`)
  const withC = describeRun(await runSession(steps, true))
  return {
    value: withC.meanTokensPerRequest,
    unit: 'tokens/request (mean, with compaction)',
    target: `<= ${0.8 * WINDOW}`,
    detail: {
      steps,
      contextWindow: WINDOW,
      tokenizer: 'ceil(chars/4) + 4 per message (the default heuristic)',
      withCompaction: withC,
      withoutCompaction: without,
      meanRatio: Number((withC.meanTokensPerRequest / without.meanTokensPerRequest).toFixed(4)),
      totalRatioIncludingSummariser: Number((withC.totalIncludingSummariser / without.totalTokensSent).toFixed(4)),
    },
  }
}
