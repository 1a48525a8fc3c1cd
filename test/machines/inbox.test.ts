/**
 * The inbox machine and its guard `spliceKeepsIdsUnique` (issue 15 part 3: four weakenings of the
 * guard survived). L11: a pending message is pending exactly once; a splice out of range is
 * refused; a message removed by a splice may be re-inserted by that same splice (a move or an edit
 * in place), but not into the other list while it is still pending there.
 */
import { describe, expect, it } from 'vitest'
import { createActor } from 'xstate'
import type { UserMessage } from '../../events/index.js'
import { inboxMachine, spliceKeepsIdsUnique, type InboxContext, type SpliceEvent } from '../../machines/index.js'

const msg = (id: string): UserMessage => ({ id, role: 'user', content: [{ type: 'text', text: id }], source: { kind: 'user' } })
const ctx = (nextTurn: string[], nextStep: string[]): InboxContext => ({ nextTurn: nextTurn.map(msg), nextStep: nextStep.map(msg) })
const splice = (target: SpliceEvent['target'], start: number, deleteCount: number, ids: string[]): SpliceEvent => ({ type: 'SPLICE', target, start, deleteCount, inserted: ids.map(msg) })

describe('spliceKeepsIdsUnique (L11)', () => {
  const c = ctx(['a', 'b'], ['s'])

  it('accepts fresh ids anywhere in range, and an empty splice', () => {
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 2, 0, ['x', 'y']))).toBe(true)
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 0, 2, []))).toBe(true)
    expect(spliceKeepsIdsUnique(c, splice('next-step', 1, 0, ['x']))).toBe(true)
    expect(spliceKeepsIdsUnique(ctx([], []), splice('next-step', 0, 0, []))).toBe(true)
  })

  it('refuses the same id twice in one splice', () => {
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 0, 0, ['x', 'x']))).toBe(false)
    expect(spliceKeepsIdsUnique(c, splice('next-step', 1, 0, ['x', 'y', 'x']))).toBe(false)
  })

  it('refuses an id already pending in either list', () => {
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 0, 0, ['a']))).toBe(false)
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 0, 0, ['s']))).toBe(false)
    expect(spliceKeepsIdsUnique(c, splice('next-step', 0, 0, ['b']))).toBe(false)
    expect(spliceKeepsIdsUnique(c, splice('next-step', 0, 0, ['s']))).toBe(false)
    // Removing a different message does not make room for a pending id.
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 0, 1, ['b']))).toBe(false)
  })

  it('accepts re-inserting an id the same splice removes from the same list', () => {
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 0, 1, ['a']))).toBe(true)
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 0, 2, ['b', 'a']))).toBe(true)
    expect(spliceKeepsIdsUnique(c, splice('next-step', 0, 1, ['s']))).toBe(true)
  })

  it('a removal makes room only in the list it removes from', () => {
    // 's' is pending in next-step; a next-turn splice removing 'a' cannot insert 's'.
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 0, 1, ['s']))).toBe(false)
    // 'a' is pending in next-turn; a next-step splice removing 's' cannot insert 'a'.
    expect(spliceKeepsIdsUnique(c, splice('next-step', 0, 1, ['a']))).toBe(false)
    // Same id pending in both lists cannot happen, but the check is per list: same id in next-turn
    // and next-step, removed from next-turn only, stays refused.
    expect(spliceKeepsIdsUnique(ctx(['d'], ['d']), splice('next-turn', 0, 1, ['d']))).toBe(false)
    expect(spliceKeepsIdsUnique(ctx(['d'], ['d']), splice('next-step', 0, 1, ['d']))).toBe(false)
  })

  it('refuses coordinates out of range', () => {
    expect(spliceKeepsIdsUnique(c, splice('next-turn', -1, 0, []))).toBe(false)
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 0, -1, []))).toBe(false)
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 3, 0, []))).toBe(false)
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 1, 2, []))).toBe(false)
    expect(spliceKeepsIdsUnique(c, splice('next-step', 1, 1, []))).toBe(false)
    expect(spliceKeepsIdsUnique(c, splice('next-step', 2, 0, ['x']))).toBe(false)
    // The edges of the range are in it.
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 2, 0, []))).toBe(true)
    expect(spliceKeepsIdsUnique(c, splice('next-turn', 1, 1, []))).toBe(true)
    expect(spliceKeepsIdsUnique(c, splice('next-step', 0, 1, []))).toBe(true)
  })
})

describe('inbox machine', () => {
  const ids = (a: { getSnapshot(): { context: InboxContext } }) => {
    const { nextTurn, nextStep } = a.getSnapshot().context
    return { nextTurn: nextTurn.map((m) => m.id), nextStep: nextStep.map((m) => m.id) }
  }

  it('starts from its input (or empty) and applies splices to the target list only', () => {
    expect(ids(createActor(inboxMachine, { input: {} }).start())).toEqual({ nextTurn: [], nextStep: [] })
    const a = createActor(inboxMachine, { input: { nextTurn: [msg('a'), msg('b')], nextStep: [msg('s')] } }).start()
    a.send(splice('next-turn', 1, 1, ['c', 'd']))
    expect(ids(a)).toEqual({ nextTurn: ['a', 'c', 'd'], nextStep: ['s'] })
    a.send(splice('next-step', 0, 0, ['t']))
    expect(ids(a)).toEqual({ nextTurn: ['a', 'c', 'd'], nextStep: ['t', 's'] })
  })

  it('ignores a splice its guard refuses', () => {
    const a = createActor(inboxMachine, { input: { nextTurn: [msg('a')] } }).start()
    a.send(splice('next-step', 0, 0, ['a']))
    a.send(splice('next-turn', 5, 0, ['z']))
    expect(ids(a)).toEqual({ nextTurn: ['a'], nextStep: [] })
  })

  it('a claim takes all of next-step, and the first prompt only at a turn boundary', () => {
    const a = createActor(inboxMachine, { input: { nextTurn: [msg('a'), msg('b')], nextStep: [msg('s'), msg('t')] } }).start()
    a.send({ type: 'CLAIM', takePrompt: false })
    expect(ids(a)).toEqual({ nextTurn: ['a', 'b'], nextStep: [] })
    a.send({ type: 'CLAIM', takePrompt: true })
    expect(ids(a)).toEqual({ nextTurn: ['b'], nextStep: [] })
  })

  it('latches and unlatches; the lists are kept across', () => {
    const a = createActor(inboxMachine, { input: { nextTurn: [msg('a')] } }).start()
    expect(a.getSnapshot().value).toBe('unlatched')
    a.send({ type: 'UNLATCH' })
    expect(a.getSnapshot().value).toBe('unlatched')
    a.send({ type: 'LATCH' })
    a.send({ type: 'LATCH' })
    expect(a.getSnapshot().value).toBe('latched')
    a.send({ type: 'UNLATCH' })
    expect(a.getSnapshot().value).toBe('unlatched')
    expect(ids(a)).toEqual({ nextTurn: ['a'], nextStep: [] })
  })
})

describe('machine ids', () => {
  it('the machines keep the ids that inspection events and state node ids carry', async () => {
    const { stepMachine, turnMachine } = await import('../../machines/index.js')
    expect([inboxMachine.id, turnMachine.id, stepMachine.id]).toEqual(['inbox', 'turn', 'step'])
    const seen: string[] = []
    const a = createActor(inboxMachine, { input: {}, inspect: (e) => { if (e.type === '@xstate.snapshot') seen.push(...(e.snapshot as unknown as { _nodes: Array<{ id: string }> })._nodes.map((n) => n.id)) } }).start()
    a.send({ type: 'LATCH' })
    expect(seen).toContain('inbox.latched')
  })
})
