/**
 * The hook dispatcher (agent/hooks.ts; docs/spec/api.md "Hook names and modes"): waterfall order and `next`,
 * serial order, emit isolation, disposers, the innermost (built-in) listeners, copy-on-write
 * dispatch. And the small guards around user input: `checkDecision` (the pre-step decision),
 * `toUserMessage` (what followup/steer/inject accept), `checkLimits`/`assertModel` (R7: bad input
 * is a coded error naming the field).
 */
import { describe, expect, it } from 'vitest'
import { HookRegistry } from '../../agent/hooks.js'
import { checkDecision, hookFailure } from '../../agent/decisions.js'
import { toUserMessage } from '../../agent/messages.js'
import { assertModel, checkLimits, DEFAULT_CANCEL_GRACE_MS } from '../../agent/options.js'
import { TurnlogError } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { counterIds } from './helpers.js'

type W = (p: string, next: (p?: string) => Promise<string>) => Promise<string> | string

describe('HookRegistry', () => {
  it('R7: waterfall: first registered outermost, next(payload) hands a new payload inward, next() the same one; the innermost default last', async () => {
    const h = new HookRegistry()
    const seen: string[] = []
    h.on('x', (async (p, next) => {
      seen.push(`a:${p}`)
      return `a(${await next(`${p}+a`)})`
    }) as W as never)
    h.on('x', (async (p, next) => {
      seen.push(`b:${p}`)
      return `b(${await next()})`
    }) as W as never)
    expect(await h.waterfall<string, string>('x', 'p', (p) => `inner:${p}`)).toBe('a(b(inner:p+a))')
    expect(seen).toEqual(['a:p', 'b:p+a'])
    expect(await h.waterfall<string, string>('none', 'q', (p) => `inner:${p}`)).toBe('inner:q')
  })

  it('R7: a listener calling next() twice gets a coded rejection naming the hook', async () => {
    const h = new HookRegistry()
    h.on('x', (async (_p, next) => {
      await next()
      return next()
    }) as W as never)
    await expect(h.waterfall<string, string>('x', 'p', () => 'r')).rejects.toThrow('x: next() called twice by one listener')
  })

  it('innermost listeners run inside every on() listener, also ones added later, in their own order', async () => {
    const h = new HookRegistry()
    const order: string[] = []
    const mk = (name: string): W => async (p, next) => {
      order.push(name)
      return next(p)
    }
    h.onInnermost('x', mk('inner1') as never)
    h.on('x', mk('outer1') as never)
    h.onInnermost('x', mk('inner2') as never)
    h.on('x', mk('outer2') as never)
    expect(h.count('x')).toBe(4)
    await h.waterfall<string, string>('x', 'p', (p) => p)
    expect(order).toEqual(['outer1', 'outer2', 'inner1', 'inner2'])
    const only = new HookRegistry()
    only.onInnermost('y', mk('i') as never)
    order.length = 0
    await only.waterfall<string, string>('y', 'p', (p) => p)
    expect(order).toEqual(['i'])
    expect(only.count('y')).toBe(1)
    expect(only.count('z')).toBe(0)
  })

  it('a disposer removes exactly its own registration, once (calling it again removes nothing more)', async () => {
    const h = new HookRegistry()
    const calls: string[] = []
    const fn = (p: string): void => void calls.push(p)
    const off1 = h.on('e', fn as never)
    h.on('e', fn as never)
    const offOther = h.on('e', ((p: string) => void calls.push(`other:${p}`)) as never)
    expect(h.count('e')).toBe(3)
    off1()
    off1()
    expect(h.count('e')).toBe(2)
    h.emit('e', '1', () => {})
    expect(calls).toEqual(['1', 'other:1'])
    offOther()
    expect(h.count('e')).toBe(1)
  })

  it('copy-on-write: a listener added during a dispatch is not called by that dispatch', async () => {
    const h = new HookRegistry()
    const calls: string[] = []
    h.on('s', (async () => {
      calls.push('first')
      h.on('s', (() => void calls.push('late')) as never)
    }) as never)
    await h.serial('s', null)
    expect(calls).toEqual(['first'])
    await h.serial('s', null)
    expect(calls).toEqual(['first', 'first', 'late'])
  })

  it('serial: each listener awaited in order; the first throw rejects and stops the rest', async () => {
    const h = new HookRegistry()
    const log: string[] = []
    h.on('s', (async () => {
      await Promise.resolve()
      log.push('1')
    }) as never)
    h.on('s', (() => {
      log.push('2')
      throw new Error('stop')
    }) as never)
    h.on('s', (() => void log.push('3')) as never)
    await expect(h.serial('s', null)).rejects.toThrow('stop')
    expect(log).toEqual(['1', '2'])
    await h.serial('nobody', null)
  })

  it('R7: emit calls every listener synchronously; a throw goes to onError with the hook name and the rest still run', () => {
    const h = new HookRegistry()
    const log: string[] = []
    const errs: Array<[unknown, string]> = []
    const boom = new Error('boom')
    h.on('e', (() => {
      throw boom
    }) as never)
    h.on('e', ((p: string) => void log.push(p)) as never)
    h.emit('e', 'x', (err, name) => errs.push([err, name]))
    expect(log).toEqual(['x'])
    expect(errs).toEqual([[boom, 'e']])
    h.emit('nobody', 'x', () => errs.push([null, 'never']))
    expect(errs).toHaveLength(1)
  })
})

describe('checkDecision (agent/pre-step)', () => {
  const msg = { id: 'a', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }

  it('R7: reject and enter are returned as fresh copies the hook can no longer change', () => {
    expect(checkDecision({ kind: 'reject', extra: 1 })).toEqual({ kind: 'reject' })
    const m = structuredClone(msg)
    const d = checkDecision({ kind: 'enter', messages: [m] })
    expect(d).toEqual({ kind: 'enter', messages: [msg] })
    m.content[0]!.text = 'changed'
    expect(d).toEqual({ kind: 'enter', messages: [msg] })
    expect(checkDecision({ kind: 'enter', messages: [] })).toEqual({ kind: 'enter', messages: [] })
  })

  it('R7: anything else is INVALID_ARGUMENT; an entered message that does not parse is INVALID_MESSAGE', () => {
    for (const bad of [null, undefined, 'enter', { kind: 'enter' }, { kind: 'enter', messages: 'x' }, { kind: 'skip' }, { kind: 'skip', messages: [] }, {}]) {
      expect(() => checkDecision(bad)).toThrowError(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    }
    expect(() => checkDecision({ kind: 'enter', messages: [{ ...msg, role: 'assistant' }] })).toThrowError(
      expect.objectContaining({ code: 'INVALID_MESSAGE', message: expect.stringContaining('pre-step entered an invalid message: ') }),
    )
  })

  it('hookFailure names the hook and the error text', () => {
    expect(hookFailure('agent/pre-step', new Error('boom'))).toEqual({ code: 'HOOK_ERROR', message: 'agent/pre-step: boom' })
  })
})

describe('toUserMessage (followup, steer, inject)', () => {
  it('a string becomes a user text message with a new id and source user', () => {
    expect(toUserMessage('hi', counterIds('q'))).toEqual({ id: 'q1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } })
  })

  it('an object keeps its id and source; missing ones are filled in', () => {
    const ids = counterIds('q')
    expect(toUserMessage({ id: 'own', content: [{ type: 'text', text: 'a' }], source: { kind: 'hook', name: 'h' } }, ids)).toEqual({
      id: 'own', role: 'user', content: [{ type: 'text', text: 'a' }], source: { kind: 'hook', name: 'h' },
    })
    expect(toUserMessage({ content: [{ type: 'text', text: 'a' }] }, ids)).toEqual({
      id: 'q1', role: 'user', content: [{ type: 'text', text: 'a' }], source: { kind: 'user' },
    })
  })

  it('R7: a non-message is INVALID_MESSAGE naming the field (and the type it got)', () => {
    for (const bad of [42, null, {}, { content: 'text' }]) {
      expect(() => toUserMessage(bad as never, counterIds())).toThrowError(expect.objectContaining({
        code: 'INVALID_MESSAGE', field: 'message', info: { got: bad === null ? 'object' : typeof bad },
      }))
    }
    let err: TurnlogError | undefined
    try {
      toUserMessage({ content: [{ type: 'nope' }] } as never, counterIds())
    } catch (e) {
      err = e as TurnlogError
    }
    expect(err?.code).toBe('INVALID_MESSAGE')
    expect(err?.field).toMatch(/^message\.content\.0/)
  })
})

describe('createAgent options (R7: a coded INVALID_OPTION naming the field)', () => {
  const model = scriptedModel([])

  it('limits: defaults 64 steps, 10 parallel calls, 5000 ms grace; the smallest allowed values pass', () => {
    const d = checkLimits({ model })
    expect([d.maxStepsPerTurn, d.maxParallelToolCalls, d.cancelGraceMs, d.tools.size]).toEqual([64, 10, DEFAULT_CANCEL_GRACE_MS, 0])
    expect(DEFAULT_CANCEL_GRACE_MS).toBe(5000)
    const s = checkLimits({ model, maxStepsPerTurn: 1, maxParallelToolCalls: 1, cancelGraceMs: 0 })
    expect([s.maxStepsPerTurn, s.maxParallelToolCalls, s.cancelGraceMs]).toEqual([1, 1, 0])
  })

  it.each([
    ['maxStepsPerTurn', 0], ['maxStepsPerTurn', 1.5], ['maxStepsPerTurn', -1],
    ['maxParallelToolCalls', 0], ['maxParallelToolCalls', 2.5], ['maxParallelToolCalls', -3],
    ['cancelGraceMs', -1], ['cancelGraceMs', Number.NaN], ['cancelGraceMs', Number.POSITIVE_INFINITY], ['cancelGraceMs', '5'],
  ])('%s = %s is refused', (field, value) => {
    expect(() => checkLimits({ model, [field]: value } as never)).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION', field }))
  })

  it('two tools with one name are refused; distinct names are kept by name', () => {
    const t = (name: string) => ({ name, description: name, parameters: {} as never, execute: () => '' }) as never
    expect(() => checkLimits({ model, tools: [t('a'), t('a')] })).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION', field: 'tools', message: expect.stringContaining('two tools are named a') }))
    expect([...checkLimits({ model, tools: [t('a'), t('b')] }).tools.keys()]).toEqual(['a', 'b'])
  })

  it('assertModel: a model whose getter throws, or whose stream is not a function, is INVALID_OPTION model', () => {
    const hostile = { get model(): never { throw new Error('getter') } }
    for (const bad of [hostile, { model: { stream: 1 } }, null, 'x']) {
      expect(() => assertModel(bad)).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION', field: 'model' }))
    }
    for (const bad of [null, 'x', 3]) {
      expect(() => assertModel(bad)).toThrowError(expect.objectContaining({ message: expect.stringContaining('createAgent needs an options object with a model') }))
    }
    // a function carrying a stream member is not a ModelAdapter object
    const fnModel = Object.assign(() => {}, { stream: model.stream })
    expect(() => assertModel({ model: fnModel })).toThrowError(expect.objectContaining({ message: expect.stringContaining('options.model must be a ModelAdapter') }))
    expect(() => assertModel({ model })).not.toThrow()
  })
})
