/**
 * The inbox (docs/spec/lifecycle.md §1–2) as an XState v5 machine: the two pending lists as context, splices
 * and claims as events, the wake latch as a state. Guards refuse a splice that would make an id
 * pending twice. The driver asks `snapshot.can(event)` first, appends the `agent/inbox/spliced`
 * event, and only then sends the event: the log is written before memory changes.
 */
import { assign, setup } from 'xstate'
import type { InboxTarget, UserMessage } from '../events/index.js'
import { spliceAll } from '../events/splice.js'

export interface InboxContext {
  nextTurn: readonly UserMessage[]
  nextStep: readonly UserMessage[]
}

/** A splice with normalised coordinates (`0 ≤ start ≤ length`, `deleteCount ≤ length - start`). */
export interface SpliceEvent {
  type: 'SPLICE'
  target: InboxTarget
  start: number
  deleteCount: number
  inserted: readonly UserMessage[]
}

export type InboxEvent =
  | SpliceEvent
  /** Claim: all of next-step and, at a turn boundary, the first of next-turn. */
  | { type: 'CLAIM'; takePrompt: boolean }
  /** A wake that cannot act now (aborting, maintenance) is remembered. */
  | { type: 'LATCH' }
  /** The latch was replayed, or dropped by a cancel. */
  | { type: 'UNLATCH' }

export interface InboxInput {
  nextTurn?: readonly UserMessage[]
  nextStep?: readonly UserMessage[]
}

function listOf(c: InboxContext, t: InboxTarget): readonly UserMessage[] {
  return t === 'next-turn' ? c.nextTurn : c.nextStep
}

/** True when the splice leaves every pending id pending at most once. */
export function spliceKeepsIdsUnique(c: InboxContext, e: SpliceEvent): boolean {
  const list = listOf(c, e.target)
  if (e.start < 0 || e.deleteCount < 0 || e.start + e.deleteCount > list.length) return false
  const removed = new Set(list.slice(e.start, e.start + e.deleteCount).map((m) => m.id))
  const seen = new Set<string>()
  for (const m of e.inserted) {
    if (seen.has(m.id)) return false
    seen.add(m.id)
  }
  for (const m of c.nextTurn) if (seen.has(m.id) && !(e.target === 'next-turn' && removed.has(m.id))) return false
  for (const m of c.nextStep) if (seen.has(m.id) && !(e.target === 'next-step' && removed.has(m.id))) return false
  return true
}

export const inboxMachine = setup({
  types: {} as { context: InboxContext; events: InboxEvent; input: InboxInput },
  guards: {
    idsStayUnique: ({ context, event }) => event.type === 'SPLICE' && spliceKeepsIdsUnique(context, event),
  },
  actions: {
    applySplice: assign(({ context, event }) => {
      if (event.type !== 'SPLICE') return {}
      const list = [...listOf(context, event.target)]
      spliceAll(list, event.start, event.deleteCount, event.inserted)
      return event.target === 'next-turn' ? { nextTurn: list } : { nextStep: list }
    }),
    applyClaim: assign(({ context, event }) => ({
      nextStep: [],
      nextTurn: event.type === 'CLAIM' && event.takePrompt ? context.nextTurn.slice(1) : context.nextTurn,
    })),
  },
}).createMachine({
  id: 'inbox',
  context: ({ input }) => ({ nextTurn: input.nextTurn ?? [], nextStep: input.nextStep ?? [] }),
  initial: 'unlatched',
  on: {
    SPLICE: { guard: 'idsStayUnique', actions: 'applySplice' },
    CLAIM: { actions: 'applyClaim' },
  },
  states: {
    unlatched: { on: { LATCH: { target: 'latched' } } },
    latched: { on: { UNLATCH: { target: 'unlatched' } } },
  },
})

export type InboxMachine = typeof inboxMachine
