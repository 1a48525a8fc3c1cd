/**
 * Graph coverage of the tool-call machine (issue 15 part 2). The scheduler does not run the machine
 * (it runs `callTransition`, the same decisions as a plain function), so real scheduler runs cannot
 * be inspected for it. Instead @xstate/graph enumerates the shortest path to every reachable
 * snapshot; each path, extended by every event once (so an edge into an already reached snapshot
 * is taken too), is replayed through an inspected actor and through `callTransition`, which
 * must agree state for state and error for error, and together the paths must take every
 * transition `toDirectedGraph` lists (T1: every started call ends in exactly one final state).
 */
import { getShortestPaths, toDirectedGraph, type DirectedGraphNode } from '@xstate/graph'
import { createActor, type InspectionEvent } from 'xstate'
import { describe, expect, it } from 'vitest'
import { callMachine, callTransition, initialCallSnapshot, type CallEvent } from '../../tools/call-machine.js'

const err = (code: string) => ({ code, message: code.toLowerCase() })
const events: CallEvent[] = [
  { type: 'CLASSIFY', mode: 'parallel' },
  { type: 'CLASSIFY', mode: 'exclusive' },
  { type: 'DEFER' },
  { type: 'START' },
  { type: 'PRE_DONE', verdict: { kind: 'allow' } },
  { type: 'PRE_DONE', verdict: { kind: 'allow' }, problem: err('INVALID_ARGS') },
  { type: 'PRE_DONE', verdict: { kind: 'deny', reason: 'no' } },
  { type: 'PRE_DONE', verdict: { kind: 'ask', question: 'may I?' } },
  { type: 'PRE_DONE', verdict: { kind: 'hook-error', message: 'boom' } },
  { type: 'PRE_DONE', verdict: { kind: 'cancelled' } },
  { type: 'SETTLE' },
  { type: 'SETTLE', error: err('TOOL_ERROR') },
  { type: 'COMMIT' },
  ...['DENIED', 'ABORTED', 'ABORTED_BEFORE_DISPATCH', 'TOOL_ERROR', 'BLOCKED'].map((c): CallEvent => ({ type: 'COMMIT', error: err(c) })),
  { type: 'NOT_DISPATCHED' },
  { type: 'LOST' },
  // approvals (docs/spec/lifecycle.md §9): a call denied before it started, and an `ask` denied while it waited
  ...['DENIED', 'ABORTED_BEFORE_DISPATCH', 'APPROVAL_EXPIRED'].map((c): CallEvent => ({ type: 'REFUSED', error: err(c) })),
  { type: 'PRE_DONE', verdict: { kind: 'refused', error: err('APPROVAL_EXPIRED') } },
]

function edgeKeys(): Map<unknown, string> {
  const out = new Map<unknown, string>()
  const walk = (n: DirectedGraphNode) => {
    for (const e of n.edges) {
      const t = e.transition as { eventType: string; guard?: unknown }
      const guard = typeof t.guard === 'string' ? `[${t.guard}]` : ''
      out.set(e.transition, `${e.source.id} --${t.eventType}${guard}--> ${e.target.id}`)
    }
    n.children.forEach(walk)
  }
  walk(toDirectedGraph(callMachine))
  return out
}

describe('tool-call machine coverage', () => {
  it('every state and transition is taken by a generated path, and callTransition agrees on each path', () => {
    const paths = getShortestPaths(callMachine, { input: { callId: 'c1', name: 'tool' }, events })
    const taken = new Set<unknown>()
    const visited = new Set<string>()
    const inspect = (ev: InspectionEvent) => {
      if (ev.type !== '@xstate.microstep') return
      for (const t of ev._transitions) taken.add(t)
    }
    const runs = paths.flatMap((p) => {
      const prefix = p.steps.map((s) => s.event).filter((e) => !e.type.startsWith('xstate.'))
      return events.map((e) => [...prefix, e])
    })
    for (const run of runs) {
      const actor = createActor(callMachine, { input: { callId: 'c1', name: 'tool' }, inspect }).start()
      let plain = initialCallSnapshot()
      visited.add(String(actor.getSnapshot().value))
      for (const event of run) {
        actor.send(event)
        plain = callTransition(plain, 'tool', event)
        const s = actor.getSnapshot()
        visited.add(String(s.value))
        expect({ state: plain.state, mode: plain.mode, error: plain.error }).toEqual({ state: s.value, mode: s.context.mode, error: s.context.error })
      }
    }
    const edges = edgeKeys()
    const states = Object.keys(callMachine.root.states)
    expect(states.filter((s) => !visited.has(s))).toEqual([])
    expect([...edges].filter(([t]) => !taken.has(t)).map(([, k]) => k)).toEqual([])
    // The counts reported in the closing note.
    // 6 more transitions and 7 more paths since approvals (REFUSED from queued and classifying, docs/spec/lifecycle.md §9)
    expect({ states: states.length, transitions: edges.size, paths: paths.length }).toEqual({ states: 10, transitions: 22, paths: 47 })
  })
})
