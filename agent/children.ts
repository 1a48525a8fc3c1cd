/**
 * The parent's side of running children (docs/spec/lifecycle.md §10): while a `defineSubagent` call runs, its
 * child agent is registered here, so the parent lists the child's open approvals (with the child's
 * session id), routes `decide` for them to the child (the decision is logged in the child's log,
 * never in the parent's), and reports `parked` while a child is parked (a parked child parks the
 * parent's call). The parent logs no `step/parked` for it: L18 allows `step/parked` only where
 * every started call has its result, and the parent's call is still running — the child's log
 * holds the `step/parked`.
 */
import type { UsageRollUp } from '../reducers/usage-tree.js'
import type { LiveChild } from '../tools/types.js'
import type { OpenApproval } from './types.js'

const NONE: readonly never[] = []

export class LiveChildren {
  /** Created by the first `attach`: an agent that runs no child holds no map (benchmark B6). */
  #children: Map<string, { child: LiveChild; off: () => void }> | null = null
  /** The roll-ups of the children this agent ran (read live, and kept when each call ended); created with the first. */
  #usage: Map<string, UsageRollUp> | null = null

  /** The running children, or none. */
  #running(): Iterable<{ child: LiveChild; off: () => void }> {
    return this.#children === null ? NONE : this.#children.values()
  }

  /** `changed` runs whenever a registered child's parked state may have changed. */
  constructor(private readonly changed: () => void) {}

  /** Registers a running child; returns the unregister (idempotent). */
  attach(child: LiveChild): () => void {
    const id = child.sessionId
    const off = child.on('agent/status', () => this.changed())
    ;(this.#children ??= new Map()).set(id, { child, off })
    this.changed()
    let done = false
    return () => {
      if (done) return
      done = true
      off()
      this.#keepUsage(child)
      if (this.#children?.get(id)?.child === child) this.#children.delete(id)
      this.changed()
    }
  }

  /** Per child session id, its usage roll-up (running children read now). */
  usage(): Record<string, UsageRollUp> {
    for (const { child } of this.#running()) this.#keepUsage(child)
    return this.#usage === null ? {} : Object.fromEntries(this.#usage)
  }

  #keepUsage(child: LiveChild): void {
    try {
      const rollUp = child.usage() as UsageRollUp
      ;(this.#usage ??= new Map()).set(child.sessionId, rollUp)
    } catch {
      // a disposed or broken child handle: its last roll-up stays
    }
  }

  /** True when a registered child is parked (its step waits for people). */
  get anyParked(): boolean {
    for (const { child } of this.#running()) if (child.status === 'parked') return true
    return false
  }

  /** True when a running child owes a person a decision now (parked and settled, docs/spec/lifecycle.md §9, §10). */
  owesPerson(): boolean {
    for (const { child } of this.#running()) if (child.owesPerson?.() ?? child.status === 'parked') return true
    return false
  }

  /** True when there are running children and every one is parked: the family owes only decisions. */
  get allParked(): boolean {
    if (this.#children === null || this.#children.size === 0) return false
    for (const { child } of this.#children.values()) if (child.status !== 'parked') return false
    return true
  }

  /**
   * Makes every running child's committed events durable (a parent's `flush()`, docs/spec/lifecycle.md §10): a
   * process that exits after its parent's flush leaves the children's logs complete, so a parked
   * child's open approval is in its log under the id a person was shown. Rejects with the first
   * child's failure.
   */
  async flush(): Promise<void> {
    await Promise.all([...this.#running()].map(({ child }) => child.flush?.()))
  }

  /**
   * Disposes every running child (each parked: it stays parked, docs/spec/lifecycle.md §9): the parked family's
   * `dispose()`. Every child is disposed even when one rejects; the first rejection is rethrown.
   */
  async disposeAll(): Promise<void> {
    const done = await Promise.allSettled([...this.#running()].map(({ child }) => child.dispose?.()))
    const failed = done.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed !== undefined) throw failed.reason
  }

  /** The open approvals of every running child (a child lists its own children's too). */
  approvals(): OpenApproval[] {
    const out: OpenApproval[] = []
    for (const { child } of this.#running()) out.push(...(child.approvals() as readonly OpenApproval[]))
    return out
  }

  /**
   * A steer of the parent (docs/spec/lifecycle.md §9, §10): every running child's open approvals are decided
   * `deny` `by: superseded` in the child (logged there); the steer itself stays the parent's input.
   * Returns how many. A child that throws here is skipped (its approvals stay open).
   */
  supersede(): number {
    let n = 0
    for (const { child } of this.#running()) {
      try {
        n += child.supersedeApprovals?.() ?? 0
      } catch {
        // a disposed child handle: nothing of it to supersede
      }
    }
    return n
  }

  /** The open input rounds of every running child (a child lists its own children's too; docs/spec/lifecycle.md §11). */
  inputs(): Array<{ requestId: string; session: string }> {
    const out: Array<{ requestId: string; session: string }> = []
    for (const { child } of this.#running()) {
      try {
        out.push(...(child.inputs?.() ?? NONE))
      } catch {
        // a disposed child handle: nothing of it is open here
      }
    }
    return out
  }

  /** A steer of the parent: every running child's open rounds are answered `cancel` `by: superseded` in the child. */
  supersedeInputs(): number {
    let n = 0
    for (const { child } of this.#running()) {
      try {
        n += child.supersedeInputs?.() ?? 0
      } catch {
        // a disposed child handle: nothing of it to supersede
      }
    }
    return n
  }

  /** The running child that lists input request `requestId` as open, if any. */
  inputOwner(requestId: string): LiveChild | undefined {
    for (const { child } of this.#running()) {
      try {
        if (child.inputs?.().some((r) => r.requestId === requestId)) return child
      } catch {
        // a disposed child handle
      }
    }
    return undefined
  }

  /** The running child that lists `approvalId` as open, if any. */
  owner(approvalId: string): LiveChild | undefined {
    for (const { child } of this.#running()) if (child.approvals().some((a) => a.approvalId === approvalId)) return child
    return undefined
  }
}
