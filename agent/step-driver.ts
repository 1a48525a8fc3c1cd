/**
 * Runs one step (docs/spec/lifecycle.md §4): drives the step machine and performs the effect of each of its
 * states. The machine decides the route and the outcome; this file only does what it is told and
 * reports what happened.
 */
import { runMachine, type MachineRunner } from '../machines/lean-actor.js'
import type {
  AssistantMessage, EventDraft, EventOf, LogEvent, ModelMessage, RequestConfig, StepOutcome, StreamChunk, ToolSpec,
  UserMessage,
} from '../events/index.js'
import type { Session } from '../events/session.js'
import { stepMachine, type StepContext, type StepEvent } from '../machines/step.js'
import type { ModelAdapter, ModelRequest, PartialMessage, StreamOutcome } from '../models/index.js'
import { consumeCheckedStream } from '../models/checked-stream.js'
import type { HistoryState } from '../reducers/history.js'
import type { LifecycleState } from '../reducers/lifecycle.js'
import { runToolCalls } from '../tools/scheduler.js'
import type { AnyTool, LiveChild, ToolEnv, ToolOutcome } from '../tools/types.js'
import { inputEnv, type InputHost } from './inputs.js'
import { approvalEnv, type ApprovalHost } from './approvals.js'
import { childResumer, type RestoredStep } from './restore.js'
import { hookFailure } from './decisions.js'
import { isAbandoned } from './grace.js'
import { estimatedUsage, StreamedChars } from './estimated-usage.js'
import type { HookRegistry } from './hooks.js'
import type { BudgetMeter } from './budget.js'
import { headerChanged, historyFromLog, requestFromLog, requestMismatch } from './request.js'
import type { AgentOptions, HookName, InboxHandle, Timers } from './types.js'
import { TurnlogError, isRunnableCall } from '../events/index.js'

/**
 * What a step needs of its agent: exactly these members (the agent, `TurnlogAgent`, provides
 * them). The driver reads the live projections and writes only `stepActor`, `step` and `resumed`.
 */
export interface StepHost extends InputHost {
  readonly sessionId: string
  readonly options: Pick<AgentOptions, 'inspect' | 'system' | 'model' | 'checkRequests' | 'store'>
  readonly hooks: HookRegistry
  readonly timers: Timers
  readonly tools: ReadonlyMap<string, AnyTool>
  readonly toolSpecs: readonly ToolSpec[]
  readonly baseConfig: RequestConfig
  readonly maxParallelToolCalls: number
  readonly lifecycle: LifecycleState
  readonly historyState: HistoryState
  readonly session: Pick<Session, 'events' | 'length'>
  readonly inbox: Pick<InboxHandle, 'nextStep'>
  /** The step machine's actor, reused from step to step. */
  stepActor: MachineRunner<StepContext, StepEvent> | null
  /** The running step (for cancel and snapshot); null between steps. */
  step: StepRun | null
  /** True until the first request after a resume logs its header. */
  resumed: boolean
  within<T>(value: Promise<T>, where: string): Promise<T>
  append(draft: EventDraft): LogEvent
  emit(name: HookName, payload: unknown): void
  reportError(error: unknown, where: string): void
  splice(target: 'next-step', start: number, deleteCount: number, inserted: UserMessage[]): UserMessage[]
  /** Running children (docs/spec/lifecycle.md §10): a subagent call registers its child here. */
  readonly children?: { attach(child: LiveChild): () => void }
  /** The budget meter (agent/budget.ts): the per-call `toolCalls` gate and the links a child's budget joins. */
  readonly budget?: BudgetMeter | null
}

/** A running step, as the agent sees it (for cancel and snapshots). */
export interface StepRun {
  turn: number
  step: number
  abort(): void
  state(): string
}

export async function runStep(
  agent: StepHost,
  turn: number,
  step: number,
  entered: readonly UserMessage[],
  signal: AbortSignal,
  abortedAlready: boolean,
  restore: RestoredStep | null = null,
): Promise<StepOutcome> {
  const actor = (agent.stepActor ??= runMachine(stepMachine, {}, agent.options.inspect))
  if (restore !== null) actor.send({ type: 'RESTORE', turn, step, toolCalls: restore.calls.length })
  else actor.send({ type: 'BEGIN', turn, step, aborted: abortedAlready || signal.aborted })
  agent.step = { turn, step, abort: () => actor.send({ type: 'ABORT' }), state: () => String(actor.getSnapshot().value) }

  let system = ''
  let tools: readonly ToolSpec[] = []
  let request: ModelRequest | null = null
  const chunkSeqs: number[] = []
  let success: Extract<StreamOutcome, { kind: 'success' }> | null = null
  let partial: PartialMessage | null = null

  try {
    for (;;) {
      const state = actor.getSnapshot().value as string
      switch (state) {
        case 'entering': {
          agent.append({ type: 'step/start', data: { turn, step } })
          for (const message of entered) agent.append({ type: 'user/message', data: { message }, surfaceOp: 'append' })
          actor.send({ type: 'ENTERED' })
          break
        }
        case 'assembling': {
          // No listener: the options' prompt and tools, with no payload, no wait and no guard (a
          // hook a session does not use costs nothing per step; benchmark B5)
          if (agent.hooks.count('system-prompt/assemble') === 0) {
            system = agent.options.system ?? ''
            tools = agent.toolSpecs
            actor.send({ type: 'ASSEMBLED' })
            break
          }
          try {
            const r = await agent.within(agent.hooks.waterfall('system-prompt/assemble', { turn, step, system: agent.options.system ?? '', tools: agent.toolSpecs, signal }, (p) => ({ system: p.system, tools: p.tools })), 'system-prompt/assemble')
            system = r.system
            tools = r.tools
            if (typeof system !== 'string' || !Array.isArray(tools)) throw new TypeError('system-prompt/assemble must return { system: string, tools: ToolSpec[] }')
          } catch (err) {
            if (isAbandoned(err)) {
              actor.send({ type: 'HOOK_FAILED', failure: hookFailure('system-prompt/assemble', err) }) // aborted: to aborting
              break
            }
            agent.reportError(err, 'system-prompt/assemble')
            actor.send({ type: 'HOOK_FAILED', failure: hookFailure('system-prompt/assemble', err) })
            break
          }
          actor.send({ type: 'ASSEMBLED' })
          break
        }
        case 'requesting': {
          let config: RequestConfig
          if (agent.hooks.count('agent/request') === 0) config = { ...agent.baseConfig }
          else try {
            config = await agent.within(agent.hooks.waterfall('agent/request', { turn, step, config: { ...agent.baseConfig }, system, tools, signal }, (p) => p.config), 'agent/request')
          } catch (err) {
            if (!isAbandoned(err)) agent.reportError(err, 'agent/request')
            actor.send({ type: 'HOOK_FAILED', failure: hookFailure('agent/request', err) })
            break
          }
          if (actor.getSnapshot().context.aborted) {
            actor.send({ type: 'REQUESTED' })
            break
          }
          try {
            request = freezeRequest(agent, system, tools, config)
          } catch (err) {
            agent.reportError(err, 'agent/request')
            actor.send({ type: 'HOOK_FAILED', failure: hookFailure('agent/request', err) })
            break
          }
          actor.send({ type: 'REQUESTED' })
          break
        }
        case 'streaming': {
          let stream: AsyncIterable<StreamChunk>
          if (agent.hooks.count('llm/stream') === 0) stream = adapterStream(agent.options.model, request!, signal)
          else try {
            stream = await agent.within(agent.hooks.waterfall('llm/stream', { turn, step, request: request!, signal }, (p) => adapterStream(agent.options.model, p.request, p.signal)), 'llm/stream')
          } catch (err) {
            if (!isAbandoned(err)) agent.reportError(err, 'llm/stream')
            actor.send({ type: 'HOOK_FAILED', failure: hookFailure('llm/stream', err) })
            break
          }
          const seen = new StreamedChars()
          const outcome = await consumeCheckedStream(() => stream, request!, signal, (chunk) => {
            const e = agent.append({ type: 'assistant/chunk', data: { turn, step, chunk } })
            chunkSeqs.push(e.seq)
            seen.add(chunk)
            // no payload built for a hook nobody listens to
            if (agent.hooks.count('agent/assistant-stream') !== 0) agent.emit('agent/assistant-stream', { turn, step, chunk })
          })
          if (outcome.kind !== 'success') {
            // cut off mid-stream before the provider's usage: the tokens were spent all the same, so
            // the step's record gets an estimate (docs/spec/lifecycle.md §10; agent/estimated-usage.ts)
            const usage = estimatedUsage(request, seen, chunkSeqs.length)
            if (usage !== null) chunkSeqs.push(agent.append({ type: 'assistant/chunk', data: { turn, step, chunk: { type: 'usage', usage } } }).seq)
          }
          if (outcome.kind === 'success') {
            success = outcome
            const calls = outcome.message.content.filter(isRunnableCall).length
            actor.send({ type: 'STREAMED', result: 'success', finish: outcome.finish, toolCalls: calls })
          } else if (signal.aborted) {
            partial = outcome.partial
            actor.send({ type: 'STREAMED', result: 'aborted', visibleStreamed: outcome.partial.streamedVisible })
          } else {
            actor.send({ type: 'STREAMED', result: 'failure', failure: outcome.failure })
          }
          break
        }
        case 'committing': {
          const s = success!
          agent.append({
            type: 'assistant/message',
            data: { turn, step, message: s.message, ...(s.usage ? { usage: s.usage } : {}), finish: s.finish, ...(s.explanation !== undefined ? { explanation: s.explanation } : {}) },
            surfaceOp: 'append',
            sourceEventSeqs: chunkSeqs,
          })
          actor.send({ type: 'COMMITTED' })
          break
        }
        case 'runningTools': {
          const calls = restore !== null ? restore.calls.map((c) => c.block) : success!.message.content.filter(isRunnableCall) /* a provider-executed call is not ours to run */
          const env = toolEnv(agent, turn, step, signal, restore)
          if (restore !== null) env.restored = { calls: restore.calls, decidedSinceParked: restore.decidedSinceParked, parked: restore.parked }
          const r = await runToolCalls(calls, env)
          actor.send({ type: 'TOOLS_DONE', concluded: r.concluded, aborted: r.aborted || signal.aborted })
          break
        }
        case 'aborting': {
          const ctx = actor.getSnapshot().context
          if (ctx.visibleStreamed && partial) {
            agent.append({
              type: 'assistant/message',
              data: { turn, step, message: partial.message as AssistantMessage, finish: 'stop', interrupted: true },
              surfaceOp: 'append',
              sourceEventSeqs: chunkSeqs,
            })
          }
          actor.send({ type: 'INTERRUPTED' })
          break
        }
        case 'ended': {
          const outcome = actor.getSnapshot().context.outcome!
          agent.append({ type: 'step/end', data: { turn, step, outcome } })
          return outcome
        }
        default:
          throw new Error(`step machine in unexpected state ${state}`)
      }
    }
  } finally {
    agent.step = null
  }
}

/** The adapter's `info.provider` (user data: read inside a guard; a non-string is no provider). */
function providerOf(model: ModelAdapter): string | undefined {
  try {
    const p = model.info?.provider
    return typeof p === 'string' && p !== '' ? p : undefined
  } catch {
    return undefined
  }
}

/** Builds the frozen request, logs `request/header` when it changed, and checks R3. */
function freezeRequest(agent: StepHost, system: string, tools: readonly ToolSpec[], config: RequestConfig): ModelRequest {
  const last = agent.lifecycle.header
  if (agent.resumed || headerChanged(last, system, tools, config)) {
    const reason = agent.resumed ? 'resume' : last === null ? 'initial' : 'change'
    const provider = providerOf(agent.options.model)
    agent.append({ type: 'request/header', data: { reason, config, system, tools: [...tools], ...(provider !== undefined ? { provider } : {}) } })
    agent.resumed = false
  }
  // Zero-copy request: the messages are the live history array as of now (its length), copied and
  // frozen on first read. Safe because that array is only ever appended to after this point: the
  // agent swaps in a copy before a replacement splices the history (agent.ts #fold). So a step
  // costs O(1) in the history's size (B3); an adapter that reads the messages pays the copy once.
  const live = agent.historyState.messages
  const length = live.length
  let snapshot: readonly ModelMessage[] | undefined
  // Tools and config are the logged header's (docs/spec/lifecycle.md §4.3): the session validated them into its
  // own copies and deep-froze them, and they equal what the hooks decided (a new header is logged
  // whenever they differ). So the request is deeply frozen every time, whether or not a header was
  // just logged, at no cost per request: an adapter that pushes to `request.tools` or sets
  // `request.config.temperature` gets a TypeError (a stream failure), never a changed next request,
  // and neither the agent's tool list nor a hook's objects are shared with the adapter.
  const logged = agent.lifecycle.header!
  const request: ModelRequest = Object.freeze({
    get messages(): readonly ModelMessage[] {
      return (snapshot ??= Object.freeze(live.slice(0, length)))
    },
    system,
    tools: logged.tools,
    config: logged.config,
  })
  // Model-visible means logged (R3): the request must be what the log rebuilds at this seq.
  // 'log' compares with the live projection without materialising the messages (same array,
  // same length, same last message: O(1)); 'full' re-folds the whole log and compares every message.
  const full = agent.options.checkRequests === 'full'
  const header = agent.lifecycle.header!
  const mismatch = full
    ? requestMismatch(request, requestFromLog(header, historyFromLog(agent.session.events)), true)
    : requestMismatch({ messages: live, system, tools, config }, requestFromLog(header, agent.historyState.messages), false)
      ?? (live.length !== length ? 'messages (the history changed while the request was built)' : null)
  if (mismatch !== null) {
    throw new TurnlogError('INVARIANT', `the request differs from the log in ${mismatch}`, {
      invariant: 'R3', seq: agent.session.length - 1, field: mismatch, sessionId: agent.sessionId,
    })
  }
  return request
}

/**
 * The adapter's stream, with a synchronous throw from `stream()` (before any iterator exists)
 * deferred to the first read: it is then the same stream failure as one thrown by the iterator
 * (retried when transient), not a failure of the `llm/stream` hook that merely called `next()`.
 */
function adapterStream(model: ModelAdapter, request: ModelRequest, signal: AbortSignal): AsyncIterable<StreamChunk> {
  try {
    return model.stream(request, signal)
  } catch (error) {
    return {
      [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
    }
  }
}

function toolEnv(agent: StepHost, turn: number, step: number, signal: AbortSignal, restore: RestoredStep | null): ToolEnv {
  const restoredChild = (callId: string) => restore?.calls.find((c) => c.block.id === callId)?.child
  const gate = agent.budget?.callGate()
  return {
    turn,
    step,
    tools: agent.tools,
    maxParallelToolCalls: agent.maxParallelToolCalls,
    signal,
    approvals: { ...approvalEnv(agent, turn, step), inputs: inputEnv(agent, turn, step) },
    appendCall: (call) =>
      agent.append({ type: 'tool/call', data: { turn, step, callId: call.id, name: call.name, arguments: call.arguments } }) as EventOf<'tool/call'>,
    appendResult: (call, callSeq, outcome: ToolOutcome) =>
      agent.append({
        type: 'tool/result',
        data: {
          turn, step, callId: call.id,
          message: { role: 'tool', callId: call.id, content: outcome.content, ...(outcome.error ? { isError: true as const } : {}) },
          ...(outcome.error ? { error: outcome.error } : outcome.json ? { json: true as const } : {}),
        },
        surfaceOp: 'append',
        sourceEventSeqs: [callSeq],
      }) as EventOf<'tool/result'>,
    queueContext: (message) => {
      agent.splice('next-step', agent.inbox.nextStep.length, 0, [message])
    },
    ...(gate !== undefined ? { budgetRefusal: gate } : {}),
    children: {
      session: agent.sessionId,
      store: agent.options.store,
      // a call restored with its child (docs/spec/lifecycle.md §10) logged its `child/spawned` before the crash
      spawned: (callId, child) => restoredChild(callId)?.seq ?? agent.append({ type: 'child/spawned', data: { turn, step, callId, child } }).seq,
      attach: (child) => agent.children?.attach(child) ?? (() => {}),
      ...(agent.budget != null ? { budget: (child: string) => agent.budget!.link(child) } : {}),
      reattach: (callId) => {
        const c = restoredChild(callId)
        const resume = childResumer(agent.options)
        if (c === undefined || resume === undefined) return undefined
        return (child: string, options: unknown) =>
          resume({ ...(options as Record<string, unknown>), store: agent.options.store, sessionId: child }, { session: agent.sessionId, seq: c.seq, callId })
      },
    },
    within: (value, where) => agent.within(value, where),
    isAbandoned,
    preExecute: (p, innermost) => agent.hooks.waterfall('tools/pre-execute', p, innermost),
    execute: (p, innermost) => agent.hooks.waterfall('tools/execute', p, innermost),
    postExecute: (p, innermost) => agent.hooks.waterfall('tools/post-execute', p, innermost),
    reportError: (error, where) => agent.reportError(error, where),
    setTimeout: (fn, ms) => agent.timers.setTimeout(fn, ms),
    clearTimeout: (h) => agent.timers.clearTimeout(h),
  }
}

