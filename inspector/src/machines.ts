/**
 * The three machines (docs/spec/lifecycle.md) drawn as statecharts from their own XState definitions
 * (machines/), with the state each is in at the selected seq lit. The log records events, not
 * machine states, so the lit state is read from the reducers' lifecycle and inbox (what the agent
 * would be doing between that event and the next); the inbox's wake latch is not logged and is
 * shown latched only while a maintenance holds a prompt back.
 */
import { inboxMachine } from '../../machines/inbox.js'
import { stepMachine } from '../../machines/step.js'
import { turnMachine } from '../../machines/turn.js'
import type { LogEvent } from '../../events/envelope.js'
import type { ReplayState } from '../../reducers/index.js'
import { h } from './dom.js'

interface Node { key: string; children: Node[] }

function tree(states: Record<string, { states?: Record<string, unknown> }> | undefined): Node[] {
  if (!states) return []
  return Object.entries(states).map(([key, n]) => ({ key, children: tree(n.states as Record<string, { states?: Record<string, unknown> }> | undefined) }))
}

const CHARTS = [
  { name: 'turn', nodes: tree((turnMachine.config as { states?: Record<string, { states?: Record<string, unknown> }> }).states) },
  { name: 'step', nodes: tree((stepMachine.config as { states?: Record<string, { states?: Record<string, unknown> }> }).states) },
  { name: 'inbox', nodes: tree((inboxMachine.config as { states?: Record<string, { states?: Record<string, unknown> }> }).states) },
] as const

export interface MachineStates { turn: string; step: string; inbox: string }

/** The states (dotted paths) the machines are in right after `event`, read from the reducers' state. */
export function machineStates(state: ReplayState, event: LogEvent | undefined): MachineStates {
  const lc = state.lifecycle
  const type = event?.type
  let turn: string
  if (lc.openTurn === null) turn = lc.openCompaction !== null ? 'maintaining' : 'idle'
  else if (lc.openStep !== null) turn = 'running.stepping'
  else if (type === 'turn/start') turn = 'running.opening'
  else if (lc.lastStepOutcome?.kind === 'failed') turn = 'running.recovering'
  else if (lc.lastStepOutcome && lc.lastStepOutcome.kind !== 'tools') turn = 'running.stopping'
  else turn = 'running.proposing'
  let step: string
  if (lc.openStep === null) step = lc.lastStep === 0 && lc.lastTurn === 0 ? 'idle' : 'ended'
  else if (lc.streaming) step = 'streaming'
  else if (type === 'step/start') step = 'entering'
  else if (type === 'user/message' || type === 'agent/inbox/spliced') step = 'assembling'
  else if (type === 'request/header' || type === 'llm/retry') step = 'requesting'
  else if (lc.pendingToolCalls.length > 0) step = 'runningTools'
  else if (type === 'assistant/message' || type === 'tool/result' || type === 'tool/call') step = 'committing'
  else step = 'requesting'
  const latched = lc.openCompaction !== null && lc.openTurn === null && state.inbox.nextTurn.length > 0
  return { turn, step, inbox: latched ? 'latched' : 'unlatched' }
}

/** Draws the three charts into `host` with `current` lit: each state a box, a compound state a box
 * holding its children (HTML boxes that wrap, so the step machine's ten states stay legible). */
export function drawMachines(host: HTMLElement, current: MachineStates): void {
  while (host.firstChild) host.removeChild(host.firstChild)
  for (const chart of CHARTS) {
    const lit = current[chart.name]
    const row = h('div', { class: 'chart-row' })
    for (const n of chart.nodes) {
      const on = lit === n.key || lit.startsWith(`${n.key}.`)
      if (n.children.length) {
        row.appendChild(h('div', { class: on ? 'st-compound on' : 'st-compound' },
          h('div', { class: 'st-compound-label' }, n.key),
          h('div', { class: 'chart-row' }, n.children.map((c) => stateBox(c.key, lit === `${n.key}.${c.key}`)))))
      } else {
        row.appendChild(stateBox(n.key, on))
      }
    }
    host.appendChild(h('div', { class: 'chart', data: { machine: chart.name, state: lit } },
      h('div', { class: 'chart-title' }, `${chart.name} machine`), row))
  }
}

function stateBox(label: string, on: boolean): HTMLElement {
  return h('span', { class: on ? 'st-node on' : 'st-node', data: on ? { lit: '1' } : {} }, label)
}
