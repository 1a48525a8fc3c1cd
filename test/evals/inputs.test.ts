/**
 * Golden sessions with input rounds (docs/spec/lifecycle.md §11 "Re-execution and fuzzing",
 * docs/spec/api.md "Golden sessions"): `rerun` re-issues each recorded answer right after the
 * re-run's round of the same call asks, under the golden's request ids; an unchanged re-run
 * reproduces the golden (bodies run live or served from the golden, rounds and all), and a body
 * that now asks a different question is a divergence naming the field that changed, with the
 * recorded answer refused where it no longer fits (L21 holds on every log).
 */
import { describe, expect, it } from 'vitest'
import { recordedModel, rerun } from '../../evals/index.js'
import type { InputRequests } from '../../events/index.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import { z } from 'zod'
import { instantTimers, recordGolden } from './goldens.js'
import { ADDRESS_SCHEMA } from '../inputs/helpers.js'

const base = { timers: instantTimers, timeoutMs: 5000 }

/** A body that asks two rounds: a form (`address`), then a choice (`speed`); `message` changes the choice's question. */
function ship(runs: number[] = [], message = 'How fast?'): AnyTool[] {
  return [defineTool({
    name: 'ship', description: 'Ship a parcel', parameters: z.object({ item: z.string() }),
    execute: ({ item }, ctx) => {
      runs.push(ctx.input?.round ?? 0)
      if (ctx.input !== undefined && ctx.input.action !== 'accept') return `not shipped (${ctx.input.action})`
      const asked = ctx.input?.round ?? 0
      if (asked < 2) {
        const requests: InputRequests = asked === 0
          ? { address: { kind: 'form', message: 'Where to?', schema: ADDRESS_SCHEMA } }
          : { speed: { kind: 'choice', message, options: ['slow', 'fast'] } }
        return ctx.inputRequired({ requests, state: { asked: asked + 1 }, expiresInMs: 60_000 })
      }
      return `shipped ${item}: ${JSON.stringify(ctx.input?.responses)}`
    },
  })] as AnyTool[]
}

async function roundsGolden() {
  return recordGolden([
    { toolCalls: [{ id: 'c1', name: 'ship', args: { item: 'book' } }] },
    { text: 'Shipped.' },
  ], async (a) => {
    a.followup('Ship the book')
    expect(await a.whenSettled()).toBe('parked')
    await a.answer(a.inputs()[0]!.requestId, { action: 'accept', responses: { address: { city: 'Gent' } } }, { by: { kind: 'user', id: 'ann' } })
    expect(await a.whenSettled()).toBe('parked')
    await a.answer(a.inputs()[0]!.requestId, { action: 'accept', responses: { speed: 'fast' } })
    await a.whenIdle()
  }, { tools: ship() })
}

describe('golden sessions with input rounds (docs/spec/lifecycle.md §11)', () => {
  it('P4 L21 (goldens): live bodies asking two rounds, the recorded answers re-issued after each round: the re-run reproduces the golden', async () => {
    const g = await roundsGolden()
    const runs: number[] = []
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: ship(runs), toolResults: 'live' })
    expect(r.divergence).toBeNull()
    expect(r.log.events.length).toBe(g.events.length)
    expect(r.inputs.filter((i) => i.kind === 'answer').map((i) => i.outcome)).toEqual(['issued', 'issued'])
    expect(runs).toEqual([0, 1, 2]) // R10, R11: one body run per round, each answer reached it once
    expect(r.verify.ok).toBe(true)
  })

  it('P4 L21 (goldens): bodies served from the golden ask the recorded rounds; the re-run reproduces the golden without running them', async () => {
    const g = await roundsGolden()
    const runs: number[] = []
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: ship(runs) })
    expect(r.divergence).toBeNull()
    expect(r.log.events.length).toBe(g.events.length)
    expect(runs).toEqual([])
    expect(r.verify.ok).toBe(true)
  })

  it('P4 (goldens): a body that now asks a different question is a divergence naming the changed field; the recorded answer is still given to the same round', async () => {
    const g = await roundsGolden()
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: ship([], 'Which speed?'), toolResults: 'live' })
    expect(r.divergence?.expected?.type).toBe('tool/input-requested')
    expect(r.divergence?.diff).toMatch(/requests\.speed\.message/)
    expect(r.divergence?.diff).toMatch(/How fast\?/)
  })

  it('P4 (goldens): a body that now asks for another key gets the recorded answer refused, naming the field', async () => {
    const g = await roundsGolden()
    const other = [defineTool({
      name: 'ship', description: 'Ship a parcel', parameters: z.object({ item: z.string() }),
      execute: (_a, ctx) => ctx.input === undefined
        ? ctx.inputRequired({ requests: { where: { kind: 'text', message: 'Where to?' } } })
        : `shipped ${JSON.stringify(ctx.input.responses)}`,
    })] as AnyTool[]
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: other, toolResults: 'live' })
    expect(r.divergence?.expected?.type).toBe('tool/input-requested')
    expect(r.errors.join('\n')).toMatch(/the recorded answer of seq \d+ \(round 1 of call c1\) was refused: INVALID_INPUT at responses\.address/)
  })
})
