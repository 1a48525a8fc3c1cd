/** Shared set-up for the approval tests (docs/spec/lifecycle.md §9): tools that need approval and count their runs. */
import { z } from 'zod'
import type { Timers } from '../../agent/index.js'
import { defineTool } from '../../tools/index.js'

/** A tool whose body counts its runs by arguments (R10: at most once per tool/call). */
export function countingTool(name: string, opts: { needsApproval?: boolean | ((a: { path: string }) => boolean); timeoutMs?: number } = {}) {
  const runs: string[] = []
  const tool = defineTool({
    name,
    description: `${name} a file`,
    parameters: z.object({ path: z.string() }),
    ...(opts.needsApproval !== undefined ? { needsApproval: opts.needsApproval } : {}),
    ...(opts.timeoutMs !== undefined ? { approval: { timeoutMs: opts.timeoutMs } } : {}),
    execute: ({ path }) => {
      runs.push(path)
      return `${name} ${path}`
    },
  })
  return { tool, runs }
}

/** Timers under the test's control: `fire()` runs every armed timeout. */
export function manualTimers() {
  const pending = new Map<number, { fn: () => void; ms: number }>()
  let n = 0
  const timers: Timers = {
    sleep: async () => {},
    random: () => 0.5,
    setTimeout: (fn, ms) => {
      pending.set(++n, { fn, ms })
      return n
    },
    clearTimeout: (h) => {
      pending.delete(h as number)
    },
  }
  return {
    timers,
    armed: () => [...pending.values()].map((t) => t.ms),
    fire() {
      for (const [id, t] of [...pending]) {
        pending.delete(id)
        t.fn()
      }
    },
  }
}

/** A clock the test moves. */
export function manualClock(start = 1_764_450_000_000) {
  let t = start
  return { now: () => t, advance: (ms: number) => (t += ms) }
}

/** Lets pending microtasks and chained ones run. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r))
}
