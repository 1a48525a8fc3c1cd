/**
 * `rerun(golden, options)`: a recorded session re-run with a change under test (docs/spec/api.md "Golden
 * sessions"). The golden's events before `from` are the new log's prefix, verbatim; an agent
 * resumes on it (as `resumeAgent` would) with the model, tools, hooks and system under test.
 * Steps of the first live turn before `from.step` are served as recorded (model and tools); the
 * recorded inputs after the prefix are re-issued at their lifecycle positions (reissue.ts); tool
 * results come from the golden, the tools or mocks (tool-results.ts). The result compares the new
 * log with the golden (compare.ts) and verifies it. See
 * decision record "golden-sessions" (docs/decisions/ in the repository).
 */
import { randomUUID } from 'node:crypto'
import { createAgent, type TurnlogAgent } from '../agent/agent.js'
import { PASS_THROUGH } from '../agent/hooks.js'
import type { AgentOptions, HookMap } from '../agent/types.js'
import { TurnlogError } from '../events/errors.js'
import type { EventOf, LogEvent } from '../events/index.js'
import type { LogHeader } from '../events/jsonl.js'
import type { ModelAdapter } from '../models/types.js'
import { key2 } from '../replay/reexecute/facts.js'
import { Recording } from '../replay/reexecute/recording.js'
import { DEFAULT_MAX_PARALLEL_TOOL_CALLS } from '../tools/pool-size.js'
import type { PreExecutePayload } from '../tools/types.js'
import { verify } from '../replay/verify.js'
import { firstDivergence, toolSequenceDiff, usageDelta } from './compare.js'
import { before, goldenGaps, headerBefore, loadGolden, planLive } from './golden.js'
import { isAgentSplice, planInputs, recordedApprovalIds, recordedInputIds } from './inputs.js'
import { recordedStream } from './model.js'
import { Reissuer } from './reissue.js'
import { SettleOrder } from './settle-order.js'
import { ToolResults } from './tool-results.js'
import type { GoldenInput, RerunOptions, RerunResult, StepModel } from './types.js'

const macrotask = () => new Promise<void>((r) => setImmediate(r))

function isStepModel(m: unknown): m is StepModel {
  try {
    return typeof m === 'object' && m !== null && typeof (m as StepModel).streamStep === 'function'
  } catch {
    return false
  }
}

/** Re-runs `golden` with the change under test. Bad options throw `INVALID_OPTION` naming the field. */
export async function rerun(goldenInput: GoldenInput, opts: RerunOptions): Promise<RerunResult> {
  const golden = await loadGolden(goldenInput)
  const events = golden.events
  if (opts === null || typeof opts !== 'object') throw new TurnlogError('INVALID_OPTION', 'rerun needs options with a model', { field: 'options' })
  const user = opts.model
  if (!isStepModel(user) && (typeof user !== 'object' || user === null || typeof (user as ModelAdapter).stream !== 'function')) {
    throw new TurnlogError('INVALID_OPTION', 'model must be a ModelAdapter ({ stream }) or a StepModel ({ streamStep }, e.g. recordedModel(golden))', { field: 'model' })
  }
  const plan = planLive(events, opts.from)
  // a golden that ends inside a turn has no end for the re-run to reach: refused at once (issue
  // 38.28: it used to wait timeoutMs for a step that the recording never ends)
  const open = goldenGaps(events, plan.cut).open
  if (open !== undefined) {
    throw new TurnlogError('INVALID_ARGUMENT', `the golden ends inside turn ${open.turn} (turn/start at seq ${open.seq}, no turn/end): a golden must end at a turn boundary; turnlog repair closes the turn, turnlog fork --at ${open.seq} keeps what came before it`, { field: 'golden', seq: open.seq })
  }
  // The sends that opened the first live turn are re-issued (they wake it), not inherited.
  let cut = plan.cut
  while (cut > 0 && events[cut - 1]!.type === 'agent/inbox/spliced' &&
    !isAgentSplice((events[cut - 1] as EventOf<'agent/inbox/spliced'>).data) && events[cut - 2]?.type !== 'session/end-seed') cut--
  const prefix = events.slice(0, cut)
  const rec = new Recording(events)
  // the request header each served step was answered under
  const servedHeader = new Map<string, EventOf<'request/header'>>()
  {
    let last: EventOf<'request/header'> | undefined
    for (const e of events) {
      if (e.type === 'request/header') last = e as EventOf<'request/header'>
      if (e.type === 'step/end' && last) servedHeader.set(key2((e as EventOf<'step/end'>).data.turn, (e as EventOf<'step/end'>).data.step), last)
    }
  }
  const served = (turn: number, step: number) => turn >= plan.turn && before(plan.live, { turn, step })
  const liveHeader = headerBefore(events, plan.liveSeq)
  const errors: string[] = []
  let agent!: TurnlogAgent
  let reissuer!: Reissuer
  // served bodies settle in the golden's order (settle-order.ts), not at once in start order
  const order = new SettleOrder(events, opts.maxParallelToolCalls ?? DEFAULT_MAX_PARALLEL_TOOL_CALLS, () => agent.events)
  const tools = new ToolResults(events, plan, opts, () => agent.events, (ctx) => reissuer?.onBodyStart(ctx.turn, ctx.step, ctx.callId), order)

  const model: ModelAdapter = {
    info: { name: liveHeader?.data.config.model ?? user.info?.name ?? 'model', ...(user.info?.contextWindow !== undefined ? { contextWindow: user.info.contextWindow } : {}) },
    stream(request, signal) {
      const l = agent.lifecycle
      const at = { turn: l.openTurn ?? 0, step: l.openStep ?? 0 }
      if (request.purpose !== 'compaction' && served(at.turn, at.step)) {
        const step = rec.steps.get(key2(at.turn, at.step))
        if (step) return recordedStream(step, signal)
      }
      return isStepModel(user) ? user.streamStep(at, request, signal) : (user as ModelAdapter).stream(request, signal)
    },
  }

  // Served steps are requested as recorded: the recorded system, tools and config win over the change.
  const own: Partial<{ [K in keyof HookMap]: HookMap[K] }> = {
    'system-prompt/assemble': async (p, next) => {
      const r = await next()
      const h = served(p.turn, p.step) ? servedHeader.get(key2(p.turn, p.step)) : undefined
      return h ? { system: h.data.system, tools: h.data.tools } : r
    },
    'agent/request': async (p, next) => {
      const r = await next()
      const h = served(p.turn, p.step) ? servedHeader.get(key2(p.turn, p.step)) : undefined
      return h ? h.data.config : r
    },
    // outermost, a pass-through: the call's verdict is known when the golden's order says
    // (settle-order.ts); once the listeners under test answered, a cancel that came while they
    // decided is issued (reissue.ts `onPreExecuted`), before the scheduler reads the verdict
    'tools/pre-execute': Object.assign(async (p: PreExecutePayload, next: (p?: PreExecutePayload) => Promise<unknown>) => {
      const verdict = await order.preExecute(p, next)
      reissuer.onPreExecuted(p.turn, p.step, p.call.id)
      return verdict
    }, { [PASS_THROUGH]: true as const }) as HookMap['tools/pre-execute'],
    // outermost, a pass-through: a commit waits until the golden logs its result next (settle-order.ts)
    'tools/post-execute': order.postExecute as HookMap['tools/post-execute'],
    // outermost: runs right after the step's claim, before the hooks under test
    'agent/pre-step': (_p, next) => {
      reissuer.onPreStep()
      return next()
    },
    'agent/error': (e) => {
      errors.push(`${e.where}: ${(e.error as Error)?.message ?? String(e.error)}`)
      // a turn-stopping listener under test threw: ours (the innermost) will not run, and the turn
      // ends next; the sends held for it came while the listeners ran, before that end
      if (e.where === 'agent/turn-stopping') reissuer.onStopping()
    },
  }
  const userHooks = typeof opts.hooks === 'function' ? opts.hooks() : opts.hooks
  const hooks: Record<string, unknown> = { ...(userHooks ?? {}) }
  for (const [name, fn] of Object.entries(own)) {
    const u = (userHooks as Record<string, unknown> | undefined)?.[name]
    hooks[name] = [fn, ...(u === undefined ? [] : Array.isArray(u) ? u : [u])]
  }
  // serial hooks run in registration order: ours first (a cancel that came while they ran) and
  // last (the inputs that came after the hooks under test had their say)
  {
    const u = (userHooks as Record<string, unknown> | undefined)?.['agent/turn-stopping']
    hooks['agent/turn-stopping'] = [() => reissuer.onStoppingStart(), ...(u === undefined ? [] : Array.isArray(u) ? u : [u]), () => reissuer.onStopping()]
  }
  const plugins = typeof opts.plugins === 'function' ? opts.plugins() : opts.plugins
  agent = createAgent({
    model,
    tools: (opts.tools ?? []).map((t) => tools.wrap(t)),
    system: opts.system ?? liveHeader?.data.system ?? '',
    config: opts.config ?? liveHeader?.data.config ?? {},
    ...(prefix.length > 0 ? { prefix } : {}),
    sessionId: opts.sessionId ?? randomUUID(),
    hooks: hooks as AgentOptions['hooks'],
    ...(plugins && plugins.length ? { plugins } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    // a message the re-run's hooks send again gets the recorded id (see Reissuer.idForDraw)
    ids: () => reissuer?.idForDraw() ?? randomUUID(),
    ...(opts.timers ? { timers: opts.timers } : {}),
    // recorded firings are re-issued at their positions (reissue.ts): the re-run's timer fires none
    wakeups: { timer: false },
    ...(opts.maxParallelToolCalls !== undefined ? { maxParallelToolCalls: opts.maxParallelToolCalls } : {}),
    ...(opts.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: opts.maxStepsPerTurn } : {}),
    ...(opts.retry !== undefined ? { retry: opts.retry } : {}),
  }) as TurnlogAgent

  // The re-run continues the golden's process, it does not resume it: no `request/header
  // {resume}` marks a boundary the golden never had (a header is still logged when the system,
  // tools or config under test differ from the last logged one).
  agent.resumed = false
  reissuer = new Reissuer(agent, planInputs(events, cut), (m) => errors.push(m))
  agent.approvalIdFor = recordedApprovalIds(events, cut) // docs/spec/lifecycle.md §9: the golden's approval ids
  agent.inputIdFor = recordedInputIds(events, cut) // docs/spec/lifecycle.md §11: and its input request ids
  agent.subscribe((e) => reissuer.onAppend(e))
  agent.subscribe((e) => order.onAppend(e))
  // A send by the re-run's own code (a hook's steer): the recorded inputs the log shows before the
  // one it re-makes came first (reissue.ts `beforeOwnSend`), then the send goes through as the hook made it.
  const send = agent.send.bind(agent)
  agent.send = (message, target, wake) => {
    if (!reissuer.issuing) reissuer.beforeOwnSend(message, target, wake)
    return send(message, target, wake)
  }
  let timedOut = false
  try {
    await drive(agent, reissuer, cut, plan.cut, events, opts.timeoutMs ?? 60_000, () => (timedOut = true),
      (seq) => errors.push(`the re-run parked at seq ${seq} with no recorded decision left to answer it; it was ended there`))
  } finally {
    order.close()
    await agent.dispose().catch((err: unknown) => errors.push(`dispose: ${(err as Error)?.message ?? String(err)}`))
  }

  const out = agent.events.slice() as LogEvent[]
  const header: LogHeader = {
    type: 'session', format: 1, id: agent.sessionId, createdAt: out[cut]?.time ?? Date.now(),
    parent: { session: golden.header.id, seq: Math.max(0, cut - 1) }, inheritedEventCount: cut,
  }
  return {
    log: { header, events: out },
    golden,
    liveFrom: cut,
    divergence: firstDivergence(events, out, cut),
    toolSequenceDiff: toolSequenceDiff(events, out, cut),
    usageDelta: usageDelta(events, out),
    verify: verify(out, opts.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: opts.maxStepsPerTurn } : {}),
    unrecorded: tools.unrecorded,
    inputs: reissuer.done,
    errors,
    timedOut,
  }
}

/**
 * Runs the re-run to its end: the inputs recorded at the start first (or a wake, when the turn
 * opened without a send), then until the agent is idle with no recorded input left. A re-run that
 * parks (an approval) with no recorded input left to answer it ends there at once (the comparison
 * shows where it parked; `errors` says so). A re-run that makes no progress for `timeoutMs` has
 * its turn cancelled and is reported `timedOut`.
 */
async function drive(
  agent: TurnlogAgent, reissuer: Reissuer, cut: number, turnStart: number, events: readonly LogEvent[],
  timeoutMs: number, onTimeout: () => void, onParked: (seq: number) => void,
): Promise<void> {
  let stop!: () => void
  const stopped = new Promise<void>((r) => (stop = r))
  let seen = -1
  let timedOut = false
  const watch = setInterval(() => {
    if (reissuer.progress !== seen) {
      seen = reissuer.progress
      return
    }
    timedOut = true
    onTimeout()
    try {
      agent.cancel({ kind: 'hook', reason: `rerun: no progress for ${timeoutMs} ms` })
    } catch {
      // the agent refuses nothing here; a cancel on an idle agent is a no-op
    }
    stop()
  }, timeoutMs)
  try {
    reissuer.start()
    if (cut === turnStart) {
      // the live turn opened without a send right before it (a queued prompt, a resume): wake it
      const t = events[turnStart] as EventOf<'turn/start'>
      if (t.data.cause?.kind === 'resume') agent.armResume(t.data.cause.of)
      agent.wake()
    }
    for (;;) {
      // settled, not idle: a re-run parked on an approval is reported at once, not after timeoutMs
      await Promise.race([agent.whenSettled(), stopped])
      await macrotask()
      if (timedOut) return
      if (agent.status === 'parked') {
        // a recorded decision still queued may answer it; otherwise the golden did not park here
        const before = reissuer.progress
        if (reissuer.pending > 0) {
          reissuer.flushAll()
          await macrotask()
        }
        if (agent.status === 'parked' && reissuer.progress === before) {
          onParked(agent.events.length - 1)
          return
        }
        continue
      }
      if (agent.status !== 'idle') continue
      if (reissuer.pending === 0) return
      reissuer.flushAll()
      await macrotask()
    }
  } finally {
    clearInterval(watch)
  }
}
