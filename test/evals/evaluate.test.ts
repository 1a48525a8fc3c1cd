import { describe, expect, it } from 'vitest'
import {
  costWithin, evaluate, junitXml, noDivergence, noInvariantBroken, passAtK, passHatK, recordedModel, sameAnswers, sameFinalAnswer,
  sameToolResults, sameToolSequence, type Grader,
} from '../../evals/index.js'
import { scriptedModel } from '../../models/index.js'
import { instantTimers, twoTurnGolden, weatherTools } from './goldens.js'

const base = { timers: instantTimers, timeoutMs: 5000 }
const all = (): Grader[] => [noInvariantBroken(), noDivergence(), sameToolSequence(), sameToolResults(), sameAnswers(), sameFinalAnswer()]
const failing = (r: Awaited<ReturnType<typeof evaluate>>) =>
  r.goldens[0]!.trials[0]!.graders.filter((g) => !g.pass).map((g) => [g.name, g.reason])

describe('evaluate: goldens as regression tests', () => {
  it('the recorded model and tools pass every built-in grader; pass@1 = pass^1 = 1', async () => {
    const g = await twoTurnGolden()
    const r = await evaluate({ weather: g }, { ...base, model: recordedModel(g), tools: weatherTools(), graders: all() })
    expect(failing(r)).toEqual([])
    expect(r.ok).toBe(true)
    expect(r.goldens[0]).toMatchObject({ name: 'weather', n: 1, passed: 1, pass: true, flaky: false, passAtK: { 1: 1 }, passHatK: { 1: 1 } })
    expect(r.summary).toMatchObject({ goldens: 1, passed: 1, failed: 0, trials: 1 })
  })

  it('a changed system prompt is found in turn 2 by noDivergence only (the recorded model answers the same)', async () => {
    const g = await twoTurnGolden()
    const r = await evaluate([g], { ...base, from: { turn: 2 }, model: recordedModel(g), tools: weatherTools(), system: 'Be terse.', graders: all() })
    expect(failing(r).map(([n]) => n)).toEqual(['no divergence'])
    expect(failing(r)[0]![1]).toContain('(turn 2, step 1)')
    expect(r.ok).toBe(false)
  })

  it('a changed tool result is found in turn 2 by sameToolResults', async () => {
    const g = await twoTurnGolden()
    const r = await evaluate([g], {
      ...base, model: recordedModel(g), tools: weatherTools(), graders: all(),
      toolResults: (call) => ((call.args as { city: string }).city === 'Rome' ? { city: 'Rome', tempC: 31 } : call.recorded()),
    })
    expect(failing(r).map(([n]) => n)).toEqual(['no divergence', 'same tool results'])
    expect(failing(r)[1]![1]).toMatch(/^turn 2: result 3 \(weather c3\)/)
  })

  it('a changed model response is found in turn 2: the answer by sameAnswers and sameFinalAnswer, a dropped call by sameToolSequence', async () => {
    const g = await twoTurnGolden()
    const text = await evaluate([g], {
      ...base, model: recordedModel(g, { replace: (at) => (at.turn === 2 && at.step === 2 ? { text: 'Oslo and Rome are cold.' } : undefined) }),
      tools: weatherTools(), graders: all(),
    })
    expect(failing(text).map(([n]) => n)).toEqual(['no divergence', 'same answer in every turn', 'same final answer'])
    expect(failing(text)[1]![1]).toMatch(/^turn 2: answer "Oslo and Rome are cold\."/)
    const calls = await evaluate([g], {
      ...base, model: recordedModel(g, { replace: (at) => (at.turn === 2 && at.step === 1 ? { toolCalls: [{ id: 'c2', name: 'weather', args: { city: 'Oslo' } }] } : undefined) }),
      tools: weatherTools(), graders: [sameToolSequence()],
    })
    expect(failing(calls)).toEqual([['same tool sequence', '1 call(s) differ; first: removed weather({"city":"Rome","unit":"C"}) in turn 2']])
  })

  it('trials: a model that answers differently on some trials gives pass@k and pass^k as the formulas say', async () => {
    const g = await twoTurnGolden()
    // trials 0, 2 and 3 answer turn 2 as recorded; trials 1 and 4 do not: 3 of 5 pass
    const bad = new Set([1, 4])
    const r = await evaluate({ g }, {
      ...base, trials: 5, tools: weatherTools(), graders: [sameFinalAnswer()],
      model: ({ trial }) => recordedModel(g, { replace: (at) => (bad.has(trial) && at.turn === 2 && at.step === 2 ? { text: 'no idea' } : undefined) }),
    })
    const rep = r.goldens[0]!
    expect(rep.trials.map((t) => t.pass)).toEqual([true, false, true, true, false])
    expect(rep).toMatchObject({ n: 5, passed: 3, flaky: true, pass: false })
    // pass@k = 1 - C(2,k)/C(5,k); pass^k = C(3,k)/C(5,k)
    expect(rep.passAtK[1]).toBeCloseTo(3 / 5)
    expect(rep.passAtK[2]).toBeCloseTo(1 - 1 / 10)
    expect(rep.passAtK[3]).toBe(1)
    expect(rep.passHatK[1]).toBeCloseTo(3 / 5)
    expect(rep.passHatK[2]).toBeCloseTo(3 / 10)
    expect(rep.passHatK[3]).toBeCloseTo(1 / 10)
    expect(rep.passHatK[4]).toBe(0)
    // passWhen 'any': the same trials pass the golden
    const any = await evaluate({ g }, {
      ...base, trials: 5, tools: weatherTools(), graders: [sameFinalAnswer()], passWhen: 'any',
      model: ({ trial }) => recordedModel(g, { replace: (at) => (bad.has(trial) && at.turn === 2 && at.step === 2 ? { text: 'no idea' } : undefined) }),
    })
    expect(any.goldens[0]!.pass).toBe(true)
  })

  it('pass@k and pass^k: the unbiased estimators, exact at the edges', () => {
    expect(passAtK(10, 0, 3)).toBe(0)
    expect(passAtK(10, 10, 1)).toBe(1)
    expect(passAtK(10, 3, 1)).toBeCloseTo(0.3)
    expect(passHatK(10, 3, 2)).toBeCloseTo((3 * 2) / (10 * 9))
    expect(passHatK(4, 4, 4)).toBe(1)
    expect(() => passAtK(3, 1, 4)).toThrow(RangeError)
  })

  it('costs with a price; maxCostUsd stops starting trials; costWithin compares the live parts', async () => {
    const g = await twoTurnGolden()
    const price = { input: 1, output: 1 } // $1 per million tokens
    const r = await evaluate([g, g], {
      ...base, trials: 3, tools: weatherTools(), price, maxCostUsd: 0.0005,
      model: recordedModel(g), graders: [costWithin(0)],
    })
    // the whole session: 40+8 + 60+7 + 80+12 + 110+9 = 326 tokens = $0.000326 per trial
    expect(r.goldens[0]!.trials[0]!.costUsd).toBeCloseTo(0.000326)
    expect(r.summary.stopped).toBe('maxCostUsd')
    expect(r.summary.trials).toBe(2)
    expect(r.goldens[1]!.n).toBe(0)
    expect(r.goldens[1]!.pass).toBe(false)
    const dear = await evaluate([g], {
      ...base, tools: weatherTools(), price, graders: [costWithin(10)],
      model: recordedModel(g, { replace: (at) => (at.turn === 2 && at.step === 2 ? { text: 'x', usage: { inputTokens: 500, outputTokens: 9 } } : undefined) }),
    })
    expect(dear.goldens[0]!.trials[0]!.graders[0]).toMatchObject({ pass: false })
    expect(dear.goldens[0]!.trials[0]!.graders[0]!.reason).toMatch(/% above the golden's \$0\.0003/)
  })

  it('user graders: (log, golden, ctx) with the folded state at hand; scores, thresholds, and a throwing grader fail the trial, never the run', async () => {
    const g = await twoTurnGolden()
    const seen: unknown[] = []
    const r = await evaluate([g], {
      ...base, model: recordedModel(g), tools: weatherTools(),
      graders: [
        (log, golden, ctx) => {
          seen.push([log.state.usage.total.requests, golden.state.transcript.items.length > 0, ctx.trial, ctx.name])
          return log.state.history.messages.length === golden.state.history.messages.length
        },
        { name: 'half', grade: () => 0.5, threshold: 0.5 },
        { name: 'low', grade: () => 0.4, threshold: 0.5 },
        { name: 'boom', grade: () => { throw new Error('grader bug') } },
      ],
    })
    expect(seen).toEqual([[4, true, 0, 'golden-1']])
    expect(r.goldens[0]!.trials[0]!.graders.map((x) => [x.name, x.pass])).toEqual([['grader 1', true], ['half', true], ['low', false], ['boom', false]])
    expect(r.goldens[0]!.trials[0]!.graders[3]!.reason).toBe('the grader threw: grader bug')
  })

  it('a golden that cannot be read fails its trials with the error; the others still run', async () => {
    const g = await twoTurnGolden()
    const r = await evaluate(['/nonexistent/golden.jsonl', g], { ...base, model: recordedModel(g), tools: weatherTools() })
    expect(r.goldens[0]!.pass).toBe(false)
    expect(r.goldens[0]!.trials[0]!.error).toMatch(/cannot read the golden/)
    expect(r.goldens[1]!.pass).toBe(true)
  })

  it('bad options are INVALID_OPTION naming the field', async () => {
    const g = await twoTurnGolden()
    await expect(evaluate([g], { model: recordedModel(g), trials: 0 })).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'trials' })
    await expect(evaluate([g], { model: recordedModel(g), maxCostUsd: 1 })).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'maxCostUsd' })
    await expect(evaluate([g], { model: recordedModel(g), graders: [42 as never] })).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'graders[0]' })
  })

  it('JUnit XML: one test case per golden, the failing trials and graders in the failure, text escaped', async () => {
    const g = await twoTurnGolden()
    const r = await evaluate({ 'ok <one>': g, 'bad & one\u0007': g }, {
      ...base, trials: 2, tools: weatherTools(), graders: [sameFinalAnswer()],
      model: ({ name }) => (name.startsWith('bad') ? scriptedModel([{ text: 'x "y"' }, { text: 'z' }]) : recordedModel(g)),
      from: { turn: 2 },
    })
    const xml = junitXml(r)
    expect(xml).toContain('<testsuites name="turnlog goldens" tests="2" failures="1"')
    expect(xml).toContain('<testcase classname="turnlog.golden" name="ok &lt;one&gt;"')
    expect(xml).toContain('<testcase classname="turnlog.golden" name="bad &amp; one\uFFFD"')
    expect(xml).toContain('<failure message="2 of 2 trials failed" type="golden">trial 1:')
    expect(xml).toContain('same final answer: final answer &quot;x \\&quot;y\\&quot;&quot;')
    expect(xml).not.toMatch(/\u0007/)
    expect(JSON.parse(JSON.stringify(r))).toEqual(r) // the report is plain JSON
  })
})
