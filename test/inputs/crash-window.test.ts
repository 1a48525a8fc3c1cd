/**
 * R10 and R11 at every crash point of a session with input rounds (docs/spec/lifecycle.md §8, §11):
 * a recorded session (two calls whose bodies each ask two rounds, answered by a person) is cut at
 * each position from its first round on, as a killed process leaves its log, and resumed by a new
 * process that answers what is still open as the person did. At every cut: an answer durable in
 * the log whose next round had not run runs that round exactly once (R11: never lost), a round
 * whose continuation is in the log never runs again (R10), and the log verifies (L21).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { resumeAgent } from '../../replay/index.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/index.js'
import type { AnyTool } from '../../tools/types.js'
import { counterIds, fakeClock, instantTimers } from '../agent/helpers.js'
import { fcRuns } from '../fc-runs.js'

/** `ship` asks two rounds (a text, then a choice) and records each body run as `callId#round`. */
function shipTool(runs: string[]): AnyTool {
  return defineTool({
    name: 'ship', description: 'ship', parameters: z.object({ item: z.string() }),
    isConcurrencySafe: () => true,
    execute: ({ item }, ctx) => {
      const round = ctx.input?.round ?? 0
      runs.push(`${ctx.callId}#${round}`)
      if (ctx.input !== undefined && ctx.input.action !== 'accept') return `${item}: ${ctx.input.action}`
      if (round === 0) return ctx.inputRequired({ requests: { where: { kind: 'text', message: `where is ${item} going?` } }, state: { round: 1 } })
      if (round === 1) return ctx.inputRequired({ requests: { speed: { kind: 'choice', message: 'how fast?', options: ['slow', 'fast'] } }, state: { round: 2 } })
      return `${item} shipped ${JSON.stringify(ctx.input?.responses)}`
    },
  }) as AnyTool
}

const STEP = { toolCalls: [{ name: 'ship', args: { item: 'a' }, id: 'c1' }, { name: 'ship', args: { item: 'b' }, id: 'c2' }] }
const answerFor = (round: number) => (round === 1 ? { action: 'accept' as const, responses: { where: 'Gent' } } : { action: 'accept' as const, responses: { speed: 'fast' } })

/** Answers what is open each time the agent parks: one round at a time, or every open one at once. */
async function drive(a: { whenSettled(): Promise<string>; inputs(): Array<{ requestId: string; round: number }>; answer(id: string, x: unknown): Promise<void> }, together = false) {
  for (let i = 0; i < 20; i++) {
    if (await a.whenSettled() !== 'parked') return
    const open = a.inputs()
    if (open.length === 0) throw new Error('parked with no open round')
    await Promise.all((together ? open : open.slice(0, 1)).map((o) => a.answer(o.requestId, answerFor(o.round))))
  }
  throw new Error('still parked after 20 answers')
}

async function recorded(together: boolean): Promise<LogEvent[]> {
  const runs: string[] = []
  const a = createAgent({ model: scriptedModel([STEP, { text: 'shipped' }]), tools: [shipTool(runs)], sessionId: 's', clock: fakeClock(), ids: counterIds('a'), timers: instantTimers(), maxParallelToolCalls: 2 })
  a.followup('ship a and b')
  await drive(a, together)
  await a.whenIdle()
  expect(runs.sort()).toEqual(['c1#0', 'c1#1', 'c1#2', 'c2#0', 'c2#1', 'c2#2'])
  const events = a.events.slice()
  await a.dispose()
  return events
}

/** For each call and round answered by a person in `prefix`: whether the prefix also holds what the body did with it. */
function answeredRounds(prefix: readonly LogEvent[]): Array<{ key: string; continued: boolean }> {
  const out: Array<{ key: string; continued: boolean }> = []
  prefix.forEach((e, i) => {
    if (e.type !== 'tool/input-provided') return
    const d = (e as EventOf<'tool/input-provided'>).data
    if (d.by.kind !== 'user') return
    const continued = prefix.slice(i + 1).some((x) => (x.data as { callId?: string }).callId === d.callId && (x.type === 'tool/input-requested' || x.type === 'tool/result'))
    out.push({ key: `${d.callId}#${d.round}`, continued })
  })
  return out
}

describe('R10, R11: a crash at any point of a session with input rounds (docs/spec/lifecycle.md §11)', () => {
  it.each([['one round answered at a time', false], ['both calls\' rounds answered at once', true]] as const)('R10 R11 L21: at every cut from the first round on (%s), a logged answer whose next round had not run runs it exactly once on resume; a continued round never runs again', async (_name, together) => {
    const full = await recorded(together)
    const first = full.findIndex((e) => e.type === 'tool/input-requested')
    // every crash position, in an order fast-check draws (all of them: the session is short)
    const cuts = Array.from({ length: full.length - first }, (_x, i) => first + 1 + i)
    await fc.assert(fc.asyncProperty(fc.shuffledSubarray(cuts, { minLength: cuts.length, maxLength: cuts.length }), async (order) => { for (const cut of order) {
      const prefix = full.slice(0, cut)
      const runs: string[] = []
      const b = await resumeAgent({ log: prefix, sessionId: 's', model: scriptedModel([{ text: 'after the crash' }, { text: 'again' }]), tools: [shipTool(runs)], clock: fakeClock(1_764_460_000_000), ids: counterIds('b'), timers: instantTimers(), maxParallelToolCalls: 2 })
      await drive(b)
      await b.whenIdle()
      const where = `cut at seq ${cut} (after ${prefix.at(-1)!.type}); log ${full.slice(first).map((e) => `${e.seq}:${e.type.replace("tool/", "")}${(e.data as { callId?: string }).callId ?? ""}`).join(" ")}; resumed ${b.events.slice(cut).map((e) => e.type + ((e.data as any).error?.code ?? "")).join(" ")}`
      expect(verify(b.events).violations, where).toEqual([])
      for (const r of answeredRounds(prefix)) {
        const n = runs.filter((x) => x === r.key).length
        // R10: what the log shows the body did with an answer is never done again;
        // R11: an answer the body had not gone on from reaches it once, in the new process
        expect(n, `${where}: runs of ${r.key}`).toBe(r.continued ? 0 : 1)
      }
      await b.dispose()
    } }), { numRuns: fcRuns(2) })
  })
})
