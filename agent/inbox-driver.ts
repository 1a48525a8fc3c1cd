/**
 * The agent's inbox: the inbox machine, every splice of it logged before it is applied, the live
 * `agent/inbox/*` events, and the public `InboxHandle`. The machine's guard decides whether a
 * splice is allowed; the log records it; memory follows the log.
 */
import { runMachine, type MachineRunner } from '../machines/lean-actor.js'
import { TurnlogError, type EventDraft, type InboxTarget, type LogEvent, type UserMessage } from '../events/index.js'
import { inboxMachine, spliceKeepsIdsUnique, type InboxContext, type InboxEvent, type SpliceEvent } from '../machines/inbox.js'
import type { AgentOptions, HookName, InboxHandle, MessageInput } from './types.js'
import { toUserMessage } from './messages.js'

/** What the inbox needs of its agent. */
export interface InboxHost {
  readonly sessionId: string
  readonly newId: () => string
  /** Appends one event to the log (throws and changes nothing when it is refused). */
  append(draft: EventDraft): LogEvent
  /** Emits a live event. */
  emit(name: HookName, payload: unknown): void
  /** Throws when the agent no longer takes edits (disposed, or halted by persistence). */
  assertUsable(): void
}

export class InboxDriver {
  readonly #host: InboxHost
  readonly #machine: MachineRunner<InboxContext, InboxEvent>
  /**
   * The waking messages that set the latch (a replacement inherits its original's place); null
   * when a wake without a message set it. Maintenance replays its latch only while one of them is
   * pending: a steer removed during maintenance leaves no claim on a turn, and what else is
   * pending (injected context) alone never opens one (docs/spec/lifecycle.md §3.8, choice 7).
   * `undefined` stands for the empty set until a message latches (an idle agent holds no set, B6).
   */
  #latchedBy: Set<string> | null | undefined = undefined
  #handle: InboxHandle | null = null

  constructor(host: InboxHost, pending: InboxContext, inspect: AgentOptions['inspect']) {
    this.#host = host
    this.#machine = runMachine(inboxMachine, pending, inspect)
  }

  /** The inbox machine's state (for the agent's snapshot). */
  snapshot(): ReturnType<MachineRunner<InboxContext, InboxEvent>['getSnapshot']> {
    return this.#machine.getSnapshot()
  }

  /** Sends a non-splice event (LATCH, UNLATCH) to the inbox machine. */
  send(ev: { type: 'LATCH' } | { type: 'UNLATCH' }): void {
    if (ev.type === 'UNLATCH') this.#latchedBy = undefined
    else this.#latchedBy = null
    this.#machine.send(ev)
  }

  /** Latches a wake for the waking message `id` (it counts while that message is pending). */
  latch(id: string): void {
    if (this.#latchedBy !== null) (this.#latchedBy ??= new Set()).add(id)
    this.#machine.send({ type: 'LATCH' })
  }

  /** The public handle: every edit checks that the agent is usable first. Built on first use (B6). */
  get handle(): InboxHandle {
    return (this.#handle ??= this.#makeHandle())
  }

  #makeHandle(): InboxHandle {
    const inbox = this
    return {
      get nextTurn() {
        return inbox.list('next-turn')
      },
      get nextStep() {
        return inbox.list('next-step')
      },
      append: (target: InboxTarget, m: MessageInput) => this.#edit(() => this.#insert(target, 'tail', m)),
      prepend: (target: InboxTarget, m: MessageInput) => this.#edit(() => this.#insert(target, 'head', m)),
      replace: (id: string, m: MessageInput) => this.#edit(() => {
        const at = this.#find(id)
        if (!at) return false
        const next = toUserMessage(m, this.#host.newId)
        this.splice(at.target, at.index, 1, [next], 'canceled')
        if (this.#latchedBy?.has(id)) this.#latchedBy.add(next.id)
        return true
      }),
      remove: (id: string) => this.#edit(() => {
        const at = this.#find(id)
        if (!at) return false
        this.splice(at.target, at.index, 1, [], 'canceled')
        return true
      }),
      splice: (target: InboxTarget, start: number, deleteCount?: number, ...messages: MessageInput[]) => this.#edit(() => {
        const len = this.list(target).length
        const s = start < 0 ? Math.max(len + start, 0) : Math.min(start, len)
        const d = deleteCount === undefined ? len - s : Math.max(0, Math.min(deleteCount, len - s))
        return this.splice(target, s, d, messages.map((m) => toUserMessage(m, this.#host.newId)), 'canceled')
      }),
      clear: () => this.#edit(() => this.clear()),
    }
  }

  /**
   * One inbox splice: checked by the machine's guard, appended to the log, then applied.
   * `outcome` marks removals by edits and cancels; a claim passes none.
   */
  splice(target: InboxTarget, start: number, deleteCount: number, inserted: UserMessage[], outcome?: 'canceled'): UserMessage[] {
    if (deleteCount === 0 && inserted.length === 0) return []
    const ev: SpliceEvent = { type: 'SPLICE', target, start, deleteCount, inserted }
    // The machine's own guard, called directly: `snapshot.can()` computes a whole transition.
    if (!spliceKeepsIdsUnique(this.#machine.getSnapshot().context, ev)) {
      throw new TurnlogError('DUPLICATE_PENDING_ID', 'a message with this id is already pending', {
        sessionId: this.#host.sessionId, field: 'message.id', info: { ids: inserted.map((m) => m.id) },
      })
    }
    const removed = this.#logSplice(target, start, deleteCount, inserted, outcome)
    this.#machine.send(ev)
    this.#emitSplice(target, start, removed, inserted, outcome)
    return removed
  }

  /**
   * Claims all of next-step and, when `takePrompt`, the first next-turn prompt: logged as
   * splices without outcome (next-step first), then applied as one CLAIM.
   */
  claim(turn: number, takePrompt: boolean): UserMessage[] {
    const steps = this.#logSplice('next-step', 0, this.list('next-step').length, [])
    const prompt = takePrompt ? this.#logSplice('next-turn', 0, Math.min(1, this.list('next-turn').length), []) : []
    this.#machine.send({ type: 'CLAIM', takePrompt })
    if (steps.length) this.#emitSplice('next-step', 0, steps, [])
    if (prompt.length) this.#emitSplice('next-turn', 0, prompt, [])
    const batch = [...steps, ...prompt]
    for (const message of batch) this.#host.emit('agent/inbox/claimed', { message, turn })
    return batch
  }

  /** Appends one `agent/inbox/spliced` (none when it changes nothing); returns the removed messages. */
  #logSplice(target: InboxTarget, start: number, deleteCount: number, inserted: UserMessage[], outcome?: 'canceled'): UserMessage[] {
    if (deleteCount === 0 && inserted.length === 0) return []
    const removed = this.list(target).slice(start, start + deleteCount)
    this.#host.append({
      type: 'agent/inbox/spliced',
      data: {
        target, start, inserted,
        ...(deleteCount > 0 ? { removedCount: deleteCount } : {}),
        ...(deleteCount > 0 && outcome ? { outcome } : {}),
      },
    })
    return removed
  }

  #emitSplice(target: InboxTarget, start: number, removed: readonly UserMessage[], inserted: readonly UserMessage[], outcome?: 'canceled'): void {
    const canceled = outcome !== undefined && removed.length > 0
    this.#host.emit('agent/inbox/spliced', { target, start, removedCount: removed.length, inserted, ...(canceled ? { outcome } : {}) })
    if (canceled) for (const message of removed) this.#host.emit('agent/inbox/discarded', { target, message, outcome: 'canceled' })
    for (const message of inserted) this.#host.emit('agent/inbox/inserted', { target, message })
  }

  list(t: InboxTarget): readonly UserMessage[] {
    const c = this.#machine.getSnapshot().context
    return t === 'next-turn' ? c.nextTurn : c.nextStep
  }

  #find(id: string): { target: InboxTarget; index: number } | null {
    for (const target of ['next-turn', 'next-step'] as const) {
      const index = this.list(target).findIndex((m) => m.id === id)
      if (index >= 0) return { target, index }
    }
    return null
  }

  #insert(target: InboxTarget, where: 'head' | 'tail', m: MessageInput): string {
    const msg = toUserMessage(m, this.#host.newId)
    this.splice(target, where === 'head' ? 0 : this.list(target).length, 0, [msg])
    return msg.id
  }

  /** Cancels everything pending: next-step first, then next-turn. */
  clear(): void {
    for (const t of ['next-step', 'next-turn'] as const) {
      const n = this.list(t).length
      if (n > 0) this.splice(t, 0, n, [], 'canceled')
    }
  }

  #edit<T>(fn: () => T): T {
    this.#host.assertUsable()
    return fn()
  }

  /** True when a wake was latched (during maintenance or an aborted turn) and work is pending. */
  latchedWork(): boolean {
    return this.#machine.getSnapshot().matches('latched') && (this.list('next-turn').length > 0 || this.list('next-step').length > 0)
  }

  /** True when a wake was latched and one of the messages that set it is still pending (see `#latchedBy`). */
  latchedOwnWork(): boolean {
    if (!this.#machine.getSnapshot().matches('latched')) return false
    const by = this.#latchedBy
    if (by === null) return this.latchedWork()
    if (by === undefined) return false
    return [...this.list('next-turn'), ...this.list('next-step')].some((m) => by.has(m.id))
  }
}
