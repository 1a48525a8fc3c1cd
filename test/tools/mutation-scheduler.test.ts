/**
 * The scheduler's edges, exactly (issue 15 part 3): the texts of synthetic and closing results
 * (L5: the model reads them), what a scheduler failure does to running and settled calls, that no
 * call is closed twice (L5: exactly one result), and that a run leaves no listener on the turn's
 * signal.
 */
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/index.js'
import { runToolCalls } from '../../tools/scheduler.js'
import { call, deferred, flush, gatedTool, recordingEnv } from './helpers.js'

describe('maxParallelToolCalls refused with its field', () => {
  it('INVALID_OPTION names the field and the value', async () => {
    const rec = recordingEnv({ tools: [], cap: 0 })
    const err = await runToolCalls([call('a', 'p')], rec.env).catch((e: unknown) => e)
    expect(TurnlogError.is(err, 'INVALID_OPTION')).toBe(true)
    expect((err as TurnlogError).field).toBe('maxParallelToolCalls')
    expect((err as TurnlogError).message).toBe('INVALID_OPTION: maxParallelToolCalls must be a positive integer, got 0 (field maxParallelToolCalls)')
  })
})

describe("the run's listener on the turn's signal", () => {
  it('R5: the one abort listener a run adds is removed when it returns (a turn signal serves many steps)', async () => {
    const ac = new AbortController()
    const live = new Set<unknown>()
    const add = ac.signal.addEventListener.bind(ac.signal)
    const remove = ac.signal.removeEventListener.bind(ac.signal)
    ac.signal.addEventListener = ((type: string, fn: (e: Event) => void) => {
      live.add(`${type}`)
      live.add(fn)
      add(type, fn)
    }) as typeof ac.signal.addEventListener
    ac.signal.removeEventListener = ((type: string, fn: (e: Event) => void) => {
      if (type === 'abort') live.delete('abort')
      live.delete(fn)
      remove(type, fn)
    }) as typeof ac.signal.removeEventListener
    const rec = recordingEnv({ tools: [], signal: ac.signal })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const done = runToolCalls([call('a', 'p'), call('b', 'p')], rec.env)
    await flush()
    expect(live.size).toBe(2) // 'abort' and its listener
    p.release('a')
    p.release('b')
    await done
    expect(live.size).toBe(0)
  })
})

describe('ABORTED_BEFORE_DISPATCH and closing texts (L5)', () => {
  it('L5: a call never started after a cancel gets a synthetic pair whose text names it and the reason', async () => {
    const ac = new AbortController()
    ac.abort({ kind: 'user' })
    const rec = recordingEnv({ tools: [], signal: ac.signal })
    await runToolCalls([call('a', 'x')], rec.env)
    expect(rec.results()).toEqual([{ id: 'a', code: 'ABORTED_BEFORE_DISPATCH', text: "Tool 'x' was not started: the turn was cancelled before it started." }])
  })

  it('L5: a synthetic pair is written once: a refused tool/call among them fails the scheduler, which closes each call exactly once', async () => {
    const ac = new AbortController()
    ac.abort({ kind: 'user' })
    let refused = false
    const rec = recordingEnv({
      tools: [],
      signal: ac.signal,
      appendCall: (c) => {
        if (c.id === 'b' && !refused) {
          refused = true
          throw new Error('refused')
        }
      },
    })
    await runToolCalls([call('a', 'x'), call('b', 'x'), call('c', 'x')], rec.env)
    expect(rec.results()).toEqual([
      { id: 'a', code: 'ABORTED_BEFORE_DISPATCH', text: "Tool 'x' was not started: the turn was cancelled before it started." },
      { id: 'b', code: 'ABORTED_BEFORE_DISPATCH', text: "Tool 'x' was not started: the tool scheduler failed (refused)." },
      { id: 'c', code: 'ABORTED_BEFORE_DISPATCH', text: "Tool 'x' was not started: the tool scheduler failed (refused)." },
    ])
    expect(rec.calls()).toEqual(['a', 'b', 'c'])
  })
})

describe('scheduler failure (TOOL_OUTCOME_UNKNOWN, L5)', () => {
  it('L5: a committed call is not closed again; a running one is abandoned (its signal aborts); a settled one keeps its outcome and signal', async () => {
    const rec = recordingEnv({ tools: [], cap: 4 })
    const p = gatedTool('p', rec.log, { parallel: true })
    const signals = new Map<string, AbortSignal>()
    rec.env.execute = (pl, next) => {
      signals.set(pl.call.id, pl.signal)
      return next(pl)
    }
    rec.tools.set('p', p.tool)
    const base = rec.env.appendResult
    let failed = false
    rec.env.appendResult = (c, s, o) => {
      if (c.id === 'a' && !failed) {
        failed = true
        throw new Error('disk full')
      }
      return base(c, s, o)
    }
    const done = runToolCalls([call('z', 'p'), call('a', 'p'), call('b', 'p'), call('c', 'p')], rec.env)
    await flush()
    p.release('z') // commits
    await flush()
    p.release('b') // settles, waits for a
    await flush()
    p.release('a') // a's commit throws
    await done
    expect(rec.results()).toEqual([
      { id: 'z', code: undefined, text: 'ok z' },
      { id: 'a', code: 'TOOL_OUTCOME_UNKNOWN', text: "The outcome of tool 'p' is unknown: the tool scheduler failed (disk full)." },
      { id: 'b', code: undefined, text: 'ok b' },
      { id: 'c', code: 'TOOL_OUTCOME_UNKNOWN', text: "The outcome of tool 'p' is unknown: the tool scheduler failed (disk full)." },
    ])
    expect(signals.get('c')!.aborted).toBe(true)
    expect((signals.get('c')!.reason as Error).message).toBe('the tool scheduler failed')
    expect(signals.get('b')!.aborted).toBe(false)
    expect(signals.get('z')!.aborted).toBe(false)
  })

  it('L5: after an appendCall failure, a running call that settles late writes nothing more (no post-execute, no second result)', async () => {
    let refused = false
    const rec = recordingEnv({
      tools: [],
      appendCall: (c) => {
        if (c.id === 'b' && !refused) {
          refused = true
          throw new Error('refused')
        }
      },
    })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    await runToolCalls([call('a', 'p'), call('b', 'p')], rec.env)
    p.release('a')
    await flush()
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([['a', 'TOOL_OUTCOME_UNKNOWN'], ['b', 'ABORTED_BEFORE_DISPATCH']])
    expect(rec.log.filter((e) => e.kind === 'post')).toEqual([])
  })

  it('L5: when even the synthetic tool/call of a never-started call is refused, the original error is thrown', async () => {
    const rec = recordingEnv({
      tools: [],
      appendCall: (c) => {
        if (c.id === 'b') throw new Error('refused')
      },
    })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    await expect(runToolCalls([call('a', 'p'), call('b', 'p'), call('c', 'p')], rec.env)).rejects.toThrow('refused')
    // everything the log accepted is closed: a (abandoned) and c's pair
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([['a', 'TOOL_OUTCOME_UNKNOWN'], ['c', 'ABORTED_BEFORE_DISPATCH']])
  })

  it('L5: a bug in a call (a throwing env guard) fails the scheduler, which still closes the call', async () => {
    const rec = recordingEnv({
      tools: [],
      pre: () => {
        throw new Error('pre broke')
      },
    })
    rec.env.isAbandoned = () => {
      throw new Error('guard broke')
    }
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const done = runToolCalls([call('a', 'p')], rec.env)
    await flush()
    expect(rec.results()).toEqual([{ id: 'a', code: 'TOOL_OUTCOME_UNKNOWN', text: "The outcome of tool 'p' is unknown: the tool scheduler failed (guard broke)." }])
    expect(rec.errors()).toEqual([{ where: 'tools/scheduler', message: 'guard broke' }])
    expect(await done).toEqual({ concluded: false, aborted: false })
  })

  it('L5: the first failure is the one reported and written, whatever fails after it', async () => {
    const rec = recordingEnv({
      tools: [],
      pre: () => {
        throw new Error('pre broke')
      },
    })
    let n = 0
    rec.env.isAbandoned = () => {
      throw new Error(`guard broke ${++n}`)
    }
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    await runToolCalls([call('a', 'p'), call('b', 'p'), call('c', 'p')], rec.env)
    expect(rec.errors()).toEqual([{ where: 'tools/scheduler', message: 'guard broke 1' }])
    expect(rec.results().map((r) => r.text)).toEqual([1, 2, 3].map(() => "The outcome of tool 'p' is unknown: the tool scheduler failed (guard broke 1)."))
  })
})

describe('a scheduler failure while a commit waits for tools/post-execute (L5)', () => {
  it('L5: the call closed by the failure is not committed a second time when its post-execute settles', async () => {
    let refused = false
    const postGate = deferred<void>()
    const rec = recordingEnv({
      tools: [],
      cap: 1,
      appendCall: (c) => {
        if (c.id === 'b' && !refused) {
          refused = true
          throw new Error('refused')
        }
      },
      post: async (_p, next) => {
        await postGate.promise
        return next()
      },
    })
    const p = gatedTool('p', rec.log, { parallel: true })
    rec.tools.set('p', p.tool)
    const done = runToolCalls([call('a', 'p'), call('b', 'p')], rec.env)
    await flush()
    p.release('a') // a settles: its slot frees (b starts: its tool/call is refused) and its commit waits for post-execute
    await done
    postGate.resolve()
    await flush()
    expect(rec.results().map((r) => [r.id, r.code])).toEqual([['a', undefined], ['b', 'ABORTED_BEFORE_DISPATCH']])
  })
})
