/**
 * Renders the parts of docs/machines.md that are derived from the machine definitions: one mermaid
 * statechart and one "which state accepts which event" table per machine. Everything is read from
 * the machine objects themselves (XState v5 `StateNode`s), so a guard, target or action added to a
 * machine shows up here, and `test/machines/doc.test.ts` fails until the document is regenerated
 * with `npm run docs:machines`. The prose around the generated regions is written by hand.
 *
 * Why not @xstate/graph's `toDirectedGraph`: it drops targetless transitions (the turn's ABORT,
 * the inbox's SPLICE/CLAIM), which a driver author needs to see most.
 */
import type { AnyStateMachine } from 'xstate'
import { inboxMachine, stepMachine, turnMachine } from '../machines/index.js'
import { callMachine } from '../tools/call-machine.js'

/** The machines the document describes, by the name used in its region markers. */
export const documentedMachines: Readonly<Record<string, AnyStateMachine>> = {
  inbox: inboxMachine,
  turn: turnMachine,
  step: stepMachine,
  toolCall: callMachine,
}

/** The slice of XState's StateNode this renderer reads (the public class is generic-heavy). */
interface Node {
  key: string
  id: string
  type: string
  path: string[]
  initial?: { target: readonly Node[] } | undefined
  states: Record<string, Node>
  entry: readonly unknown[]
  transitions: Map<string, readonly Transition[]>
  always?: readonly Transition[] | undefined
}

interface Transition {
  eventType: string
  guard?: unknown
  target?: readonly Node[] | undefined
  actions: readonly unknown[]
  reenter: boolean
}

function nameOf(x: unknown): string {
  if (typeof x === 'string') return x
  if (typeof x === 'function') {
    const g = x as { name?: string; guards?: unknown[] }
    // Higher-order guards (`and`, `or`, `not`) carry their operands.
    if (Array.isArray(g.guards)) return `${g.name ?? 'guard'}(${g.guards.map(nameOf).join(', ')})`
    return g.name || 'inline'
  }
  if (x && typeof x === 'object' && 'type' in x) return String((x as { type: unknown }).type)
  return 'inline'
}

/** A mermaid-safe id for a state node: its path joined with underscores (the root is the machine id). */
function idOf(n: Node): string {
  return n.path.length === 0 ? n.id : n.path.join('_')
}

function label(t: Transition): string {
  let s = t.eventType === '' ? 'always' : t.eventType
  if (t.guard !== undefined) s += ` [${nameOf(t.guard)}]`
  if (t.actions.length > 0) s += ` / ${t.actions.map(nameOf).join(', ')}`
  if (t.reenter && t.target?.length) s += ' (reenter)'
  return s
}

/** Every transition leaving a node, in document order: event transitions first, then `always`. */
function transitionsOf(n: Node): Transition[] {
  const out: Transition[] = []
  for (const list of n.transitions.values()) out.push(...list)
  for (const t of n.always ?? []) out.push(t)
  return out
}

function childrenOf(n: Node): Node[] {
  return Object.values(n.states)
}

function isWithin(n: Node, ancestor: Node): boolean {
  return n.path.length > ancestor.path.length && ancestor.path.every((p, i) => n.path[i] === p)
}

/** The mermaid `stateDiagram-v2` source of a machine. */
export function mermaidOf(machine: AnyStateMachine): string {
  const root = machine.root as unknown as Node
  const lines: string[] = ['stateDiagram-v2']
  const notes: string[] = []
  const crossEdges: string[] = []

  const emit = (n: Node, indent: string) => {
    const kids = childrenOf(n)
    const init = n.initial?.target[0]
    if (init) lines.push(`${indent}[*] --> ${idOf(init)}`)
    for (const k of kids) {
      if (childrenOf(k).length > 0) {
        lines.push(`${indent}state "${k.key}" as ${idOf(k)} {`)
        emit(k, indent + '  ')
        lines.push(`${indent}}`)
      } else if (k.path.length > 1) {
        lines.push(`${indent}state "${k.key}" as ${idOf(k)}`)
      } else {
        // Declared even when no edge names it, so a state without transitions still shows.
        lines.push(`${indent}${idOf(k)}`)
      }
      if (k.entry.length > 0) notes.push(`note right of ${idOf(k)}: entry / ${k.entry.map(nameOf).join(', ')}`)
      if (k.type === 'final') lines.push(`${indent}${idOf(k)} --> [*]`)
      for (const t of transitionsOf(k)) {
        const target = t.target?.[0]
        if (!target) {
          notes.push(`note right of ${idOf(k)}: ${label(t)} (no state change)`)
          continue
        }
        const edge = `${idOf(k)} --> ${idOf(target)}: ${label(t)}`
        // An edge stays inside the composite only when both ends live there.
        if (isWithin(target, n) || (n.path.length === 0)) lines.push(`${indent}${edge}`)
        else crossEdges.push(edge)
      }
    }
  }
  emit(root, '  ')
  for (const e of crossEdges) lines.push(`  ${e}`)
  // Transitions on the root apply in every state: attach them to the initial state as a note.
  const rootInit = root.initial?.target[0]
  for (const t of transitionsOf(root)) {
    if (rootInit) notes.push(`note left of ${idOf(rootInit)}: in every state, ${label(t)}${t.target?.length ? ` → ${t.target.map(idOf).join(', ')}` : ''}`)
  }
  for (const note of notes) lines.push(`  ${note}`)
  return lines.join('\n')
}

function stateName(n: Node): string {
  return n.path.length === 0 ? '(any state)' : n.path.join('.')
}

/** A markdown table: per state, each event it accepts, with guard, target and actions, in priority order. */
export function acceptsTableOf(machine: AnyStateMachine): string {
  const rows: string[] = ['| State | Event | Guard | Goes to | Actions |', '| --- | --- | --- | --- | --- |']
  const cell = (s: string) => (s === '' ? '—' : '`' + s + '`')
  const walk = (n: Node) => {
    for (const t of transitionsOf(n)) {
      const target = t.target?.length ? t.target.map(stateName).join(', ') + (t.reenter ? ' (reenter)' : '') : '(stays)'
      rows.push(`| ${cell(stateName(n))} | ${cell(t.eventType === '' ? 'always' : t.eventType)} | ${cell(t.guard === undefined ? '' : nameOf(t.guard))} | ${target} | ${cell(t.actions.map(nameOf).join(', '))} |`)
    }
    if (n.entry.length > 0) rows.push(`| ${cell(stateName(n))} | (entry) | — | — | ${cell(n.entry.map(nameOf).join(', '))} |`)
    if (n.type === 'final') rows.push(`| ${cell(stateName(n))} | (final) | — | — | — |`)
    for (const k of childrenOf(n)) walk(k)
  }
  walk(machine.root as unknown as Node)
  return rows.join('\n')
}

/** The text of one generated region, by kind. */
function regionText(kind: string, machine: AnyStateMachine): string {
  if (kind === 'diagram') return '```mermaid\n' + mermaidOf(machine) + '\n```'
  if (kind === 'accepts') return acceptsTableOf(machine)
  throw new Error(`unknown generated region kind '${kind}'`)
}

const REGION = /<!-- generated:(\w+):(\w+) -->\n[\s\S]*?<!-- \/generated -->/g

/**
 * Rewrites every `<!-- generated:MACHINE:KIND -->…<!-- /generated -->` region of `doc` from the
 * machine definitions; the rest of the text is kept as written. Throws on an unknown machine or kind.
 */
export function regenerate(doc: string): string {
  return doc.replace(REGION, (_all, name: string, kind: string) => {
    const machine = documentedMachines[name]
    if (!machine) throw new Error(`unknown machine '${name}' in a generated region`)
    return `<!-- generated:${name}:${kind} -->\n${regionText(kind, machine)}\n<!-- /generated -->`
  })
}

/** The generated regions present in `doc`, as `machine:kind` keys (so a test can check none is missing). */
export function regionsOf(doc: string): string[] {
  return [...doc.matchAll(REGION)].map((m) => `${m[1]}:${m[2]}`)
}

/** The ```ts blocks marked `<!-- example:NAME -->` in `doc`, by name. */
export function examplesOf(doc: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const m of doc.matchAll(/<!-- example:(\w+) -->\n```ts\n([\s\S]*?)```/g)) out[m[1]!] = m[2]!
  return out
}
