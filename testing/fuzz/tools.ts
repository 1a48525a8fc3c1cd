/**
 * The fuzzer's own tools (`fuzz_parallel`, `fuzz_exclusive`, `fuzz_throw`): their bodies wait on
 * the scheduler, so it decides when each settles, and record what R4 and R5 check.
 */
import { z } from 'zod'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'

/** Body bookkeeping for R4 (concurrency cap, barrier isolation) and R5 (no body after a cancel). */
export interface Bodies {
  inFlight: number
  maxInFlight: number
  exclusiveOverlap: boolean
  exclusiveRunning: number
  started: Array<{ turn: number; at: number }>
}

export const newBodies = (): Bodies => ({ inFlight: 0, maxInFlight: 0, exclusiveOverlap: false, exclusiveRunning: 0, started: [] })

export function fuzzTools(schedule: () => Promise<void>, plan: { toolFails: boolean[]; i: number }, bodies: Bodies, eventsLen: () => number, sizes: readonly number[] | null): AnyTool[] {
  const body = (fail: boolean, exclusive: boolean) => async (args: { n: number }, ctx: { signal: AbortSignal; turn: number }) => {
    bodies.started.push({ turn: ctx.turn, at: eventsLen() })
    // R4: a barrier body never overlaps any other body.
    if (bodies.exclusiveRunning > 0 || (exclusive && bodies.inFlight > 0)) bodies.exclusiveOverlap = true
    bodies.inFlight++
    if (exclusive) bodies.exclusiveRunning++
    bodies.maxInFlight = Math.max(bodies.maxInFlight, bodies.inFlight)
    try {
      await schedule()
      if (fail) throw new Error('fuzz tool failure')
      if (sizes) return 'x'.repeat(sizes[Math.abs(args.n) % sizes.length]!)
      return { ok: true }
    } finally {
      bodies.inFlight--
      if (exclusive) bodies.exclusiveRunning--
    }
  }
  const next = () => plan.toolFails[plan.i++ % Math.max(1, plan.toolFails.length)] ?? false
  return [
    defineTool({ name: 'fuzz_parallel', description: 'parallel-safe', parameters: z.object({ n: z.number() }), isConcurrencySafe: () => true, execute: (a, c) => body(next(), false)(a, c) }),
    defineTool({ name: 'fuzz_exclusive', description: 'exclusive', parameters: z.object({ n: z.number() }), execute: (a, c) => body(next(), true)(a, c) }),
    defineTool({ name: 'fuzz_throw', description: 'always throws', parameters: z.object({ n: z.number() }), execute: (a, c) => body(true, true)(a, c) }),
  ] as AnyTool[]
}
