/**
 * The stages of one tool call that run user code, each read inside a guard: `tools/pre-execute`
 * (its decision checked), the body through `tools/execute` (with its timeout and the cancel), and
 * `tools/post-execute` (block, feedback, additional contexts). Each stage turns whatever the user
 * code does into a verdict or an outcome; none throws. The scheduler (scheduler.ts) decides when
 * each stage runs and commits the results in model order.
 */
import type { UserMessage } from '../events/index.js'
import type { PreVerdict } from './call-machine.js'
import type { CallRec } from './call-record.js'
import { errorOutcome, errorText, outputToOutcome } from './define.js'
import type {
  ChildHost, ExecutePayload, InputContext, InputRequiredSpec, PostExecuteDecision, PreExecuteDecision, ToolContext, ToolEnv, ToolOutcome,
} from './types.js'
import { CHILD_HOST, INPUT_REQUIRED, RESULT_CODE, isInputRequired } from './types.js'

/** What the stages need of the run: the env, the running bodies' signals, and three guards. */
export interface CallHost {
  readonly env: ToolEnv
  /** The signals of the bodies running now (a cancel aborts them all). */
  readonly active: Set<AbortController>
  /** User code, awaited within the agent's cancel grace period (when the env provides one). */
  within<T>(value: Promise<T>, where: string): Promise<T>
  /** True for the error of user code abandoned after the grace period. */
  abandoned(err: unknown): boolean
  /** Reports an error of user code (best effort: never throws). */
  report(err: unknown, where: string): void
}

/** The guards of a run over `env`. */
export function callHost(env: ToolEnv): CallHost {
  return {
    env,
    active: new Set<AbortController>(),
    within: (value, where) => (env.within ? env.within(value, where) : value),
    abandoned: (err) => env.isAbandoned?.(err) === true,
    report: (err, where) => {
      try {
        env.reportError(err, where)
      } catch {
        // reporting is best effort
      }
    },
  }
}

export async function preExecute(rec: CallRec, host: CallHost): Promise<PreVerdict> {
  const env = host.env
  // A call started before a cancel whose pre stage had not begun: no hook, no body (R5).
  if (env.signal.aborted) return { kind: 'cancelled' }
  let decision: PreExecuteDecision
  try {
    decision = await host.within(env.preExecute(
      { call: rec.call, args: rec.prepared!.args, tool: rec.prepared!.tool, turn: env.turn, step: env.step, signal: env.signal },
      () => ({ kind: 'allow' }),
    ), 'tools/pre-execute')
  } catch (err) {
    // abandoned after the cancel's grace period: no body runs (R5), the call ends ABORTED
    if (host.abandoned(err)) return { kind: 'cancelled' }
    host.report(err, 'tools/pre-execute')
    return { kind: 'hook-error', message: errorText(err) }
  }
  let verdict: PreVerdict
  try {
    verdict = checkPreDecision(decision)
  } catch (err) {
    // a decision whose getters throw: the hook's error, not the scheduler's
    verdict = { kind: 'hook-error', message: `tools/pre-execute returned an unreadable decision: ${errorText(err)}` }
  }
  if (verdict.kind === 'hook-error') host.report(new Error(verdict.message), 'tools/pre-execute')
  if (verdict.kind === 'allow' && env.signal.aborted) return { kind: 'cancelled' }
  return verdict
}

/** Runs the body through `tools/execute`; resolves with the outcome at the first of: the body
 * ends, the timeout fires. Never rejects. `input`: the answer of the call's last round
 * (docs/spec/lifecycle.md §11); a body that returns `ctx.inputRequired(…)` resolves with an outcome
 * whose `required` holds the round it asks. */
export function runBody(rec: CallRec, host: CallHost, input?: InputContext): Promise<ToolOutcome> {
  const env = host.env
  const tool = rec.prepared!.tool!
  const name = rec.call.name
  return new Promise<ToolOutcome>((resolve) => {
    const controller = new AbortController()
    rec.controller = controller
    let done = false
    let timer: unknown
    const finish = (o: ToolOutcome): void => {
      if (done) return
      done = true
      if (timer !== undefined) env.clearTimeout(timer)
      host.active.delete(controller)
      resolve(o)
    }
    // R5: no body starts after a cancel.
    if (env.signal.aborted) {
      finish(errorOutcome('ABORTED', `Tool '${name}' was not run: the turn was cancelled before its body started.`))
      return
    }
    // The timeout is user data read at call time (a getter on the definition may throw): a limit
    // that cannot be read is this call's TOOL_ERROR, never a failure of the whole step.
    let ms: number | undefined
    try {
      ms = tool.timeoutMs
    } catch (error) {
      finish(errorOutcome('TOOL_ERROR', `Tool '${name}' was not run: reading its timeoutMs threw: ${errorText(error)}`))
      return
    }
    host.active.add(controller)
    if (ms !== undefined) {
      timer = env.setTimeout(() => {
        timer = undefined
        if (done) return
        // The result is decided now; a body that ignores its signal is abandoned.
        finish(errorOutcome('TOOL_TIMEOUT', `Tool '${name}' did not finish within ${ms} ms.`))
        controller.abort(new DOMException(`tool '${name}' timed out after ${ms} ms`, 'TimeoutError'))
      }, ms)
    }
    // The body's signal is made when first read (Node makes an AbortSignal lazily, and making one
    // is a good share of an instant call's cost; benchmark B5): a body that never reads it pays nothing.
    const ctx: ToolContext = {
      get signal() {
        return controller.signal
      },
      callId: rec.call.id,
      turn: env.turn,
      step: env.step,
      concludeTurn: () => {
        if (!done) rec.concludeRequested = true
      },
      ...(input !== undefined ? { input } : {}),
      inputRequired: (spec: InputRequiredSpec) => ({ [INPUT_REQUIRED]: true as const, spec }) as never,
      ...(env.children !== undefined ? { [CHILD_HOST]: childHost(env.children, rec.call.id) } : {}),
    }
    let bodyThrew: { error: unknown } | null = null
    const innermost = async (p: ExecutePayload): Promise<unknown> => {
      try {
        return await p.tool.execute(p.args, ctx)
      } catch (error) {
        bodyThrew = { error }
        throw error
      }
    }
    let result: Promise<unknown>
    try {
      result = Promise.resolve(
        env.execute({
          call: rec.call, args: rec.prepared!.args, tool,
          get signal() {
            return controller.signal
          },
          turn: env.turn, step: env.step,
        }, innermost),
      )
    } catch (err) {
      result = Promise.reject(err)
    }
    host.within(result, 'tools/execute').then(
      (value) => {
        if (done) return
        let required: { spec: unknown } | null = null
        try {
          if (isInputRequired(value)) required = { spec: value.spec }
        } catch {
          // a hostile value (a throwing proxy): an output like any other, converted below
        }
        finish(required !== null ? { content: [], required: required.spec } : outputToOutcome(tool, value))
      },
      (err: unknown) => {
        if (done) return
        if (host.abandoned(err)) {
          // the body (or a tools/execute listener) ignored the cancel for the whole grace period
          finish(errorOutcome('ABORTED', `Tool '${name}' was abandoned: it did not stop within the cancel grace period.`))
          controller.abort(env.signal.reason)
        } else if (env.signal.aborted) finish(errorOutcome('ABORTED', `Tool '${name}' was aborted: the turn was cancelled while it ran.`))
        else if (bodyThrew !== null && (bodyThrew as { error: unknown }).error === err) {
          if (resultCode(err) === 'TOOL_OUTCOME_UNKNOWN') finish(errorOutcome('TOOL_OUTCOME_UNKNOWN', `Tool '${name}': ${errorText(err)}`))
          else finish(errorOutcome('TOOL_ERROR', `Tool '${name}' failed: ${errorText(err)}`))
        } else {
          host.report(err, 'tools/execute')
          finish(errorOutcome('HOOK_ERROR', `Tool '${name}' failed: the tools/execute hook failed: ${errorText(err)}`))
        }
      },
    )
  })
}

/**
 * Asks `tools/post-execute` about a settled call: the outcome to commit (its own, `BLOCKED`
 * feedback, or `ABORTED` when the hook was abandoned) and the contexts to queue after it. A
 * throwing or malformed hook keeps the outcome (reported).
 */
export async function postExecute(rec: CallRec, host: CallHost): Promise<{ outcome: ToolOutcome; contexts: readonly UserMessage[] }> {
  const env = host.env
  let outcome = rec.outcome!
  let contexts: readonly UserMessage[] = []
  try {
    const d = await host.within(
      env.postExecute({ call: rec.call, outcome, turn: env.turn, step: env.step, signal: env.signal }, () => ({ kind: 'accept' })),
      'tools/post-execute',
    )
    const checked = checkPostDecision(d)
    if (typeof checked === 'string') {
      host.report(new Error(checked), 'tools/post-execute')
    } else {
      if (checked.kind === 'block') {
        outcome = errorOutcome('BLOCKED', checked.feedback)
      }
      // copied here, inside the guard: the list is the hook's (its elements may be getters)
      contexts = Array.from(checked.additionalContexts ?? [])
    }
  } catch (err) {
    if (host.abandoned(err)) {
      // Abandoned: the hook never decided, and it might have blocked (redacted) this outcome, so
      // the outcome is not committed; the call ends ABORTED.
      outcome = errorOutcome('ABORTED', `Tool '${rec.call.name}' was aborted: tools/post-execute did not settle within the cancel grace period.`)
      contexts = []
    } else {
      // A throwing post-execute listener keeps the outcome.
      host.report(err, 'tools/post-execute')
    }
  }
  return { outcome, contexts }
}

function checkPreDecision(d: unknown): PreVerdict {
  if (typeof d === 'object' && d !== null) {
    const k = (d as { kind?: unknown }).kind
    if (k === 'allow') return { kind: 'allow' }
    if (k === 'deny') {
      const reason = (d as { reason?: unknown }).reason
      return { kind: 'deny', reason: typeof reason === 'string' ? reason : 'no reason given' }
    }
    if (k === 'ask') {
      const q = (d as { question?: unknown }).question
      return typeof q === 'string' ? { kind: 'ask', question: q } : { kind: 'ask' }
    }
  }
  return { kind: 'hook-error', message: `tools/pre-execute returned ${describe(d)}, not a decision` }
}

function checkPostDecision(d: unknown): PostExecuteDecision | string {
  if (typeof d === 'object' && d !== null) {
    const { kind, feedback, additionalContexts } = d as { kind?: unknown; feedback?: unknown; additionalContexts?: unknown }
    if (additionalContexts !== undefined && !Array.isArray(additionalContexts)) {
      return 'tools/post-execute returned additionalContexts that is not an array'
    }
    const contexts = additionalContexts as readonly UserMessage[] | undefined
    if (kind === 'accept') return contexts ? { kind, additionalContexts: contexts } : { kind }
    if (kind === 'block' && typeof feedback === 'string') return contexts ? { kind, feedback, additionalContexts: contexts } : { kind, feedback }
  }
  return `tools/post-execute returned ${describe(d)}, not a decision`
}

function describe(v: unknown): string {
  try {
    return v === undefined ? 'undefined' : JSON.stringify(v) ?? typeof v
  } catch {
    return typeof v
  }
}

/** The call's view of its parent's child-session capability (the call id is fixed). */
function childHost(c: NonNullable<ToolEnv['children']>, callId: string): ChildHost {
  const reattach = c.reattach?.(callId)
  return {
    session: c.session, store: c.store, spawned: (child) => c.spawned(callId, child),
    ...(c.attach !== undefined ? { attach: c.attach } : {}),
    ...(reattach !== undefined ? { reattach } : {}),
    ...(c.budget !== undefined ? { budget: c.budget } : {}),
  }
}

/** The result code an internal error stands for ({@link RESULT_CODE}); read inside a guard (the error is a body's). */
function resultCode(err: unknown): unknown {
  try {
    return typeof err === 'object' && err !== null ? (err as { [RESULT_CODE]?: unknown })[RESULT_CODE] : undefined
  } catch {
    return undefined
  }
}
