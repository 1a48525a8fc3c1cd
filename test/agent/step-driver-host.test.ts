/**
 * `runStep` against a hand-built `StepHost` (agent/step-driver.ts): the host is a real `Session`
 * with the real history and lifecycle folds, so the log is checked as the agent's is, but the test
 * can make the host's live projections drift from the log, which the agent itself never does. That
 * is what the R3 request check ("model-visible means logged") exists to catch:
 * - `checkRequests: 'full'` re-folds the whole log and compares every message;
 * - `'log'` (the default) compares with the live projection in O(1): the system prompt, config and
 *   tools against the last logged header, and that the history did not change while the request
 *   was built.
 * A mismatch is a `TurnlogError` `INVARIANT` (invariant R3, field = the member, seq = the last
 * logged event), reported as `agent/error` at `agent/request`; the step ends `failed HOOK_ERROR`
 * and nothing is sent. Also here: the two ways a step starts aborted (the turn's recorded cancel or
 * an aborted signal), a cancel landing after the tools finished, and a step machine in a state the
 * driver does not know.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { HookRegistry } from '../../agent/hooks.js'
import { runStep, type StepHost } from '../../agent/step-driver.js'
import { TurnlogError, type LogEvent, type ModelMessage, type UserMessage } from '../../events/index.js'
import { Session } from '../../events/session.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { historyReducer } from '../../reducers/history.js'
import { inputsReducer } from '../../reducers/inputs.js'
import { approvalsReducer } from '../../reducers/approvals.js'
import { lifecycleReducer } from '../../reducers/lifecycle.js'
import { defineTool } from '../../tools/index.js'
import { verify } from '../../replay/verify.js'
import { fakeClock, instantTimers, trace } from './helpers.js'

const SESSION = 'sess-host'

const user = (id: string, text: string): UserMessage => ({ id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } })

const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text })

interface HostOptions {
  checkRequests?: 'log' | 'full'
  tools?: boolean
}

/** A step host over a real session and the real folds; turn 1 is open. */
function makeHost(script: readonly ScriptedEntry[], { checkRequests, tools = false }: HostOptions = {}) {
  const model = scriptedModel(script, { info: { name: 'scripted' } })
  const session = new Session({ id: SESSION, clock: fakeClock() })
  const history = historyReducer.initial()
  const lifecycle = lifecycleReducer.initial()
  /** When false, `request/header` events are not folded into the lifecycle (a lagging fold). */
  const fold = { headers: true }
  session.addFold((e) => {
    historyReducer.apply(history, e)
    if (e.type !== 'request/header' || fold.headers) lifecycleReducer.apply(lifecycle, e)
  })
  const errors: Array<{ error: unknown; where: string }> = []
  const emitted: string[] = []
  const toolList = tools ? [echo] : []
  const host: StepHost = {
    sessionId: SESSION,
    options: { model, system: 'sys', ...(checkRequests ? { checkRequests } : {}) },
    hooks: new HookRegistry(),
    timers: instantTimers(),
    tools: new Map(toolList.map((t) => [t.name, t])),
    toolSpecs: toolList.map((t) => ({ name: t.name, description: t.description, parameters: z.toJSONSchema(t.parameters) as Record<string, unknown> })),
    baseConfig: { model: 'scripted' },
    maxParallelToolCalls: 4,
    lifecycle,
    historyState: history,
    session,
    inbox: { nextStep: [] },
    stepActor: null,
    step: null,
    resumed: false,
    // approvals (docs/spec/lifecycle.md §9): none of these tools needs one
    approvalsState: approvalsReducer.initial(),
    // input rounds (docs/spec/lifecycle.md §11): none of these tools asks one
    inputsState: inputsReducer.initial(),
    inputOptions: undefined,
    approvalRun: null,
    newId: () => 'id',
    now: () => 0,
    durableWait: () => null,
    setParked: () => {},
    decidingHookCount: () => 0,
    within: (value) => value,
    append: (draft) => session.append(draft),
    emit: (name) => {
      emitted.push(name)
    },
    reportError: (error, where) => {
      errors.push({ error, where })
    },
    splice: () => [],
  }
  session.append({ type: 'turn/start', data: { turn: 1 } })
  return { host, model, session, history, lifecycle, fold, errors, emitted }
}

/** Every hook the step dispatched, by name, in order. */
function recordHooks(host: StepHost): string[] {
  const seen: string[] = []
  for (const name of ['system-prompt/assemble', 'agent/request', 'llm/stream']) {
    host.hooks.on(name, ((p: unknown, next: () => Promise<unknown>) => (seen.push(name), next())) as never)
  }
  return seen
}

function r3Error(errors: ReadonlyArray<{ error: unknown; where: string }>): TurnlogError {
  expect(errors.map((e) => e.where)).toEqual(['agent/request'])
  const err = errors[0]!.error
  expect(TurnlogError.is(err, 'INVARIANT')).toBe(true)
  return err as TurnlogError
}

function failedWith(outcome: unknown, err: TurnlogError) {
  expect(outcome).toEqual({ kind: 'failed', failure: { code: 'HOOK_ERROR', message: `agent/request: ${err.message}` } })
}

const ghost: ModelMessage = { id: 'ghost', role: 'user', content: [{ type: 'text', text: 'never logged' }], source: { kind: 'user' } } as ModelMessage

describe("R3: checkRequests 'full' re-folds the log; 'log' (the default) trusts the live projection", () => {
  it("R3: a projection holding a message the log never had: 'full' refuses the request (INVARIANT R3, messages length), nothing is sent", async () => {
    const { host, model, session, errors } = makeHost([{ text: 'hi' }], { checkRequests: 'full' })
    host.hooks.on('agent/request', ((p: unknown, next: () => Promise<unknown>) => {
      ;(host.historyState.messages as ModelMessage[]).push(ghost) // the drift: in the projection, not in the log
      return next()
    }) as never)
    const outcome = await runStep(host, 1, 1, [user('u1', 'go')], new AbortController().signal, false)
    const err = r3Error(errors)
    expect(err.invariant).toBe('R3')
    expect(err.field).toBe('messages (length 2 vs 1)')
    expect(err.sessionId).toBe(SESSION)
    // seq: the last logged event when the request was checked (its request/header)
    expect(err.seq).toBe(session.length - 2)
    expect(session.events[err.seq!]!.type).toBe('request/header')
    expect(err.message).toContain('the request differs from the log in messages (length 2 vs 1)')
    failedWith(outcome, err)
    expect(model.requests).toHaveLength(0)
    expect(host.step).toBeNull()
    expect(trace(session.events)).toEqual(['turn/start 1', 'step/start 1.1', 'user/message u1', 'request/header initial', 'step/end 1.1 failed HOOK_ERROR'])
  })

  for (const mode of ['log', undefined] as const) {
    it(`R3: checkRequests ${mode ?? 'unset (default log)'}: the same drift passes the O(1) check (same array, same last message); the request is sent`, async () => {
      const { host, model, errors } = makeHost([{ text: 'hi' }], mode ? { checkRequests: mode } : {})
      host.hooks.on('agent/request', ((p: unknown, next: () => Promise<unknown>) => {
        ;(host.historyState.messages as ModelMessage[]).push(ghost)
        return next()
      }) as never)
      const outcome = await runStep(host, 1, 1, [user('u1', 'go')], new AbortController().signal, false)
      expect(errors).toEqual([])
      expect(outcome).toEqual({ kind: 'stop' })
      expect(model.requests).toHaveLength(1)
      expect(model.requests[0]!.messages.map((m) => (m as { id?: string }).id)).toEqual(['u1', 'ghost'])
    })
  }

  it("R3: 'full' compares every message deeply: an earlier message that drifted is caught (messages[0]) though the last is the same", async () => {
    const { host, model, errors } = makeHost([{ text: 'hi' }], { checkRequests: 'full' })
    host.hooks.on('agent/request', ((p: unknown, next: () => Promise<unknown>) => {
      const ms = host.historyState.messages as ModelMessage[]
      ms[0] = { ...ms[0]!, content: [{ type: 'text', text: 'rewritten' }] } as ModelMessage
      return next()
    }) as never)
    const outcome = await runStep(host, 1, 1, [user('u1', 'first'), user('u2', 'second')], new AbortController().signal, false)
    const err = r3Error(errors)
    expect(err.field).toBe('messages[0]')
    failedWith(outcome, err)
    expect(model.requests).toHaveLength(0)
  })

  it("R3: 'log' catches a header the lifecycle fold did not take: the system prompt sent differs from the last logged header's (field system)", async () => {
    const { host, model, session, fold, errors } = makeHost([{ text: 'one' }, { text: 'two' }])
    expect(await runStep(host, 1, 1, [user('u1', 'go')], new AbortController().signal, false)).toEqual({ kind: 'stop' })
    fold.headers = false // the lifecycle projection now lags the log
    host.hooks.on('system-prompt/assemble', (async (p: { system: string }, next: () => Promise<{ system: string; tools: unknown[] }>) => ({ ...(await next()), system: 'sys v2' })) as never)
    const outcome = await runStep(host, 1, 2, [], new AbortController().signal, false)
    const err = r3Error(errors)
    expect(err.invariant).toBe('R3')
    expect(err.field).toBe('system')
    expect(err.sessionId).toBe(SESSION)
    expect(err.seq).toBe(session.length - 2)
    expect(session.events[err.seq!]!.type).toBe('request/header')
    expect((session.events[err.seq!]!.data as { reason: string }).reason).toBe('change')
    expect(err.message).toContain('the request differs from the log in system')
    failedWith(outcome, err)
    expect(model.requests).toHaveLength(1)
  })

  it("R3: 'log' catches a history that changed while the request was built (after its length was taken)", async () => {
    const { host, model, history, errors } = makeHost([{ text: 'hi' }], { checkRequests: 'log' })
    // The driver reads the live history twice while it builds and checks the request: the test
    // makes it grow in between, as an append racing the check would.
    let reads = 0
    Object.defineProperty(host, 'historyState', {
      get() {
        if (++reads === 2) (history.messages as ModelMessage[]).push(ghost)
        return history
      },
    })
    const outcome = await runStep(host, 1, 1, [user('u1', 'go')], new AbortController().signal, false)
    const err = r3Error(errors)
    expect(err.field).toBe('messages (the history changed while the request was built)')
    failedWith(outcome, err)
    expect(model.requests).toHaveLength(0)
  })
})

describe('a step that starts cancelled (R5)', () => {
  it('R5: the turn recorded a cancel (abortedAlready) though the signal is not aborted yet: the step logs its entry and ends aborted; no hook runs', async () => {
    const { host, model, session } = makeHost([{ text: 'never' }])
    const hooks = recordHooks(host)
    const outcome = await runStep(host, 1, 1, [user('u1', 'go')], new AbortController().signal, true)
    expect(outcome).toEqual({ kind: 'aborted' })
    expect(hooks).toEqual([])
    expect(model.requests).toHaveLength(0)
    expect(trace(session.events)).toEqual(['turn/start 1', 'step/start 1.1', 'user/message u1', 'step/end 1.1 aborted'])
  })

  it('R5: the signal is aborted though the turn has not recorded it: the same', async () => {
    const { host, model, session } = makeHost([{ text: 'never' }])
    const hooks = recordHooks(host)
    const c = new AbortController()
    c.abort({ kind: 'user' })
    const outcome = await runStep(host, 1, 1, [user('u1', 'go')], c.signal, false)
    expect(outcome).toEqual({ kind: 'aborted' })
    expect(hooks).toEqual([])
    expect(model.requests).toHaveLength(0)
    expect(trace(session.events)).toEqual(['turn/start 1', 'step/start 1.1', 'user/message u1', 'step/end 1.1 aborted'])
  })

  it('R5: a cancel that lands after the tool run returned, before the step decided, still ends the step aborted (cancel wins)', async () => {
    const { host, session } = makeHost([{ toolCalls: [{ name: 'echo', args: { text: 'x' }, id: 'c1' }] }], { tools: true })
    const c = new AbortController()
    const signal = c.signal
    // The tool run removes its abort listener from the turn's signal as its very last act, then
    // reads the signal for its result. Abort on the next microtask after that: the run reports
    // "not aborted", and the cancel arrives before the step driver resumes.
    let toolsStarted = false
    const append = host.append.bind(host)
    host.append = (draft) => {
      if (draft.type === 'tool/call') toolsStarted = true
      return append(draft)
    }
    const remove = signal.removeEventListener.bind(signal)
    signal.removeEventListener = ((type: string, listener: Parameters<typeof remove>[1]) => {
      remove(type, listener)
      if (toolsStarted && type === 'abort') queueMicrotask(() => c.abort({ kind: 'user' }))
    }) as typeof signal.removeEventListener
    const outcome = await runStep(host, 1, 1, [user('u1', 'go')], signal, false)
    expect(signal.aborted).toBe(true)
    expect(outcome).toEqual({ kind: 'aborted' })
    expect(trace(session.events).slice(-4)).toEqual(['assistant/message tool-calls', 'tool/call c1 echo', 'tool/result c1', 'step/end 1.1 aborted'])
  })
})

describe('a step machine the driver does not know', () => {
  it('R7: a state with no effect is a driver defect: runStep rejects naming the state, and the host no longer shows a running step', async () => {
    const { host } = makeHost([])
    let reads = 0
    host.stepActor = {
      send: () => {},
      getSnapshot: () => {
        // a driver that loops on the unknown state instead of throwing would spin here forever
        if (++reads > 100) throw new Error('the driver kept reading the state')
        return { value: 'limbo', context: {} }
      },
    } as unknown as StepHost['stepActor']
    await expect(runStep(host, 1, 1, [], new AbortController().signal, false)).rejects.toThrow(new Error('step machine in unexpected state limbo'))
    expect(host.step).toBeNull()
  })
})

describe('the host log stays valid', () => {
  it('L1–L16: a normal step against the hand-built host verifies (the fixture is sound)', async () => {
    const { host, session } = makeHost([{ text: 'hi' }], { checkRequests: 'full' })
    expect(await runStep(host, 1, 1, [user('u1', 'go')], new AbortController().signal, false)).toEqual({ kind: 'stop' })
    session.append({ type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } })
    expect(verify(session.events as LogEvent[]).violations).toEqual([])
  })
})
