/**
 * Pool benchmark (issue 4): 100 parallel-safe calls whose bodies each wait 1 ms on a real timer,
 * at `maxParallelToolCalls` 10. The ideal is 10 waves × 1 ms = 10 ms; the figure is the median
 * elapsed time of several runs divided by that ideal (target ≤ 1.3×; printed, never asserted).
 * The env appends nothing durable: this measures the scheduler, not a store.
 */
import { z } from 'zod'
import type { EventOf, ToolCallBlock } from '../events/index.js'
import { defineTool } from '../tools/define.js'
import { runToolCalls } from '../tools/scheduler.js'
import type { AnyTool, ToolEnv } from '../tools/types.js'

const CALLS = 100
const CAP = 10
const BODY_MS = 1
const IDEAL_MS = (CALLS / CAP) * BODY_MS

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

function env(): ToolEnv {
  const tool = defineTool({
    name: 'sleep',
    description: 'waits 1 ms',
    parameters: z.object({}),
    isConcurrencySafe: () => true,
    execute: async () => {
      await sleep(BODY_MS)
      return 'ok'
    },
  }) as unknown as AnyTool
  let seq = 0
  return {
    turn: 1,
    step: 1,
    tools: new Map([[tool.name, tool]]),
    maxParallelToolCalls: CAP,
    signal: new AbortController().signal,
    appendCall: () => ({ seq: seq++ }) as EventOf<'tool/call'>,
    appendResult: () => ({ seq: seq++ }) as unknown as EventOf<'tool/result'>,
    queueContext: () => {},
    preExecute: async (_p, innermost) => innermost(),
    execute: (p, innermost) => innermost(p),
    postExecute: async (_p, innermost) => innermost(),
    reportError: () => {},
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  }
}

const calls: ToolCallBlock[] = Array.from({ length: CALLS }, (_, i) => ({ type: 'tool-call', id: `c${i}`, name: 'sleep', arguments: '{}' }))

async function once(): Promise<number> {
  const e = env()
  const t0 = performance.now()
  await runToolCalls(calls, e)
  return performance.now() - t0
}

/** One 1 ms timer, awaited 10 times in a row: what 10 sequential waves cost on this machine's timers. */
async function timerFloor(): Promise<number> {
  const t0 = performance.now()
  for (let i = 0; i < CALLS / CAP; i++) await sleep(BODY_MS)
  return performance.now() - t0
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

export async function benchPool(): Promise<{ value: number; unit: string; target: string; detail: Record<string, unknown> }> {
  for (let i = 0; i < 50; i++) await once() // warm-up: JIT (zod, the scheduler) settles after a few dozen runs
  const runs: number[] = []
  for (let i = 0; i < 31; i++) runs.push(await once())
  const floors: number[] = []
  for (let i = 0; i < 31; i++) floors.push(await timerFloor())
  const ms = median(runs)
  const floor = median(floors)
  return {
    value: Math.round((ms / IDEAL_MS) * 100) / 100,
    unit: 'x ideal',
    target: '<= 1.3',
    detail: {
      calls: CALLS,
      cap: CAP,
      bodyMs: BODY_MS,
      idealMs: IDEAL_MS,
      medianMs: Math.round(ms * 100) / 100,
      minMs: Math.round(Math.min(...runs) * 100) / 100,
      runs: runs.length,
      /** Ten sequential 1 ms timers: the floor this machine's timers impose on the ideal. */
      timerFloorMs: Math.round(floor * 100) / 100,
      ratioToTimerFloor: Math.round((ms / floor) * 100) / 100,
    },
  }
}
