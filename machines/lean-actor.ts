/**
 * A lean interpreter for turnlog's own machines: the same definitions (`turnMachine`,
 * `stepMachine`, `inboxMachine`), run without XState's general-purpose runtime. Over ~400 lines (407),
 * knowingly: one file on purpose, since the interpreter is read against XState's algorithm as a
 * whole (the compile step and the macrostep share the normalised nodes).
 *
 * Why: the agent sends about 10 machine events per step, and XState's actor (snapshots, the
 * microstep algorithm for every kind of state chart, inspection, the system) was about a third of
 * a step's cost (benchmark B2/B5). turnlog's machines use a small, fixed subset of statecharts:
 * compound and atomic states (no parallel, history or final states), `on` transitions with named
 * guards and `and(...)`, targetless transitions, `always`, entry/exit actions, `reenter`, and
 * `assign` as the only action. For that subset, XState's semantics are short enough to restate:
 *
 * - an event is handled by the deepest active state that has an enabled transition for it,
 *   searching from the atomic state up to the root (document order of candidates, first enabled
 *   guard wins); an unhandled event takes no transition of its own, but the eventless ones below
 *   are still evaluated with it (a guard may read the event);
 * - a transition with a target exits the states below the transition's domain (innermost first),
 *   runs its own actions, then enters the target path (outermost first) and the initial children
 *   below it; `reenter: true` makes a self or descendant target leave and re-enter the source; a
 *   target above the source is itself left and re-entered (XState's least common ancestor);
 * - after every transition, eventless (`always`) transitions are taken until none is enabled,
 *   each seeing the event that started the macrostep;
 * - `assign` actions run in order, each seeing the context the previous one produced.
 *
 * The definition is read from XState's own normalised state nodes (`machine.root`), so the
 * machine files stay the single definition. `test/machines/lean-actor.property.test.ts` runs random
 * event sequences through both this interpreter and XState's `createActor` and requires the same
 * state value and context after every event, for each machine. Anything outside the subset is
 * refused when the machine is compiled (`UNSUPPORTED_MACHINE`), never mis-run.
 *
 * The agent uses this interpreter unless an `inspect` observer is given (then it runs XState's
 * actor, so inspection tools see every transition).
 */
import { and, createActor, or, type AnyStateMachine, type EventObject, type StateValue } from 'xstate'

// XState's combinators carry their check function; compare by identity, not by name.
const AND_CHECK = (and([]) as unknown as { check: unknown }).check
const OR_CHECK = (or([]) as unknown as { check: unknown }).check

/** The part of an actor the driver uses. */
export interface MachineRunner<TContext, TEvent extends EventObject> {
  send(event: TEvent): void
  getSnapshot(): LeanSnapshot<TContext>
  stop(): void
}

export interface LeanSnapshot<TContext> {
  readonly value: StateValue
  readonly context: TContext
  readonly status: 'active'
  matches(value: StateValue): boolean
}

type Args = { context: any; event: EventObject }
type Guard = (args: Args) => boolean
type Action = (context: any, event: EventObject) => any

interface Transition {
  guard: Guard | null
  actions: Action[]
  /** The target state nodes; null for a targetless transition. */
  target: Node | null
  reenter: boolean
  /** The transition's domain (computed once: the source is the state that owns the transition). */
  domain: Node | null
  /** The states entered below the domain down to the target, outermost first. */
  enterPath: Node[]
}

interface Node {
  key: string
  id: string
  parent: Node | null
  /** The initial child of a compound state; null for an atomic one. */
  initial: Node | null
  entry: Action[]
  exit: Action[]
  on: Map<string, Transition[]>
  always: Transition[]
}

/** What `compileMachine` builds once per machine definition. */
interface Compiled {
  root: Node
  /** The initial atomic state after the machine starts (entry actions are run by `start`). */
  machine: AnyStateMachine
  /** Any state has `always` transitions. */
  hasAlways: boolean
}

const CACHE = new WeakMap<AnyStateMachine, Compiled>()

function unsupported(message: string): Error {
  const err = new Error(`lean-actor: ${message}`)
  ;(err as Error & { code: string }).code = 'UNSUPPORTED_MACHINE'
  return err
}

function compileGuard(machine: AnyStateMachine, g: unknown): Guard | null {
  if (g === undefined || g === null) return null
  const impl = (machine.implementations as { guards: Record<string, unknown> }).guards
  if (typeof g === 'string') {
    const fn = impl[g]
    if (typeof fn !== 'function') throw unsupported(`unknown guard ${g}`)
    return compileGuard(machine, fn)
  }
  if (typeof g === 'function') {
    const parts = (g as { guards?: unknown[] }).guards
    const check = (g as { check?: unknown }).check
    if (Array.isArray(parts) && check) {
      const compiled = parts.map((p) => compileGuard(machine, p)!)
      if (check === AND_CHECK) return (a) => compiled.every((c) => c(a))
      if (check === OR_CHECK) return (a) => compiled.some((c) => c(a))
      throw unsupported('a guard combinator other than and/or')
    }
    if (check) throw unsupported('a built-in guard other than and/or')
    return g as Guard
  }
  if (typeof g === 'object' && typeof (g as { type?: unknown }).type === 'string' && !('params' in (g as object))) {
    return compileGuard(machine, (g as { type: string }).type)
  }
  throw unsupported('a parameterised guard')
}

function compileAction(machine: AnyStateMachine, a: unknown): Action {
  const impl = (machine.implementations as { actions: Record<string, unknown> }).actions
  let fn: unknown = a
  if (typeof a === 'string') fn = impl[a]
  else if (typeof a === 'object' && a !== null && typeof (a as { type?: unknown }).type === 'string' && !('params' in a)) {
    fn = impl[(a as { type: string }).type]
  }
  if (typeof fn !== 'function' || (fn as { type?: unknown }).type !== 'xstate.assign') {
    throw unsupported(`only assign actions are supported (${typeof a === 'string' ? a : typeof a})`)
  }
  const assignment = (fn as unknown as { assignment: unknown }).assignment
  if (typeof assignment === 'function') {
    return (context, event) => ({ ...context, ...(assignment as (a: Args) => object)({ context, event }) })
  }
  const entries = Object.entries(assignment as Record<string, unknown>)
  return (context, event) => {
    const next = { ...context }
    for (const [k, v] of entries) next[k] = typeof v === 'function' ? (v as (a: Args) => unknown)({ context, event }) : v
    return next
  }
}

interface XNode {
  key: string
  id: string
  type: string
  parent?: XNode
  states: Record<string, XNode>
  entry: unknown[]
  exit: unknown[]
  transitions: Map<string, XTransition[]>
  always?: XTransition[]
  initial: { target: XNode[] }
  invoke: unknown[]
  after: unknown[]
  history: unknown
}
interface XTransition {
  guard?: unknown
  actions: unknown[]
  target?: XNode[]
  reenter?: boolean
}

function compile(machine: AnyStateMachine): Compiled {
  const byX = new Map<XNode, Node>()
  const build = (x: XNode, parent: Node | null): Node => {
    if (x.type === 'parallel' || x.type === 'history' || x.type === 'final') throw unsupported(`${x.type} state ${x.id}`)
    if (x.invoke.length || x.after.length) throw unsupported(`invoke/after in ${x.id}`)
    const node: Node = {
      key: x.key, id: x.id, parent, initial: null,
      entry: x.entry.map((a) => compileAction(machine, a)), exit: x.exit.map((a) => compileAction(machine, a)),
      on: new Map(), always: [],
    }
    byX.set(x, node)
    for (const child of Object.values(x.states)) build(child, node)
    return node
  }
  const xroot = machine.root as unknown as XNode
  const root = build(xroot, null)
  const link = (x: XNode): void => {
    const node = byX.get(x)!
    if (x.type === 'compound') {
      const t = x.initial.target
      if (t.length !== 1 || t[0]!.parent !== x) throw unsupported(`initial of ${x.id}`)
      node.initial = byX.get(t[0]!)!
    }
    const tr = (d: XTransition): Transition => {
      if (d.target && d.target.length > 1) throw unsupported(`multiple targets in ${x.id}`)
      const target = d.target && d.target.length ? byX.get(d.target[0]!)! : null
      const reenter = d.reenter === true
      const domain = target ? domainOf(node, target, reenter, root) : null
      const enterPath = enterPathOf(node, target, domain)
      return { guard: compileGuard(machine, d.guard), actions: d.actions.map((a) => compileAction(machine, a)), target, reenter, domain, enterPath }
    }
    for (const [type, defs] of x.transitions) {
      if (type === '*' || type.includes('*') || type.startsWith('xstate.')) throw unsupported(`event descriptor ${type}`)
      node.on.set(type, defs.map(tr))
    }
    node.always = (x.always ?? []).map(tr)
    for (const child of Object.values(x.states)) link(child)
  }
  link(xroot)
  return { root, machine, hasAlways: [...byX.values()].some((n) => n.always.length > 0) }
}

/**
 * The domain of a transition from `source` to `target`, as XState's `getTransitionDomain` computes
 * it for one target: `source` itself when it does not reenter and contains the target (itself
 * included); else the innermost proper ancestor of the target that has `source` strictly below it
 * (so a target above the source is itself left and re-entered); else (source or target is the
 * root) the root, or null for a reentering transition: then the root itself is left and re-entered.
 * The states below the domain are exited and entered; null stands above the root.
 */
function domainOf(source: Node, target: Node, reenter: boolean, root: Node): Node | null {
  if (!reenter && ancestors(target).includes(source)) return source
  const sourceAbove = new Set(ancestors(source.parent))
  for (let c: Node | null = target.parent; c; c = c.parent) if (sourceAbove.has(c)) return c
  return reenter ? null : root
}

/**
 * The states a transition enters before the target's initial children, outermost first: the
 * states below the domain down to the target. The target itself is entered even when it is the
 * domain, as XState does (a nested state targeting the root without reenter runs the root's entry
 * actions again), except by a transition that stays inside its own source. None for a targetless
 * transition.
 */
function enterPathOf(source: Node, target: Node | null, domain: Node | null): Node[] {
  if (!target || (target === domain && target === source)) return []
  const path: Node[] = [target]
  for (let c: Node | null = target.parent; c && c !== domain; c = c.parent) path.unshift(c)
  return path
}

/** `n` and the states above it, innermost first (none for null). */
function ancestors(n: Node | null): Node[] {
  const out: Node[] = []
  for (let c: Node | null = n; c; c = c.parent) out.push(c)
  return out
}

function valueOf(atomic: Node): StateValue {
  // a state just below the root: its key, a string (immutable, so the same one every time)
  if (atomic.parent !== null && atomic.parent.parent === null) return atomic.key
  // the path below the root, outermost first
  const path: string[] = []
  for (let c: Node | null = atomic; c && c.parent; c = c.parent) path.push(c.key)
  // a machine without states: XState's value is the empty object
  if (path.length === 0) return {}
  let v: StateValue = path[0]!
  for (let i = 1; i < path.length; i++) v = { [path[i]!]: v }
  return v
}

function matchesValue(current: StateValue, wanted: StateValue): boolean {
  if (typeof wanted === 'string') {
    // the common case, a state just below the root asked by its key: no split (each `matches`)
    if (typeof current === 'string') return current === wanted
    const parts = wanted.split('.')
    let cur: StateValue | undefined = current
    for (const p of parts) {
      if (typeof cur === 'string') return cur === p && p === parts[parts.length - 1]
      if (cur === undefined || !(p in cur)) return false
      cur = (cur as Record<string, StateValue>)[p]
    }
    return true
  }
  if (typeof current === 'string') return false
  for (const [k, v] of Object.entries(wanted)) {
    const c = (current as Record<string, StateValue>)[k]
    if (c === undefined || !matchesValue(c, v as StateValue)) return false
  }
  return true
}

class LeanSnapshotImpl<TContext> implements LeanSnapshot<TContext> {
  readonly status = 'active' as const
  #value: StateValue | undefined
  constructor(readonly context: TContext, readonly atomic: Node) {}
  get value(): StateValue {
    return (this.#value ??= valueOf(this.atomic))
  }
  matches(value: StateValue): boolean {
    return matchesValue(this.value, value)
  }
}

/**
 * Starts `machine` (one of turnlog's machines, or any machine in the subset described above) with
 * `input`, like `createActor(machine, { input }).start()`.
 */
export function createLeanActor<TContext, TEvent extends EventObject>(
  machine: AnyStateMachine,
  input: unknown,
): MachineRunner<TContext, TEvent> {
  let compiled = CACHE.get(machine)
  if (!compiled) CACHE.set(machine, (compiled = compile(machine)))
  return new LeanActor<TContext, TEvent>(compiled, machine, input)
}

/**
 * One running machine: its context and its atomic state, nothing else (an idle agent holds two of
 * these: benchmark B6). Methods live on the prototype and the snapshot is made on first read after
 * a change, so a `send` allocates only the contexts its `assign`s produce.
 */
class LeanActor<TContext, TEvent extends EventObject> implements MachineRunner<TContext, TEvent> {
  #context: any
  #atomic: Node
  #snapshot: LeanSnapshotImpl<TContext> | null = null
  /** Some state has eventless transitions (else an unhandled event is a no-op: no walk). */
  readonly #hasAlways: boolean

  constructor(compiled: Compiled, machine: AnyStateMachine, input: unknown) {
    const { root } = compiled
    this.#hasAlways = compiled.hasAlways
    const initEvent = { type: 'xstate.init', input } as EventObject
    const ctxConfig = (machine.config as { context?: unknown }).context
    this.#context = typeof ctxConfig === 'function' ? (ctxConfig as (a: { input: unknown }) => unknown)({ input }) : ctxConfig ?? {}
    this.#atomic = root
    for (const a of root.entry) this.#context = a(this.#context, initEvent)
    this.#enterDown(root, initEvent)
    this.#settle(initEvent)
  }

  send(event: TEvent): void {
    const hit = this.#select(event, false)
    if (hit) {
      this.#take(hit, event)
      this.#settle(event)
      this.#snapshot = null
      return
    }
    // An event no transition handles is still a macrostep: XState evaluates the eventless
    // transitions with it, and a guard that reads the event may now be enabled (issue 24).
    if (this.#hasAlways && this.#settle(event)) this.#snapshot = null
  }

  getSnapshot(): LeanSnapshot<TContext> {
    return (this.#snapshot ??= new LeanSnapshotImpl(this.#context, this.#atomic))
  }

  stop(): void {}

  /** `from` has been entered: descend through initial children, running their entry actions. */
  #enterDown(from: Node, event: EventObject): void {
    let n = from
    while (n.initial) {
      n = n.initial
      for (const a of n.entry) this.#context = a(this.#context, event)
    }
    this.#atomic = n
  }

  #take(t: Transition, event: EventObject): void {
    if (!t.target) {
      for (const a of t.actions) this.#context = a(this.#context, event)
      return
    }
    // exit from the atomic state up to (not including) the domain, innermost first
    for (let c: Node | null = this.#atomic; c && c !== t.domain; c = c.parent) for (const a of c.exit) this.#context = a(this.#context, event)
    for (const a of t.actions) this.#context = a(this.#context, event)
    // enter from below the domain down to the target (outermost first), then its initial children
    for (const n of t.enterPath) for (const a of n.entry) this.#context = a(this.#context, event)
    this.#enterDown(t.target, event)
  }

  #select(event: EventObject, eventless: boolean): Transition | null {
    const context = this.#context
    for (let n: Node | null = this.#atomic; n; n = n.parent) {
      const list = eventless ? n.always : n.on.get(event.type)
      if (!list) continue
      for (const t of list) if (t.guard === null || t.guard({ context, event })) return t
    }
    return null
  }

  /** Eventless transitions until none is enabled, each seeing the macrostep's event; true when
   * one was taken. */
  #settle(event: EventObject): boolean {
    for (let n = 0; ; n++) {
      if (n > 1000) throw new Error('lean-actor: eventless transitions did not settle')
      const hit = this.#select(event, true)
      if (!hit) return n > 0
      this.#take(hit, event)
    }
  }
}

/**
 * The runner the agent uses: the lean interpreter, or XState's own actor when an `inspect`
 * observer is given (inspection tools then see every transition, as with `createActor`).
 */
export function runMachine<TContext, TEvent extends EventObject>(
  machine: AnyStateMachine,
  input: unknown,
  inspect?: unknown,
): MachineRunner<TContext, TEvent> {
  if (inspect === undefined) return createLeanActor<TContext, TEvent>(machine, input)
  const actor = createActor(machine, { input, inspect: inspect as never }).start()
  return actor as unknown as MachineRunner<TContext, TEvent>
}
