/**
 * The stages that run user code (call-stages.ts), exactly (issue 15 part 3): what each malformed
 * or late hook decision becomes, the texts of the error results (L5: the model reads them), the
 * R5 guards of `preExecute` and `runBody` on their own, and the timeout's edges.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { CancelCause, UserMessage } from '../../events/index.js'
import { newCallRec } from '../../tools/call-record.js'
import { callHost, preExecute, runBody } from '../../tools/call-stages.js'
import { defineTool, prepareCall } from '../../tools/define.js'
import { runToolCalls } from '../../tools/scheduler.js'
import type { AnyTool, PostExecuteDecision, PreExecuteDecision, ToolEnv } from '../../tools/types.js'
import { ManualTimers, call, deferred, flush, recordingEnv } from './helpers.js'

const echo = defineTool({
  name: 'echo',
  description: 'echo',
  parameters: z.object({ text: z.string() }),
  isConcurrencySafe: () => true,
  execute: ({ text }) => text,
}) as unknown as AnyTool
const boom = defineTool({
  name: 'boom',
  description: 'throws',
  parameters: z.object({}),
  execute: () => {
    throw new Error('kaput')
  },
}) as unknown as AnyTool

/** A started call of `tool` over `env`, ready for a stage. */
function started(env: ToolEnv, id = 'a', name = 'echo', args: unknown = { text: 'x' }) {
  const rec = newCallRec(call(id, name, args), 0)
  rec.prepared = prepareCall(rec.call, env.tools)
  return rec
}

describe('preExecute on its own: the decision checked (R5, HOOK_ERROR)', () => {
  const verdictOf = async (pre: () => unknown, signal?: AbortSignal) => {
    const r = recordingEnv({ tools: [echo], signal, pre: pre as () => PreExecuteDecision })
    const verdict = await preExecute(started(r.env), callHost(r.env))
    return { verdict, errors: r.errors() }
  }

  it('R5: an allow decided after the cancel is `cancelled` (no body); a deny decided after it stays a deny', async () => {
    const ac = new AbortController()
    expect((await verdictOf(() => (ac.abort({ kind: 'user' }), { kind: 'allow' }), ac.signal)).verdict).toEqual({ kind: 'cancelled' })
    const ac2 = new AbortController()
    expect((await verdictOf(() => (ac2.abort({ kind: 'user' }), { kind: 'deny', reason: 'no' }), ac2.signal)).verdict).toEqual({ kind: 'deny', reason: 'no' })
  })

  it('DENIED: a deny without a reason gets "no reason given"; an ask keeps only a string question', async () => {
    expect((await verdictOf(() => ({ kind: 'deny' }))).verdict).toEqual({ kind: 'deny', reason: 'no reason given' })
    expect((await verdictOf(() => ({ kind: 'deny', reason: 4 }))).verdict).toEqual({ kind: 'deny', reason: 'no reason given' })
    expect((await verdictOf(() => ({ kind: 'ask' }))).verdict).toStrictEqual({ kind: 'ask' })
    expect((await verdictOf(() => ({ kind: 'ask', question: 3 }))).verdict).toStrictEqual({ kind: 'ask' })
    expect((await verdictOf(() => ({ kind: 'ask', question: 'ok?' }))).verdict).toStrictEqual({ kind: 'ask', question: 'ok?' })
  })

  it.each([
    ['an unknown kind', () => ({ kind: 'maybe' }), '{"kind":"maybe"}'],
    ['undefined', () => undefined, 'undefined'],
    ['null', () => null, 'null'],
    ['a string', () => 'allow', '"allow"'],
    ['a bigint', () => 10n, 'bigint'],
    ['a function that looks like an allow', () => Object.assign(() => 1, { kind: 'allow' }), 'function'],
  ])('HOOK_ERROR: %s is not a decision, named in the message and reported', async (_what, pre, shown) => {
    const { verdict, errors } = await verdictOf(pre)
    const message = `tools/pre-execute returned ${shown}, not a decision`
    expect(verdict).toEqual({ kind: 'hook-error', message })
    expect(errors).toEqual([{ where: 'tools/pre-execute', message }])
  })
})

describe('runBody on its own (R5)', () => {
  it('R5: a body is never started once the turn is cancelled: ABORTED, with its text', async () => {
    const ac = new AbortController()
    ac.abort({ kind: 'user' })
    let ran = false
    const t = defineTool({ name: 't', description: '', parameters: z.object({}), execute: () => void (ran = true) }) as unknown as AnyTool
    const r = recordingEnv({ tools: [t], signal: ac.signal })
    const host = callHost(r.env)
    const outcome = await runBody(started(r.env, 'a', 't', {}), host)
    const message = "Tool 't' was not run: the turn was cancelled before its body started."
    expect(outcome).toEqual({ content: [{ type: 'text', text: message }], error: { code: 'ABORTED', message } })
    expect(ran).toBe(false)
    expect(host.active.size).toBe(0)
  })
})

describe('the pre-execute decision through the scheduler (DENIED, L5)', () => {
  it('DENIED: an ask without a question that nobody answered', async () => {
    const rec = recordingEnv({ tools: [echo], pre: () => ({ kind: 'ask' }) })
    await runToolCalls([call('a', 'echo', { text: 'x' })], rec.env)
    expect(rec.results()).toEqual([{ id: 'a', code: 'DENIED', text: "Tool 'echo' was denied: it needs approval and nobody answered." }])
  })
})

describe('the body: timeouts, cancels and throwing listeners (L5, R5)', () => {
  const slowTool = (execute: (ctx: { concludeTurn(): void; signal: AbortSignal }) => Promise<unknown>) =>
    defineTool({ name: 'slow', description: '', parameters: z.object({}), timeoutMs: 50, execute: (_a, ctx) => execute(ctx) }) as unknown as AnyTool

  it('TOOL_TIMEOUT: the result text and the signal reason name the tool and the deadline', async () => {
    const timers = new ManualTimers()
    let seen: AbortSignal | undefined
    const rec = recordingEnv({ tools: [slowTool((ctx) => ((seen = ctx.signal), new Promise(() => {})))], timers })
    const done = runToolCalls([call('s', 'slow')], rec.env)
    await flush()
    timers.fireAll()
    await done
    expect(rec.results()).toEqual([{ id: 's', code: 'TOOL_TIMEOUT', text: "Tool 'slow' did not finish within 50 ms." }])
    expect((seen!.reason as DOMException).message).toBe("tool 'slow' timed out after 50 ms")
  })

  it('TOOL_TIMEOUT: concludeTurn() called after the deadline does not conclude the step (ARCHITECTURE "concludeTurn")', async () => {
    const timers = new ManualTimers()
    const body = deferred<void>()
    const postGate = deferred<void>()
    const rec = recordingEnv({
      tools: [slowTool(async (ctx) => {
        await body.promise
        ctx.concludeTurn()
        return 'late'
      })],
      timers,
      post: async (_p, next) => {
        await postGate.promise
        return next()
      },
    })
    const done = runToolCalls([call('s', 'slow')], rec.env)
    await flush()
    timers.fireAll() // the result is decided: TOOL_TIMEOUT; its post-execute waits
    await flush()
    body.resolve() // the abandoned body concludes, too late
    await flush()
    postGate.resolve()
    expect(await done).toEqual({ concluded: false, aborted: false })
    expect(rec.results().map((r) => r.code)).toEqual(['TOOL_TIMEOUT'])
  })

  it('a timer that fires after the body finished (a clearTimeout that does not cancel) changes nothing', async () => {
    const timers = new ManualTimers()
    let seen: AbortSignal | undefined
    const quick = defineTool({
      name: 'q', description: '', parameters: z.object({}), timeoutMs: 50, execute: (_a, ctx) => ((seen = ctx.signal), 'fast'),
    }) as unknown as AnyTool
    const rec = recordingEnv({ tools: [quick], timers: { setTimeout: timers.setTimeout, clearTimeout: () => {} } })
    await runToolCalls([call('q', 'q')], rec.env)
    timers.fireAll()
    await flush()
    expect(rec.results()).toEqual([{ id: 'q', code: undefined, text: 'fast' }])
    expect(seen!.aborted).toBe(false)
  })

  it('TOOL_TIMEOUT: a tools/execute listener that throws after the deadline is ignored, not reported', async () => {
    const timers = new ManualTimers()
    const gate = deferred<void>()
    const rec = recordingEnv({
      tools: [slowTool(() => new Promise(() => {}))],
      timers,
      execute: async () => {
        await gate.promise
        throw new Error('late listener')
      },
    })
    const done = runToolCalls([call('s', 'slow')], rec.env)
    await flush()
    timers.fireAll()
    await done
    gate.resolve()
    await flush()
    expect(rec.results().map((r) => r.code)).toEqual(['TOOL_TIMEOUT'])
    expect(rec.errors()).toEqual([])
  })

  it('R5 ABORTED: a body that rejects on the cancel gets the "aborted while it ran" text', async () => {
    const ac = new AbortController()
    const honours = defineTool({
      name: 'h', description: '', parameters: z.object({}),
      execute: (_a, ctx) => new Promise((_res, rej) => ctx.signal.addEventListener('abort', () => rej(ctx.signal.reason))),
    }) as unknown as AnyTool
    const rec = recordingEnv({ tools: [honours], signal: ac.signal })
    const done = runToolCalls([call('a', 'h')], rec.env)
    await flush()
    const cause: CancelCause = { kind: 'user' }
    ac.abort(cause)
    await done
    expect(rec.results()).toEqual([{ id: 'a', code: 'ABORTED', text: "Tool 'h' was aborted: the turn was cancelled while it ran." }])
  })

  it('HOOK_ERROR: a tools/execute listener that replaces the body error by its own is the hook\'s error', async () => {
    const rec = recordingEnv({
      tools: [boom],
      execute: async (p, next) => {
        try {
          return await next(p)
        } catch {
          throw new Error('rewrapped')
        }
      },
    })
    await runToolCalls([call('t', 'boom')], rec.env)
    expect(rec.results()).toEqual([{ id: 't', code: 'HOOK_ERROR', text: "Tool 'boom' failed: the tools/execute hook failed: rewrapped" }])
    expect(rec.errors()).toEqual([{ where: 'tools/execute', message: 'rewrapped' }])
  })

  it('HOOK_ERROR: a tools/execute listener that throws synchronously', async () => {
    const rec = recordingEnv({
      tools: [echo],
      execute: () => {
        throw new Error('sync throw')
      },
    })
    await runToolCalls([call('a', 'echo', { text: 'x' })], rec.env)
    expect(rec.results()).toEqual([{ id: 'a', code: 'HOOK_ERROR', text: "Tool 'echo' failed: the tools/execute hook failed: sync throw" }])
    expect(rec.errors()).toEqual([{ where: 'tools/execute', message: 'sync throw' }])
  })
})

describe('the post-execute decision checked (BLOCKED, contexts, L5)', () => {
  const ctx = (id: string): UserMessage => ({ id, role: 'user', content: [], source: { kind: 'user' } })
  const runPost = async (post: () => unknown) => {
    const rec = recordingEnv({ tools: [echo], post: post as () => PostExecuteDecision })
    await runToolCalls([call('a', 'echo', { text: 'A' })], rec.env)
    return rec
  }

  it('a throwing post-execute listener keeps the outcome and queues no context', async () => {
    const rec = await runPost(() => {
      throw new Error('post broke')
    })
    expect(rec.results()).toEqual([{ id: 'a', code: undefined, text: 'A' }])
    expect(rec.contexts).toEqual([])
    expect(rec.errors()).toEqual([{ where: 'tools/post-execute', message: 'post broke' }])
  })

  it.each([
    ['an unknown kind', () => ({ kind: 'maybe' }), '{"kind":"maybe"}'],
    ['a block without feedback', () => ({ kind: 'block' }), '{"kind":"block"}'],
    ['feedback under another kind', () => ({ kind: 'veto', feedback: 'f' }), '{"kind":"veto","feedback":"f"}'],
    ['null', () => null, 'null'],
    ['a function that looks like a block', () => Object.assign(() => 1, { kind: 'block', feedback: 'f' }), 'function'],
  ])('a malformed decision (%s) keeps the outcome and is reported, naming what it was', async (_what, post, shown) => {
    const rec = await runPost(post)
    expect(rec.results()).toEqual([{ id: 'a', code: undefined, text: 'A' }])
    expect(rec.contexts).toEqual([])
    expect(rec.errors()).toEqual([{ where: 'tools/post-execute', message: `tools/post-execute returned ${shown}, not a decision` }])
  })

  it('additionalContexts that is not an array: the whole decision is refused (no block, no context), reported', async () => {
    const rec = await runPost(() => ({ kind: 'block', feedback: 'no', additionalContexts: 'x' }))
    expect(rec.results()).toEqual([{ id: 'a', code: undefined, text: 'A' }])
    expect(rec.contexts).toEqual([])
    expect(rec.errors()).toEqual([{ where: 'tools/post-execute', message: 'tools/post-execute returned additionalContexts that is not an array' }])
  })

  it('a valid block with contexts: BLOCKED with the feedback, contexts queued', async () => {
    const rec = await runPost(() => ({ kind: 'block', feedback: 'no', additionalContexts: [ctx('m1')] }))
    expect(rec.results()).toEqual([{ id: 'a', code: 'BLOCKED', text: 'no' }])
    expect(rec.contexts.map((m) => m.id)).toEqual(['m1'])
    expect(rec.errors()).toEqual([])
  })

  it('R5: a post-execute listener abandoned after the cancel grace period: ABORTED, no context', async () => {
    const ABANDONED = new Error('abandoned')
    const rec = recordingEnv({ tools: [echo], post: () => ({ kind: 'accept', additionalContexts: [ctx('m1')] }) })
    rec.env.within = <T>(value: Promise<T>, where: string): Promise<T> => {
      if (where !== 'tools/post-execute') return value
      void value.catch(() => {})
      return Promise.reject(ABANDONED)
    }
    rec.env.isAbandoned = (e) => e === ABANDONED
    await runToolCalls([call('a', 'echo', { text: 'A' })], rec.env)
    expect(rec.results()).toEqual([
      { id: 'a', code: 'ABORTED', text: "Tool 'echo' was aborted: tools/post-execute did not settle within the cancel grace period." },
    ])
    expect(rec.contexts).toEqual([])
    expect(rec.errors()).toEqual([])
  })
})
