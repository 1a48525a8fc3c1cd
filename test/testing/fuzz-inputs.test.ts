/**
 * The fuzzer with input rounds (docs/spec/lifecycle.md §11 "Re-execution and fuzzing", issue 34
 * item 8): tool bodies asking 0–3 rounds (form, text, choice, url), a client tool, answered,
 * declined, dismissed, refused when invalid, expired, steered over, cancelled, and the agent
 * disposed or crashed between rounds and the session resumed; every log verifies (L21) and every
 * run holds R9, R10 and R11. The census shows the shapes reached.
 */
import { describe, expect, it } from 'vitest'
import { fuzzAgent } from '../../testing/index.js'
import { formatCensus } from '../../testing/fuzz/census.js'
import type { FuzzViolation } from '../../testing/fuzz/failure.js'
import type { InputRecorder } from '../../testing/fuzz/input-tool.js'
import { checkInputs } from '../../testing/fuzz/inputs.js'
import { driverViolation } from '../../testing/fuzz/oracle.js'
import type { Run } from '../../testing/fuzz/run.js'
import { censusSeed } from '../support/census-seed.js'

const runs = Number(process.env.TURNLOG_FUZZ_INPUT_RUNS ?? 150)

describe('fuzzAgent with input rounds (docs/spec/lifecycle.md §11)', () => {
  it(`L21, R9, R10, R11 (and L1–L20, R1–R8): ${runs} runs with rounds answered, declined, dismissed, expired, superseded, cancelled, and crashes and disposes between rounds (fixed seed)`, async () => {
    const report = await fuzzAgent({ numRuns: runs, seed: censusSeed(20261207), inputs: true })
    const other = report.census.other
    if (process.env.TURNLOG_CENSUS) console.log(formatCensus(report.census).join('\n'))
    for (const k of ['input: asked form', 'input: asked text', 'input: asked choice', 'input: asked url', 'input: asked client',
      'input: answered', 'input: declined', 'input: dismissed', 'input: expired', 'input: superseded', 'input: canceled', 'input: client answered',
      'input: crash between rounds', 'input: dispose between rounds', 'input: answered after a restart', 'input: invalid answer refused']) {
      expect(other[k] ?? 0, k).toBeGreaterThan(0)
    }
    for (const k of [0, 1, 2, 3]) expect(other[`input: runs whose calls asked at most ${k} round${k === 1 ? '' : 's'}`] ?? 0, `${k} rounds`).toBeGreaterThan(0)
  }, 600_000)
})

describe('the input-round oracle can fail (R10, R11)', () => {
  const run = (starts: InputRecorder['starts'], events: unknown[] = [], mismatches: string[] = []) =>
    ({ inputs: { starts, mismatches }, agent: { events } }) as unknown as Run
  const inv = (r: Run) => {
    try {
      checkInputs(r)
      return 'held'
    } catch (err) {
      return `${(err as FuzzViolation).invariant}: ${(err as FuzzViolation).detail}`
    }
  }
  const start = (key: string, round: number, over: Partial<InputRecorder['starts'][number]> = {}) => ({ key, round, answerLogged: true, openRound: false, ...over })
  const ev = (seq: number, type: string, data: Record<string, unknown>) => ({ seq, time: seq, type, data })

  it('R10: a body run twice for one round of its call', () => {
    expect(inv(run([start('1.1.c', 0), start('1.1.c', 1), start('1.1.c', 2)]))).toBe('held')
    expect(inv(run([start('1.1.c', 0), start('1.1.c', 1), start('1.1.c', 1)]))).toMatch(/^R10: the body of call 1\.1\.c ran twice for round 1/)
  })

  it('R11: a body started while its round is open, or before the answer was logged', () => {
    expect(inv(run([start('1.1.c', 0), start('1.1.c', 1, { openRound: true })]))).toMatch(/^R11: .* started while a round of its call was open/)
    expect(inv(run([start('1.1.c', 0), start('1.1.c', 1, { answerLogged: false })]))).toMatch(/^R11: .* before it was logged/)
  })

  it('R11: a body given another state or other keys than its round asked', () => {
    expect(inv(run([], [], ['call c round 1: the body got the state {"n":0}, not the one its round gave']))).toMatch(/^R11: call c round 1/)
  })

  it('R11: a call that went on after its answer without its body getting it (the answer lost)', () => {
    const base = { turn: 1, step: 1, callId: 'c' }
    const events = [
      ev(0, 'tool/call', { ...base, name: 'fuzz_ask', arguments: '{"n":1}' }),
      ev(1, 'tool/input-requested', { ...base, requestId: 'r1', round: 1, requests: { text: { kind: 'text', message: 'x' } } }),
      ev(2, 'tool/input-provided', { ...base, requestId: 'r1', round: 1, answer: { action: 'accept', responses: { text: 'y' } }, by: { kind: 'user' } }),
      ev(3, 'tool/result', { ...base, message: { role: 'tool', callId: 'c', content: [] } }),
    ]
    expect(inv(run([start('1.1.c', 0), start('1.1.c', 1)], events))).toBe('held')
    expect(inv(run([start('1.1.c', 0)], events))).toMatch(/^R11: call 1\.1\.c went on after its round 1 was answered \(seq 2\), but its body never got the answer/)
    // an abort after the answer (a cancel before the body ran) is no loss
    const aborted = [...events.slice(0, 3), ev(3, 'tool/result', { ...base, message: { role: 'tool', callId: 'c', content: [] }, error: { code: 'ABORTED', message: 'x' } })]
    expect(inv(run([start('1.1.c', 0)], aborted))).toBe('held')
  })
})

describe('fuzzAgent with approvals and input rounds together (docs/spec/lifecycle.md §9, §11)', () => {
  it('L17, L18, L21, R9, R10, R11: 100 runs whose steps hold open approvals and open rounds at once, decided and answered in any order (fixed seed)', async () => {
    let together = 0
    const report = await fuzzAgent({
      numRuns: 100, seed: censusSeed(20261208), approvals: true, inputs: true,
      onRun: (events) => {
        // a step/parked that lists an approval and a round at once
        const rounds = new Set(events.filter((e) => e.type === 'tool/input-requested').map((e) => (e.data as { requestId: string }).requestId))
        const approvals = new Set(events.filter((e) => e.type === 'tool/approval-requested').map((e) => (e.data as { approvalId: string }).approvalId))
        if (events.some((e) => e.type === 'step/parked' && (e.data as { approvals: string[] }).approvals.some((id) => rounds.has(id)) &&
          (e.data as { approvals: string[] }).approvals.some((id) => approvals.has(id)))) together++
      },
    })
    expect(report.numRuns).toBe(100)
    expect(together).toBeGreaterThan(0)
    expect(report.census.other['input: answered'] ?? 0).toBeGreaterThan(0)
  }, 600_000)
})

describe('the oracle reports a tool scheduler that failed out on a refused append (L18)', () => {
  const runWith = (errors: Array<{ where: string; error: unknown }>) =>
    ({ errors: errors.map((e) => ({ ...e, at: 0 })), agent: { events: [] } }) as unknown as Run
  it('an append the log refused (an error naming its invariant) is a defect; another scheduler report is not', () => {
    const refused = Object.assign(new Error('INVARIANT: step/parked while tool/call c2 has no tool/result (seq 17, invariant L18)'), { invariant: 'L18' })
    expect(driverViolation(runWith([{ where: 'tools/scheduler', error: refused }]))?.invariant).toBe('L18')
    expect(driverViolation(runWith([{ where: 'tools/scheduler', error: new Error('store unavailable') }]))).toBeNull()
    expect(driverViolation(runWith([{ where: 'tools/execute', error: refused }]))).toBeNull()
  })
})
