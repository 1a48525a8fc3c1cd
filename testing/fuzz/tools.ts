/**
 * The fuzzer's own tools (`fuzz_parallel`, `fuzz_exclusive`, `fuzz_throw`): their bodies wait on
 * the scheduler, so it decides when each settles, and record what R4 and R5 check.
 */
import { z } from 'zod'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import type { HostileEnv, ToolPlan } from './scenario.js'

/** Body bookkeeping for R4 (concurrency cap, barrier isolation) and R5 (no body after a cancel). */
export interface Bodies {
  inFlight: number
  maxInFlight: number
  exclusiveOverlap: boolean
  exclusiveRunning: number
  started: Array<{ turn: number; at: number }>
}

/** The tools' parameters: one schema object for every run, so its JSON Schema is built once (B7). */
const N_ARGS = z.object({ n: z.number() })

export const newBodies = (): Bodies => ({ inFlight: 0, maxInFlight: 0, exclusiveOverlap: false, exclusiveRunning: 0, started: [] })

/**
 * Counts a body that starts now (R4: in flight, a barrier overlapping another body; R5: its turn
 * and log position) and returns what stops counting it, once however often it is called (when it
 * settles, or when its signal aborts: the agent frees the slot of a call it abandons). The fuzzer's
 * own bodies and a parent's `fuzz_child` body (run.ts) count through it.
 */
export function countBody(bodies: Bodies, turn: number, at: number, exclusive: boolean): () => void {
  bodies.started.push({ turn, at })
  // R4: a barrier body never overlaps any other body.
  if (bodies.exclusiveRunning > 0 || (exclusive && bodies.inFlight > 0)) bodies.exclusiveOverlap = true
  bodies.inFlight++
  if (exclusive) bodies.exclusiveRunning++
  bodies.maxInFlight = Math.max(bodies.maxInFlight, bodies.inFlight)
  let counted = true
  return () => {
    if (!counted) return
    counted = false
    bodies.inFlight--
    if (exclusive) bodies.exclusiveRunning--
  }
}

/**
 * The fuzzer's tools. Each call takes the next plan: from `toolPlans` in the hostile mix, else
 * `toolFails` (fail or ok). `fuzz_throw` always throws. A `hang` or `late` body stops counting as
 * in flight when the turn's signal aborts: no body may start in that turn afterwards (R5), and the
 * agent frees its slot when it abandons the call, so R4's count stays the pool's.
 */
export function fuzzTools(
  schedule: () => Promise<void>,
  plan: { toolFails: boolean[]; toolPlans?: ToolPlan[]; i: number },
  bodies: Bodies,
  eventsLen: () => number,
  sizes: readonly number[] | null,
  hostile?: HostileEnv,
): AnyTool[] {
  const body = (p: ToolPlan, exclusive: boolean) => async (args: { n: number }, ctx: { signal: AbortSignal; turn: number }) => {
    const uncount = countBody(bodies, ctx.turn, eventsLen(), exclusive)
    try {
      if ((p === 'hang' || p === 'late') && hostile) {
        ctx.signal.addEventListener('abort', uncount, { once: true })
        const hung = hostile.hang(`tool body (${p})`, ctx.signal)
        if (p === 'hang') await hung
        // late: ignores the signal, settles a few scheduled steps after the cancel
        await new Promise<void>((r) => (ctx.signal.aborted ? r() : ctx.signal.addEventListener('abort', () => r(), { once: true })))
        await schedule()
        await schedule()
        return { ok: 'late' }
      }
      await schedule()
      if (p === 'fail') throw new Error('fuzz tool failure')
      if (p === 'getter') return { get content(): never { throw new Error('fuzz: a throwing getter in a tool output') } }
      if (sizes) return 'x'.repeat(sizes[Math.abs(args.n) % sizes.length]!)
      return { ok: true }
    } finally {
      uncount()
    }
  }
  const next = (): ToolPlan => {
    if (plan.toolPlans) return plan.toolPlans[plan.i++ % plan.toolPlans.length]!
    return (plan.toolFails[plan.i++ % Math.max(1, plan.toolFails.length)] ?? false) ? 'fail' : 'ok'
  }
  return [
    defineTool({ name: 'fuzz_parallel', description: 'parallel-safe', parameters: N_ARGS, isConcurrencySafe: () => true, execute: (a, c) => body(next(), false)(a, c) }),
    defineTool({ name: 'fuzz_exclusive', description: 'exclusive', parameters: N_ARGS, execute: (a, c) => body(next(), true)(a, c) }),
    defineTool({ name: 'fuzz_throw', description: 'always throws', parameters: N_ARGS, execute: (a, c) => body('fail', true)(a, c) }),
  ] as AnyTool[]
}
