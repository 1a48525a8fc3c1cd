import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { TurnlogError, type CancelCause } from '../../events/index.js'
import { defineTool } from '../../tools/define.js'
import { runToolCalls } from '../../tools/scheduler.js'
import type { AnyTool } from '../../tools/types.js'
import { ManualTimers, at, call, deferred, flush, gatedTool, recordingEnv, type Entry } from './helpers.js'

const bodyStarts = (log: Entry[]) => log.flatMap((e) => (e.kind === 'body-start' ? [e.id] : []))

describe('scheduling (R4, L5, L6)', () => {
  it('R4: parallel siblings start together', async () => {
    const rec = recordingEnv({ tools: [] })
    const g = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', g.tool)
    const done = runToolCalls([call('a', 'p'), call('b', 'p'), call('c', 'p')], rec.env)
    await flush()
    // all three bodies run before any of them is released
    expect(g.stats.running).toBe(3)
    expect(rec.calls()).toEqual(['a', 'b', 'c'])
    expect(rec.results()).toEqual([])
    g.release('a'); g.release('b'); g.release('c')
    await done
    expect(rec.results().map((x) => x.id)).toEqual(['a', 'b', 'c'])
  })

  it('R4: an exclusive call between parallel ones makes three groups', async () => {
    const rec = recordingEnv({ tools: [] })
    const p = gatedTool('p', rec.log, { parallel: true })
    const x = gatedTool('x', rec.log) // no classifier: exclusive
    rec.tools.set('p', p.tool).set('x', x.tool)
    const calls = [call('p1', 'p'), call('p2', 'p'), call('x1', 'x'), call('p3', 'p'), call('p4', 'p')]
    const done = runToolCalls(calls, rec.env)
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['p1', 'p2'])
    p.release('p2')
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['p1', 'p2']) // the barrier waits for p1 too
    p.release('p1')
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['p1', 'p2', 'x1'])
    expect(x.stats.running + p.stats.running).toBe(1)
    x.release('x1')
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['p1', 'p2', 'x1', 'p3', 'p4'])
    p.release('p3'); p.release('p4')
    await done
    const log = rec.log
    // group 1 committed before the barrier's tool/call; the barrier committed before group 3's calls
    expect(at(log, 'result', 'p2')).toBeLessThan(at(log, 'call', 'x1'))
    expect(at(log, 'result', 'x1')).toBeLessThan(at(log, 'call', 'p3'))
    expect(rec.results().map((r) => r.id)).toEqual(['p1', 'p2', 'x1', 'p3', 'p4'])
  })

  it('R4: reclassification after a barrier sees the changed registry', async () => {
    const rec = recordingEnv({ tools: [] })
    const safe = gatedTool('p', rec.log, { parallel: true })
    const unsafe = gatedTool('p', rec.log, { parallel: false })
    const swap = defineTool({
      name: 'swap',
      description: 'makes p unsafe',
      parameters: z.object({}),
      execute: () => {
        rec.tools.set('p', unsafe.tool)
        return 'swapped'
      },
    })
    rec.tools.set('p', safe.tool).set('swap', swap as unknown as AnyTool)
    const done = runToolCalls([call('s', 'swap'), call('a', 'p'), call('b', 'p')], rec.env)
    await flush()
    // 'a' now runs the unsafe version alone: 'b' waits for it
    expect(bodyStarts(rec.log)).toEqual(['a'])
    expect(safe.isStarted('a')).toBe(true) // both gated tools share the log; check which stats moved
    expect(unsafe.stats.running).toBe(1)
    expect(safe.stats.running).toBe(0)
    unsafe.release('a')
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['a', 'b'])
    unsafe.release('b')
    await done
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([['s', undefined], ['a', undefined], ['b', undefined]])
  })

  it('R4: a call that is no longer parallel when a slot frees stops the filling and runs as the next barrier', async () => {
    const rec = recordingEnv({ tools: [], cap: 2 })
    let unsafe = false
    const p = gatedTool('p', rec.log, { parallel: () => !unsafe })
    rec.tools.set('p', p.tool)
    const done = runToolCalls([call('a', 'p'), call('b', 'p'), call('c', 'p'), call('d', 'p')], rec.env)
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['a', 'b'])
    unsafe = true
    p.release('a')
    await flush()
    // c was classified again when a's slot freed: exclusive, so it waits for b to drain
    expect(bodyStarts(rec.log)).toEqual(['a', 'b'])
    expect(rec.calls()).toEqual(['a', 'b'])
    p.release('b')
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['a', 'b', 'c'])
    expect(p.stats.running).toBe(1)
    unsafe = false
    p.release('c')
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['a', 'b', 'c', 'd'])
    p.release('d')
    await done
    expect(p.stats.max).toBe(2)
  })

  it('R4: the pool never exceeds its cap and refills as slots free (rolling, not waves)', async () => {
    const rec = recordingEnv({ tools: [], cap: 3 })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const ids = Array.from({ length: 10 }, (_, i) => `c${i}`)
    const done = runToolCalls(ids.map((id) => call(id, 'p')), rec.env)
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['c0', 'c1', 'c2'])
    p.release('c1') // not the first: its slot refills at once, while c0 still runs
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['c0', 'c1', 'c2', 'c3'])
    expect(p.isStarted('c4')).toBe(false)
    for (const id of [...ids].reverse()) {
      p.release(id)
      await flush()
    }
    await done
    expect(p.stats.max).toBe(3)
    expect(rec.results().map((r) => r.id)).toEqual(ids)
  })

  it('R4: cap 1 is fully serial', async () => {
    const rec = recordingEnv({ tools: [], cap: 1 })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const done = runToolCalls(['a', 'b', 'c'].map((id) => call(id, 'p')), rec.env)
    for (const id of ['a', 'b', 'c']) {
      await flush()
      expect(p.stats.running).toBe(1)
      p.release(id)
    }
    await done
    expect(p.stats.max).toBe(1)
    expect(rec.log.filter((e) => e.kind === 'body-start' || e.kind === 'body-end').map((e) => `${e.kind}:${(e as { id: string }).id}`)).toEqual([
      'body-start:a', 'body-end:a', 'body-start:b', 'body-end:b', 'body-start:c', 'body-end:c',
    ])
  })

  it('L6: out-of-order settlement commits results and contexts in model order', async () => {
    const rec = recordingEnv({
      tools: [],
      post: (p) => ({ kind: 'accept', additionalContexts: [{ id: `ctx-${p.call.id}`, role: 'user', content: [], source: { kind: 'tool', callId: p.call.id } }] }),
    })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const done = runToolCalls(['a', 'b', 'c'].map((id) => call(id, 'p')), rec.env)
    await flush()
    p.release('c')
    p.release('b')
    await flush()
    expect(rec.results()).toEqual([]) // b and c settled, but a has not: nothing commits
    p.release('a')
    await done
    expect(rec.results().map((r) => r.id)).toEqual(['a', 'b', 'c'])
    expect(rec.log.filter((e) => e.kind === 'post').map((e) => (e as { id: string }).id)).toEqual(['a', 'b', 'c'])
    expect(rec.contexts.map((m) => m.id)).toEqual(['ctx-a', 'ctx-b', 'ctx-c'])
    // each context right after its own result
    expect(at(rec.log, 'context', 'ctx-a')).toBeLessThan(at(rec.log, 'result', 'b'))
  })

  it('R4: pre-execute runs serially in model order, bodies concurrently', async () => {
    const gates = new Map<string, ReturnType<typeof deferred<void>>>()
    const rec = recordingEnv({
      tools: [],
      pre: async (pp) => {
        const d = deferred<void>()
        gates.set(pp.call.id, d)
        await d.promise
        return { kind: 'allow' }
      },
    })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const done = runToolCalls(['a', 'b', 'c'].map((id) => call(id, 'p')), rec.env)
    await flush()
    expect([...gates.keys()]).toEqual(['a']) // b's pre waits for a's
    gates.get('a')!.resolve()
    await flush()
    expect([...gates.keys()]).toEqual(['a', 'b'])
    expect(bodyStarts(rec.log)).toEqual(['a']) // a's body runs while b's pre is pending
    gates.get('b')!.resolve()
    await flush()
    gates.get('c')!.resolve()
    await flush()
    expect(p.stats.running).toBe(3)
    for (const id of ['a', 'b', 'c']) p.release(id)
    await done
  })
})

describe('every outcome is a result, in its place (L5, L6)', () => {
  const echo = defineTool({
    name: 'echo',
    description: 'echo',
    parameters: z.object({ text: z.string() }),
    isConcurrencySafe: () => true,
    execute: ({ text }) => text,
  })
  const boom = defineTool({
    name: 'boom',
    description: 'throws',
    parameters: z.object({}),
    isConcurrencySafe: () => true,
    execute: () => {
      throw new Error('kaput')
    },
  })
  const typed = defineTool({
    name: 'typed',
    description: 'declares its output',
    parameters: z.object({ bad: z.boolean() }),
    output: z.object({ n: z.number() }),
    execute: ({ bad }) => (bad ? ({ n: 'x' } as unknown as { n: number }) : { n: 1 }),
  })
  const tools = [echo, boom, typed] as unknown as AnyTool[]

  it('L5 L6: denials and errors keep their places', async () => {
    const rec = recordingEnv({
      tools,
      pre: (p, next) => (p.call.id === 'd' ? { kind: 'deny', reason: 'not today' } : next()),
    })
    const res = await runToolCalls(
      [
        call('ok1', 'echo', { text: 'one' }),
        call('d', 'echo', { text: 'denied' }),
        call('u', 'nope'),
        call('i', 'echo', { text: 3 }),
        call('j', 'echo', '{not json'),
        call('t', 'boom'),
        call('o', 'typed', { bad: true }),
        call('ok2', 'echo', { text: 'two' }),
      ],
      rec.env,
    )
    expect(res).toEqual({ concluded: false, aborted: false })
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([
      ['ok1', undefined],
      ['d', 'DENIED'],
      ['u', 'UNKNOWN_TOOL'],
      ['i', 'INVALID_ARGS'],
      ['j', 'INVALID_ARGS'],
      ['t', 'TOOL_ERROR'],
      ['o', 'INVALID_TOOL_OUTPUT'],
      ['ok2', undefined],
    ])
    const texts = Object.fromEntries(rec.results().map((r) => [r.id, r.text]))
    expect(texts.ok1).toBe('one')
    expect(texts.d).toContain('not today')
    expect(texts.i).toMatch(/expected string, received number/)
    expect(texts.t).toContain('kaput')
    expect(texts.o).toMatch(/n/)
    expect(rec.calls()).toEqual(['ok1', 'd', 'u', 'i', 'j', 't', 'o', 'ok2'])
  })

  it('DENIED: `ask` that nobody answers is a denial', async () => {
    const rec = recordingEnv({ tools, pre: () => ({ kind: 'ask', question: 'really?' }) })
    await runToolCalls([call('a', 'echo', { text: 'x' })], rec.env)
    expect(rec.results()).toEqual([{ id: 'a', code: 'DENIED', text: expect.stringContaining('really?') }])
  })

  it('DENIED: a denied body never runs', async () => {
    let ran = false
    const t = defineTool({ name: 't', description: '', parameters: z.object({}), execute: () => void (ran = true) })
    const rec = recordingEnv({ tools: [t as unknown as AnyTool], pre: () => ({ kind: 'deny', reason: 'no' }) })
    await runToolCalls([call('a', 't')], rec.env)
    expect(ran).toBe(false)
    expect(rec.results()[0]!.code).toBe('DENIED')
  })

  it('HOOK_ERROR: a throwing pre-execute listener makes that call an error result and is reported; the others run', async () => {
    const rec = recordingEnv({
      tools,
      pre: (p, next) => {
        if (p.call.id === 'b') throw new Error('pre broke')
        return next()
      },
    })
    await runToolCalls([call('a', 'echo', { text: 'A' }), call('b', 'echo', { text: 'B' }), call('c', 'echo', { text: 'C' })], rec.env)
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([['a', undefined], ['b', 'HOOK_ERROR'], ['c', undefined]])
    expect(rec.errors()).toEqual([{ where: 'tools/pre-execute', message: 'pre broke' }])
  })

  it('HOOK_ERROR: a malformed pre-execute decision is a hook error', async () => {
    const rec = recordingEnv({ tools, pre: () => ({ kind: 'maybe' }) as never })
    await runToolCalls([call('a', 'echo', { text: 'A' })], rec.env)
    expect(rec.results()[0]!.code).toBe('HOOK_ERROR')
    expect(rec.errors()[0]!.where).toBe('tools/pre-execute')
  })

  it('HOOK_ERROR vs TOOL_ERROR: a throwing tools/execute listener is a hook error; a body throw through it stays TOOL_ERROR', async () => {
    const rec = recordingEnv({
      tools,
      execute: async (p, next) => {
        if (p.call.id === 'h') throw new Error('wrapper broke')
        return next(p)
      },
    })
    await runToolCalls([call('h', 'echo', { text: 'x' }), call('t', 'boom')], rec.env)
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([['h', 'HOOK_ERROR'], ['t', 'TOOL_ERROR']])
    expect(rec.errors()).toEqual([{ where: 'tools/execute', message: 'wrapper broke' }])
  })

  it('a tools/execute listener may replace the output (it is validated and converted like a body output)', async () => {
    const rec = recordingEnv({ tools, execute: async () => ({ cached: true }) })
    await runToolCalls([call('a', 'echo', { text: 'x' }), call('o', 'typed', { bad: false })], rec.env)
    expect(rec.results()).toEqual([
      { id: 'a', code: undefined, text: '{"cached":true}' },
      { id: 'o', code: 'INVALID_TOOL_OUTPUT', text: expect.any(String) },
    ])
  })

  it('post-execute: a throw keeps the outcome and is reported; block replaces it by BLOCKED with the feedback', async () => {
    const rec = recordingEnv({
      tools,
      post: (p, next) => {
        if (p.call.id === 'a') throw new Error('post broke')
        if (p.call.id === 'b') return { kind: 'block', feedback: 'do not do that' }
        return next()
      },
    })
    await runToolCalls([call('a', 'echo', { text: 'A' }), call('b', 'echo', { text: 'B' })], rec.env)
    expect(rec.results()).toEqual([
      { id: 'a', code: undefined, text: 'A' },
      { id: 'b', code: 'BLOCKED', text: 'do not do that' },
    ])
    expect(rec.errors()).toEqual([{ where: 'tools/post-execute', message: 'post broke' }])
  })

  it('a context the inbox refuses is reported and the step goes on', async () => {
    const rec = recordingEnv({ tools, post: () => ({ kind: 'accept', additionalContexts: [{ id: 'x', role: 'user', content: [], source: { kind: 'user' } }] }) })
    rec.env.queueContext = () => {
      throw new TurnlogError('DUPLICATE_PENDING_ID', 'x is pending')
    }
    await runToolCalls([call('a', 'echo', { text: 'A' }), call('b', 'echo', { text: 'B' })], rec.env)
    expect(rec.results().map((r) => r.code)).toEqual([undefined, undefined])
    expect(rec.errors().map((e) => e.where)).toEqual(['tools/post-execute', 'tools/post-execute'])
  })

  it('TOOL_TIMEOUT: past timeoutMs the call settles, its signal aborts, later calls go on', async () => {
    const timers = new ManualTimers()
    let seen: AbortSignal | undefined
    const slow = defineTool({
      name: 'slow',
      description: '',
      parameters: z.object({}),
      timeoutMs: 50,
      execute: (_a, ctx) => {
        seen = ctx.signal
        return new Promise(() => {}) // ignores its signal: abandoned at the deadline
      },
    })
    const rec = recordingEnv({ tools: [slow as unknown as AnyTool, ...tools], timers })
    const done = runToolCalls([call('s', 'slow'), call('a', 'echo', { text: 'A' })], rec.env)
    await flush()
    expect([...timers.pending.values()].map((t) => t.ms)).toEqual([50])
    timers.fireAll()
    await done
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([['s', 'TOOL_TIMEOUT'], ['a', undefined]])
    expect(seen?.aborted).toBe(true)
    expect((seen?.reason as DOMException).name).toBe('TimeoutError')
  })

  it('TOOL_TIMEOUT: a body that finishes first clears its timer', async () => {
    const timers = new ManualTimers()
    const quick = defineTool({ name: 'q', description: '', parameters: z.object({}), timeoutMs: 50, execute: () => 'fast' })
    const rec = recordingEnv({ tools: [quick as unknown as AnyTool], timers })
    await runToolCalls([call('q', 'q')], rec.env)
    expect(timers.pending.size).toBe(0)
    expect(rec.results()[0]).toEqual({ id: 'q', code: undefined, text: 'fast' })
  })

  it('concludeTurn() from a committed call concludes the step', async () => {
    const fin = defineTool({ name: 'fin', description: '', parameters: z.object({}), execute: (_a, ctx) => { ctx.concludeTurn(); return 'bye' } })
    const rec = recordingEnv({ tools: [fin as unknown as AnyTool, ...tools] })
    expect(await runToolCalls([call('a', 'echo', { text: 'A' }), call('f', 'fin')], rec.env)).toEqual({ concluded: true, aborted: false })
    const rec2 = recordingEnv({ tools })
    expect(await runToolCalls([call('a', 'echo', { text: 'A' })], rec2.env)).toEqual({ concluded: false, aborted: false })
  })

  it('an empty batch does nothing', async () => {
    const rec = recordingEnv({ tools })
    expect(await runToolCalls([], rec.env)).toEqual({ concluded: false, aborted: false })
    expect(rec.log).toEqual([])
  })

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3' as unknown as number])(
    'INVALID_OPTION: maxParallelToolCalls %s is refused before anything is appended',
    async (cap) => {
      const rec = recordingEnv({ tools, cap })
      const err = await runToolCalls([call('a', 'echo', { text: 'A' })], rec.env).catch((e: unknown) => e)
      expect(TurnlogError.is(err, 'INVALID_OPTION')).toBe(true)
      expect(rec.log).toEqual([])
    },
  )
})

describe('cancel (R5, L5)', () => {
  it('ABORTED and ABORTED_BEFORE_DISPATCH: started calls drain in model order, the rest get synthetic pairs', async () => {
    const ac = new AbortController()
    const rec = recordingEnv({ tools: [], cap: 2, signal: ac.signal })
    const honours = defineTool({
      name: 'h',
      description: 'honours its signal',
      parameters: z.object({}),
      isConcurrencySafe: () => true,
      execute: (_a, ctx) =>
        new Promise((_res, rej) => {
          rec.log.push({ kind: 'body-start', id: ctx.callId })
          ctx.signal.addEventListener('abort', () => rej(ctx.signal.reason))
        }),
    })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('h', honours as unknown as AnyTool).set('p', p.tool)
    const done = runToolCalls([call('a', 'h'), call('b', 'p'), call('c', 'p'), call('d', 'h')], rec.env)
    await flush()
    expect(bodyStarts(rec.log)).toEqual(['a', 'b'])
    const cause: CancelCause = { kind: 'user' }
    ac.abort(cause)
    await flush()
    expect(rec.results()).toEqual([{ id: 'a', code: 'ABORTED', text: expect.any(String) }])
    p.release('b') // b ignores the signal and finishes: its real result stands
    const res = await done
    expect(res).toEqual({ concluded: false, aborted: true, cause })
    expect(bodyStarts(rec.log)).toEqual(['a', 'b']) // no body started after the cancel
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([
      ['a', 'ABORTED'], ['b', undefined], ['c', 'ABORTED_BEFORE_DISPATCH'], ['d', 'ABORTED_BEFORE_DISPATCH'],
    ])
    expect(rec.calls()).toEqual(['a', 'b', 'c', 'd'])
    // pre-execute never ran for the calls that never started
    expect(rec.log.filter((e) => e.kind === 'pre').map((e) => (e as { id: string }).id)).toEqual(['a', 'b'])
  })

  it('R5: a call started before the cancel whose pre stage had not begun gets ABORTED without pre or body', async () => {
    const ac = new AbortController()
    const preGate = deferred<void>()
    const rec = recordingEnv({
      tools: [],
      signal: ac.signal,
      pre: async (p, next) => {
        if (p.call.id === 'a') await preGate.promise
        return next()
      },
    })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const done = runToolCalls([call('a', 'p'), call('b', 'p')], rec.env)
    await flush()
    expect(rec.calls()).toEqual(['a', 'b'])
    ac.abort({ kind: 'parent' })
    preGate.resolve()
    const res = await done
    expect(res.aborted).toBe(true)
    expect(bodyStarts(rec.log)).toEqual([])
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([['a', 'ABORTED'], ['b', 'ABORTED']])
    expect(rec.log.filter((e) => e.kind === 'pre').map((e) => (e as { id: string }).id)).toEqual(['a'])
  })

  it('a turn cancelled before the tools ran: every call gets ABORTED_BEFORE_DISPATCH', async () => {
    const ac = new AbortController()
    ac.abort({ kind: 'hook', reason: 'stop' })
    const rec = recordingEnv({ tools: [], signal: ac.signal })
    const res = await runToolCalls([call('a', 'x'), call('b', 'y')], rec.env)
    expect(res).toEqual({ concluded: false, aborted: true, cause: { kind: 'hook', reason: 'stop' } })
    expect(rec.log.map((e) => `${e.kind}:${(e as { id: string }).id}`)).toEqual(['call:a', 'result:a', 'call:b', 'result:b'])
    expect(rec.results().map((r) => r.code)).toEqual(['ABORTED_BEFORE_DISPATCH', 'ABORTED_BEFORE_DISPATCH'])
  })

  it('a cancel while a barrier waits for the pool to drain: the barrier never starts', async () => {
    const ac = new AbortController()
    const rec = recordingEnv({ tools: [], signal: ac.signal })
    const p = gatedTool('p', rec.log, { parallel: true })
    const x = gatedTool('x', rec.log)
    rec.tools.set('p', p.tool).set('x', x.tool)
    const done = runToolCalls([call('a', 'p'), call('x', 'x')], rec.env)
    await flush()
    ac.abort({ kind: 'user' })
    p.release('a')
    await done
    expect(bodyStarts(rec.log)).toEqual(['a'])
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([['a', undefined], ['x', 'ABORTED_BEFORE_DISPATCH']])
  })
})

describe('scheduler failure (TOOL_OUTCOME_UNKNOWN, L5)', () => {
  it('TOOL_OUTCOME_UNKNOWN: an append that throws closes every started call and the rest, in model order', async () => {
    const rec = recordingEnv({ tools: [], cap: 3 })
    const p = gatedTool('p', rec.log, { parallel: true })
    const x = gatedTool('x', rec.log) // exclusive: waits for the drain
    rec.tools.set('p', p.tool).set('x', x.tool)
    let failNext = true
    const base = rec.env.appendResult
    rec.env.appendResult = (c, s, o) => {
      if (c.id === 'a' && failNext) {
        failNext = false
        throw new Error('disk full')
      }
      return base(c, s, o)
    }
    const done = runToolCalls([call('a', 'p'), call('b', 'p'), call('c', 'p'), call('d', 'x')], rec.env)
    await flush()
    p.release('b') // b settles; c still runs; d waits for the drain
    await flush()
    p.release('a') // a's commit throws: the scheduler fails
    const res = await done
    expect(res).toEqual({ concluded: false, aborted: false })
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([
      ['a', 'TOOL_OUTCOME_UNKNOWN'], // its own append threw: its outcome is suspect
      ['b', undefined], // settled, never offered: its own outcome
      ['c', 'TOOL_OUTCOME_UNKNOWN'], // still running: abandoned
      ['d', 'ABORTED_BEFORE_DISPATCH'], // never started
    ])
    expect(rec.errors()).toEqual([{ where: 'tools/scheduler', message: 'disk full' }])
    // c's late settlement changes nothing
    p.release('c')
    await flush()
    expect(rec.results()).toHaveLength(4)
    expect(bodyStarts(rec.log)).toEqual(['a', 'b', 'c'])
  })

  it('a log that refuses even the closing results: the original error is thrown', async () => {
    const rec = recordingEnv({ tools: [] })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    rec.env.appendResult = () => {
      throw new Error('log closed')
    }
    const done = runToolCalls([call('a', 'p')], rec.env)
    await flush()
    p.release('a')
    await expect(done).rejects.toThrow('log closed')
  })

  it('an appendCall that throws: the call is not started, later calls are closed with synthetic pairs', async () => {
    const rec = recordingEnv({
      tools: [],
      appendCall: (c) => {
        if (c.id === 'b' && !thrown) {
          thrown = true
          throw new Error('refused')
        }
      },
    })
    let thrown = false
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const done = runToolCalls(['a', 'b', 'c'].map((id) => call(id, 'p')), rec.env)
    await flush()
    p.release('a')
    await done
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([
      ['a', 'TOOL_OUTCOME_UNKNOWN'], ['b', 'ABORTED_BEFORE_DISPATCH'], ['c', 'ABORTED_BEFORE_DISPATCH'],
    ])
  })
})
