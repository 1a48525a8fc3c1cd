/**
 * Child sessions under the fuzzer (docs/spec/lifecycle.md §10, L19; `fuzzAgent({ children: true })`): the
 * fuzzer's subagent tool `fuzz_child` (a real `defineSubagent`) runs a child session in the run's
 * store for every call. What each child does is generated with the scenario (`ChildPlan`): its
 * model's answers (text, calls of its own tool, a terminal error, a call of `fuzz_child` again: a
 * grandchild, two levels at most) and sometimes a budget that trips. The child's model chunks and
 * tool bodies wait on the same `fc.scheduler` as the parent's, so the parent's cancels, hostile
 * hangs and timers land while a child streams, runs a tool or closes. The checks are
 * children-check.ts.
 */
import fc from 'fast-check'
import { z } from 'zod'
import { defineSubagent } from '../../agent/subagent.js'
import type { Timers } from '../../agent/types.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool, ToolContext } from '../../tools/types.js'
import { FUZZ_USAGE } from './budget.js'

/** The subagent tool's name, and the child's own tool. */
export const CHILD_TOOL = 'fuzz_child'
export const CHILD_OWN_TOOL = 'fuzz_child_work'
/** Children spawn grandchildren down to this depth (1 = a child, 2 = a grandchild). */
export const MAX_CHILD_DEPTH = 2

/** One child's plan: its model's answers in order (then `child done`), and an optional budget. */
export interface ChildPlan {
  responses: ScriptedEntry[]
  /** A small per-session budget (the responses then report usage), so a child's turn can end `budget`. */
  budget?: { which: 'toolCalls' | 'totalTokens'; limit: number }
  /** The person cancels the parent's turn while this child streams its first answer (when the scheduler says). */
  cancelParent?: boolean
}

const TASK_ARGS = z.object({ task: z.string() })
const N_ARGS = z.object({ n: z.number() })

/** A parent's call of `fuzz_child`: a task, now and then arguments the schema refuses. */
export function arbChildCall(): fc.Arbitrary<{ name: string; args: unknown }> {
  return fc.record({
    name: fc.constant(CHILD_TOOL),
    args: fc.oneof(
      { weight: 5, arbitrary: fc.string({ minLength: 1, maxLength: 8 }).map((task) => ({ task })) },
      { weight: 1, arbitrary: fc.constant<unknown>({ task: 3 }) },
    ),
  })
}

/** One child's plan. */
export function arbChildPlan(): fc.Arbitrary<ChildPlan> {
  const text = fc.string({ minLength: 1, maxLength: 8 })
  const response = fc.oneof(
    { weight: 4, arbitrary: fc.record({ text }) as fc.Arbitrary<ScriptedEntry> },
    { weight: 3, arbitrary: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 3 }).map((ns): ScriptedEntry => ({ toolCalls: ns.map((n) => ({ name: CHILD_OWN_TOOL, args: { n } })) })) },
    { weight: 1, arbitrary: fc.record({ text: fc.constant('grandchild'), toolCalls: fc.constant([{ name: CHILD_TOOL, args: { task: 'deeper' } }]) }) as fc.Arbitrary<ScriptedEntry> },
    { weight: 1, arbitrary: fc.constant<ScriptedEntry>({ error: { code: 'INVALID_CREDENTIAL' } }) },
  )
  return fc.record({
    responses: fc.array(response, { minLength: 1, maxLength: 4 }),
    budget: fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.oneof(
      fc.record({ which: fc.constant<'toolCalls'>('toolCalls'), limit: fc.integer({ min: 0, max: 3 }) }),
      // each child response reports 50 tokens (FUZZ_USAGE)
      fc.record({ which: fc.constant<'totalTokens'>('totalTokens'), limit: fc.integer({ min: 0, max: 120 }) }),
    ) }),
    // without it a parent's cancel landed on a running child in about one run of 150
    cancelParent: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant(true) }),
  }, { requiredKeys: ['responses'] })
}

/** What the child tool needs from its run. */
export interface ChildEnv {
  plans: readonly ChildPlan[]
  /** Awaited before every child model chunk and in every child tool body (the scheduler's hand). */
  schedule(): Promise<void>
  clock(): number
  timers: Timers
  /** Cancels the parent's turn as a person would (cause `user`), when the scheduler says, if `running()` still holds then. */
  cancelParent(running: () => boolean): void
  /** A body of `fuzz_child` at `depth` started (R4/R5's bookkeeping); `done` settles with it (drained before the checks). */
  onBody(ctx: ToolContext, done: Promise<unknown>, depth: number): void
}

/**
 * The subagent tool of one run at `depth` (1 for the parent's). Each call (at any depth) takes
 * the next plan of the run.
 */
export function childTool(env: ChildEnv, depth = 1, next = { i: 0 }): AnyTool {
  const running = new Set<ToolContext>()
  const sub = defineSubagent({
    name: CHILD_TOOL,
    description: 'runs a child session',
    parameters: TASK_ARGS,
    agent: (_args, ctx) => {
      const plan = env.plans[next.i++ % env.plans.length]!
      let cancelled = plan.cancelParent !== true
      const withUsage = (r: ScriptedEntry): ScriptedEntry => (plan.budget !== undefined && typeof r === 'object' && !Array.isArray(r) && !('usage' in r) ? { ...r, usage: FUZZ_USAGE } : r)
      const tools: AnyTool[] = [workTool(env.schedule)]
      if (depth < MAX_CHILD_DEPTH) tools.push(childTool(env, depth + 1, next))
      let n = 0
      return {
        model: scriptedModel((_req, i) => {
          if (!cancelled) {
            cancelled = true
            env.cancelParent(() => running.has(ctx) && !ctx.signal.aborted)
          }
          return withUsage(plan.responses[i] ?? { text: 'child done' })
        }, { beforeChunk: () => env.schedule(), info: { name: 'fuzz-child' } }),
        tools,
        system: `fuzz child ${depth}`,
        clock: env.clock,
        ids: () => `k${++n}`,
        timers: env.timers,
        maxStepsPerTurn: 6,
        ...(plan.budget !== undefined ? { budget: { [plan.budget.which]: plan.budget.limit, scope: 'session' as const } } : {}),
      }
    },
  })
  return {
    ...sub,
    execute: (args: unknown, ctx: ToolContext) => {
      running.add(ctx)
      const done = Promise.resolve(sub.execute.call(sub, args as never, ctx))
      void done.finally(() => running.delete(ctx)).catch(() => {})
      env.onBody(ctx, done, depth)
      return done
    },
  }
}

/** The child's own tool: parallel-safe, settles when the scheduler says; `n = 3` throws. */
function workTool(schedule: () => Promise<void>): AnyTool {
  return defineTool({
    name: CHILD_OWN_TOOL, description: 'child work', parameters: N_ARGS, isConcurrencySafe: () => true,
    execute: async ({ n }) => {
      await schedule()
      if (n === 3) throw new Error('fuzz child tool failure')
      return { ok: n }
    },
  }) as AnyTool
}
