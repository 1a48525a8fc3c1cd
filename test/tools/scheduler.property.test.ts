/**
 * The scheduler under fast-check's scheduler: every hook, body completion, timeout and the cancel
 * are scheduled tasks, released in an order fast-check chooses. Checks R4, R5, L5 and L6 on every
 * run.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { CancelCause, EventOf, ToolCallBlock, UserMessage } from '../../events/index.js'
import { classify, type ExecutionMode } from '../../tools/classify.js'
import { defineTool } from '../../tools/define.js'
import { runToolCalls } from '../../tools/scheduler.js'
import type { AnyTool, ToolEnv, ToolOutcome } from '../../tools/types.js'

type Kind = 'parallel' | 'exclusive' | 'flip' | 'unknown' | 'invalid'
type BodyKind = 'ok' | 'throw' | 'timeout' | 'stubborn'
interface CallSpec {
  kind: Kind
  body: BodyKind
  pre: 'allow' | 'deny' | 'throw'
  post: 'accept' | 'block' | 'throw'
  /** For `flip`: parallel while fewer than this many bodies have ended. */
  flipAt: number
}

const callSpec: fc.Arbitrary<CallSpec> = fc.record({
  kind: fc.constantFrom<Kind>('parallel', 'parallel', 'parallel', 'parallel', 'parallel', 'exclusive', 'flip', 'unknown', 'invalid'),
  body: fc.constantFrom<BodyKind>('ok', 'ok', 'throw', 'timeout', 'stubborn'),
  pre: fc.constantFrom<CallSpec['pre']>('allow', 'allow', 'allow', 'allow', 'allow', 'allow', 'deny', 'throw'),
  post: fc.constantFrom<CallSpec['post']>('accept', 'accept', 'block', 'throw'),
  flipAt: fc.nat(4),
})

type Trace =
  | { t: 'call'; i: number; seq: number; mode: ExecutionMode; afterCancel: boolean }
  | { t: 'result'; i: number; callSeq: number; code: string | undefined }
  | { t: 'pre'; i: number; afterCancel: boolean }
  | { t: 'post'; i: number }
  | { t: 'body-start'; i: number; afterCancel: boolean }
  | { t: 'body-end'; i: number }
  | { t: 'context'; i: number }

async function runCase(s: fc.Scheduler, specs: CallSpec[], cap: number, cancel: boolean) {
  const trace: Trace[] = []
  const problems: string[] = []
  const ac = new AbortController()
  let cancelled = false
  let bodiesEnded = 0
  const running = new Set<number>()
  let maxRunning = 0
  let preRunning = 0
  const modeAt = new Map<number, ExecutionMode>()
  const indexOf = (id: string) => Number(id.slice(1))

  const tools = new Map<string, AnyTool>()
  specs.forEach((spec, i) => {
    if (spec.kind === 'unknown') return
    const tool = defineTool({
      name: `t${i}`,
      description: '',
      parameters: z.object({ n: z.number().optional() }),
      timeoutMs: spec.body === 'timeout' ? 5 : undefined,
      isConcurrencySafe:
        spec.kind === 'exclusive' ? undefined : spec.kind === 'flip' ? () => bodiesEnded < spec.flipAt : () => true,
      execute: (_args, ctx) =>
        new Promise((resolve, reject) => {
          const i = indexOf(ctx.callId)
          trace.push({ t: 'body-start', i, afterCancel: cancelled })
          for (const j of running) {
            if (modeAt.get(j) === 'exclusive' || modeAt.get(i) === 'exclusive') problems.push(`R4: body ${i} overlaps body ${j} (a barrier)`)
          }
          running.add(i)
          maxRunning = Math.max(maxRunning, running.size)
          let ended = false
          const end = () => {
            if (ended) return
            ended = true
            running.delete(i)
            bodiesEnded++
            trace.push({ t: 'body-end', i })
          }
          if (spec.body !== 'stubborn') {
            ctx.signal.addEventListener('abort', () => {
              end()
              reject(ctx.signal.reason)
            })
          }
          void s.schedule(Promise.resolve(), `body ${i}`).then(() => {
            if (ended) return
            end()
            if (spec.body === 'throw') reject(new Error('body threw'))
            else resolve(`out ${i}`)
          })
        }),
    })
    tools.set(`t${i}`, tool as unknown as AnyTool)
  })

  const calls: ToolCallBlock[] = specs.map((spec, i) => ({
    type: 'tool-call',
    id: `c${i}`,
    name: spec.kind === 'unknown' ? 'missing' : `t${i}`,
    arguments: spec.kind === 'invalid' ? '{"n":"not a number"}' : i % 2 ? '' : '{"n":1}',
  }))

  let seq = 0
  const contexts: UserMessage[] = []
  const env: ToolEnv = {
    turn: 1,
    step: 1,
    tools,
    maxParallelToolCalls: cap,
    signal: ac.signal,
    appendCall(call) {
      const i = indexOf(call.id)
      const mode = classify(call, tools)
      modeAt.set(i, mode)
      trace.push({ t: 'call', i, seq, mode, afterCancel: cancelled })
      return { seq: seq++ } as EventOf<'tool/call'>
    },
    appendResult(call, callSeq, outcome: ToolOutcome) {
      trace.push({ t: 'result', i: indexOf(call.id), callSeq, code: outcome.error?.code })
      return { seq: seq++ } as unknown as EventOf<'tool/result'>
    },
    queueContext(m) {
      contexts.push(m)
      trace.push({ t: 'context', i: indexOf(m.id.slice(4)) })
    },
    async preExecute(p, innermost) {
      const i = indexOf(p.call.id)
      trace.push({ t: 'pre', i, afterCancel: cancelled })
      preRunning++
      if (preRunning > 1) problems.push('R4: two pre-execute hooks at once')
      try {
        await s.schedule(Promise.resolve(), `pre ${i}`)
      } finally {
        preRunning--
      }
      const spec = specs[i]!
      if (spec.pre === 'throw') throw new Error('pre threw')
      if (spec.pre === 'deny') return { kind: 'deny', reason: 'no' }
      return innermost()
    },
    execute: (p, innermost) => innermost(p),
    async postExecute(p, innermost) {
      const i = indexOf(p.call.id)
      trace.push({ t: 'post', i })
      await s.schedule(Promise.resolve(), `post ${i}`)
      const spec = specs[i]!
      if (spec.post === 'throw') throw new Error('post threw')
      const additionalContexts: UserMessage[] = [{ id: `ctx-${p.call.id}`, role: 'user', content: [], source: { kind: 'tool', callId: p.call.id } }]
      if (spec.post === 'block') return { kind: 'block', feedback: 'blocked', additionalContexts }
      return { ...innermost(), additionalContexts }
    },
    reportError() {},
    setTimeout(fn) {
      const h = { cleared: false }
      void s.schedule(Promise.resolve(), 'timer').then(() => {
        if (!h.cleared) fn()
      })
      return h
    },
    clearTimeout(h) {
      ;(h as { cleared: boolean }).cleared = true
    },
  }

  const cause: CancelCause = { kind: 'user' }
  if (cancel) {
    void s.schedule(Promise.resolve(), 'cancel').then(() => {
      cancelled = true
      ac.abort(cause)
    })
  }
  const result = await s.waitFor(runToolCalls(calls, env))
  return { trace, problems, result, maxRunning, cancelled, contexts }
}

function check(specs: CallSpec[], cap: number, out: Awaited<ReturnType<typeof runCase>>): string[] {
  const { trace, problems, result, maxRunning, cancelled } = out
  const n = specs.length
  const errs = [...problems]
  // R4: bodies in flight never exceed the cap
  if (maxRunning > cap) errs.push(`R4: ${maxRunning} bodies at once, cap ${cap}`)
  // R4: pre and post hooks in model order
  const pres = trace.flatMap((e) => (e.t === 'pre' ? [e.i] : []))
  const posts = trace.flatMap((e) => (e.t === 'post' ? [e.i] : []))
  if (pres.some((v, k) => k > 0 && v <= pres[k - 1]!)) errs.push(`R4: pre-execute out of model order ${pres}`)
  if (posts.some((v, k) => k > 0 && v <= posts[k - 1]!)) errs.push(`R4: post-execute out of model order ${posts}`)
  // L5: every call has exactly one tool/call and one tool/result citing it; L6: both in model order
  const calls = trace.flatMap((e) => (e.t === 'call' ? [e] : []))
  const results = trace.flatMap((e) => (e.t === 'result' ? [e] : []))
  const want = Array.from({ length: n }, (_, i) => i)
  if (JSON.stringify(calls.map((c) => c.i)) !== JSON.stringify(want)) errs.push(`L6: tool/call order ${calls.map((c) => c.i)}`)
  if (JSON.stringify(results.map((r) => r.i)) !== JSON.stringify(want)) errs.push(`L5/L6: tool/result order ${results.map((r) => r.i)}`)
  for (const r of results) {
    const c = calls.find((x) => x.i === r.i)
    if (!c || c.seq !== r.callSeq) errs.push(`L5: result ${r.i} cites seq ${r.callSeq}`)
    if (trace.indexOf(c!) > trace.indexOf(r)) errs.push(`L5: result ${r.i} before its call`)
  }
  // R4 barriers: an exclusive call starts after every earlier call committed, and nothing after it
  // starts before it commits
  const resultPos = new Map(results.map((r) => [r.i, trace.indexOf(r)]))
  for (const c of calls) {
    const pos = trace.indexOf(c)
    for (let j = 0; j < c.i; j++) {
      const mustBeCommitted = c.mode === 'exclusive' || calls[j]?.mode === 'exclusive'
      if (mustBeCommitted && !((resultPos.get(j) ?? Infinity) < pos)) errs.push(`R4: call ${c.i} started before ${j} committed across a barrier`)
    }
  }
  // R5: no body starts after the cancel; the calls that never started form a suffix
  if (trace.some((e) => e.t === 'body-start' && e.afterCancel)) errs.push('R5: a body started after the cancel')
  const codeOf = new Map(results.map((r) => [r.i, r.code]))
  const abd = want.filter((i) => codeOf.get(i) === 'ABORTED_BEFORE_DISPATCH')
  if (abd.length && abd[0] !== n - abd.length) errs.push(`ABORTED_BEFORE_DISPATCH is not a suffix: ${abd}`)
  if (abd.some((i) => pres.includes(i))) errs.push('a call never dispatched ran its pre-execute hook')
  if (abd.length && !cancelled) errs.push('ABORTED_BEFORE_DISPATCH without a cancel')
  // the outcome codes
  for (let i = 0; i < n; i++) {
    const spec = specs[i]!
    const code = codeOf.get(i)
    const allowed = new Set<string | undefined>()
    if (spec.post === 'block' && code !== 'ABORTED_BEFORE_DISPATCH') allowed.add('BLOCKED')
    else if (spec.pre === 'deny') allowed.add('DENIED')
    else if (spec.pre === 'throw') allowed.add('HOOK_ERROR')
    else if (spec.kind === 'unknown') allowed.add('UNKNOWN_TOOL')
    else if (spec.kind === 'invalid') allowed.add('INVALID_ARGS')
    else if (spec.body === 'throw') allowed.add('TOOL_ERROR')
    else if (spec.body === 'timeout') allowed.add(undefined).add('TOOL_TIMEOUT')
    else allowed.add(undefined)
    if (cancelled) allowed.add('ABORTED').add('ABORTED_BEFORE_DISPATCH')
    if (!allowed.has(code)) errs.push(`call ${i} (${JSON.stringify(spec)}) ended ${code}`)
  }
  // contexts queued in model order, each after its own result
  const ctx = trace.flatMap((e) => (e.t === 'context' ? [e.i] : []))
  if (ctx.some((v, k) => k > 0 && v <= ctx[k - 1]!)) errs.push(`contexts out of model order ${ctx}`)
  // the run reports the cancel
  if (result.aborted !== cancelled) errs.push(`aborted ${result.aborted}, cancelled ${cancelled}`)
  if (cancelled && JSON.stringify(result.cause) !== JSON.stringify({ kind: 'user' })) errs.push('cause missing')
  return errs
}

describe('scheduler property (R4, R5, L5, L6)', () => {
  it('R4 R5 L5 L6: random batches, settle orders, throws, timeouts and a cancel at a random point', async () => {
    let withCancel = 0
    let parallelSeen = 0
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(callSpec, { maxLength: 10 }),
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        async (s, specs, cap, cancel) => {
          const out = await runCase(s, specs, cap, cancel)
          if (out.cancelled) withCancel++
          if (out.maxRunning > 1) parallelSeen++
          const errs = check(specs, cap, out)
          if (errs.length) throw new Error(errs.join('\n'))
        },
      ),
      { numRuns: 600 },
    )
    // the generator reaches the interesting cases
    console.log(`scheduler property: ${withCancel} runs cancelled, ${parallelSeen} with bodies in parallel`)
    expect(withCancel).toBeGreaterThan(50)
    expect(parallelSeen).toBeGreaterThan(50)
  })
})
