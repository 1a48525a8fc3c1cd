/**
 * Following a session's log by seq, once per session however many clients follow it. A
 * `SessionTail` holds the durable events read so far and wakes its waiters when more arrive. It is
 * fed in one of two ways:
 * - `feed(events)`: an agent in this process hands over what its store has made durable (after
 *   `agent.flush()`), so nothing is shown before it is durable and nothing is read back from disk;
 * - polling a `TailSource` every `pollMs` while somebody waits (a session run by another process: a
 *   PostgreSQL worker, another handler instance). A notification, if any, only makes a poll earlier.
 *
 * `cli/inspect-server.ts` follows files through the same `TailSource` shape.
 */
import type { LogEvent } from '../events/envelope.js'
import type { LogStore } from '../stores/types.js'

/** Where a tail's events come from. `read` appends the events after `events.length` (in seq
 * order) and throws a coded error on a defect; it is never called twice at once. */
export interface TailSource {
  read(events: LogEvent[]): Promise<void>
  close(): Promise<void>
  /** True for an error after which reading may resume (a dropped database connection). Default:
   * every error stops the tail. */
  transient?(err: unknown): boolean
}

/** A session of a `LogStore` as a tail source: a read snapshot from the last seq, per read. */
export function storeTailSource(store: LogStore, sessionId: string): TailSource {
  return {
    async read(events) {
      const r = await store.open(sessionId, 'read')
      try {
        for await (const e of r.events(events.length)) {
          // guard: a snapshot never goes backwards, but a store that re-numbers would corrupt the tail
          if (e.seq !== events.length) break
          events.push(e)
        }
      } finally {
        await r.close()
      }
    },
    close: async () => {},
    transient: () => true,
  }
}

export interface SessionTailOptions {
  /** How often the source is read while somebody waits and no agent feeds the tail. Default 250 ms. */
  pollMs?: number
  /** Reports a read error (the tail keeps what it has; a transient error is retried at the next poll). */
  onError?: (err: unknown) => void
}

export class SessionTail {
  readonly events: LogEvent[] = []
  /** An error that stopped the tail (a corrupt log); waiters are woken and see it. */
  failed: unknown = null
  private readonly waiters = new Set<() => void>()
  private reading: Promise<void> | null = null
  private timer: ReturnType<typeof setInterval> | null = null
  private fed = false

  constructor(private readonly source: TailSource, private readonly opts: SessionTailOptions = {}) {}

  /** Reads what the source has now (coalesced: concurrent calls share one read). */
  refresh(): Promise<void> {
    if (this.fed || this.failed) return Promise.resolve()
    this.reading ??= this.readOnce().finally(() => { this.reading = null })
    return this.reading
  }

  private async readOnce(): Promise<void> {
    const before = this.events.length
    try {
      await this.source.read(this.events)
    } catch (err) {
      if (this.source.transient?.(err) !== true) this.failed = err
      this.opts.onError?.(err)
    }
    if (this.events.length > before || this.failed) this.wake()
  }

  /**
   * An agent in this process feeds the tail from now on (its log is the source): `events` are
   * the agent's durable events, in seq order from 0; those past `this.events.length` are added.
   */
  feed(all: readonly LogEvent[], durable: number): void {
    this.fed = true
    this.stopPolling()
    const before = this.events.length
    for (let i = before; i < durable; i++) this.events.push(all[i]!)
    if (this.events.length > before) this.wake()
  }

  /** The agent stopped feeding (disposed, its store failed): back to reading the source. */
  unfeed(): void {
    this.fed = false
    if (this.waiters.size > 0) this.startPolling()
  }

  private wake(): void {
    const ws = [...this.waiters]
    this.waiters.clear()
    for (const w of ws) w()
    if (this.waiters.size === 0) this.stopPolling()
  }

  /**
   * Resolves when the tail holds more than `length` events, the tail failed, `signal` aborts or
   * `timeoutMs` passes: true when there are more events.
   */
  wait(length: number, signal?: AbortSignal, timeoutMs?: number): Promise<boolean> {
    if (this.events.length > length || this.failed) return Promise.resolve(this.events.length > length)
    if (signal?.aborted) return Promise.resolve(false)
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined
      const done = (): void => {
        this.waiters.delete(done)
        if (timer !== undefined) clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        if (this.waiters.size === 0) this.stopPolling()
        resolve(this.events.length > length)
      }
      this.waiters.add(done)
      signal?.addEventListener('abort', done, { once: true })
      if (timeoutMs !== undefined) timer = setTimeout(done, timeoutMs)
      this.startPolling()
    })
  }

  private startPolling(): void {
    if (this.fed || this.timer !== null || this.failed) return
    this.timer = setInterval(() => void this.refresh(), this.opts.pollMs ?? 250)
    this.timer.unref?.()
  }

  private stopPolling(): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }

  private readonly memo = new Map<string, Uint8Array>()

  /**
   * The bytes `make()` gives for the events [from, to), made once for every client at the same
   * place (1,000 followers of one session cost one JSON.stringify per batch, not 1,000; B9).
   * The events of a range never change, so the bytes never go stale; a few recent ranges are kept.
   */
  bytes(kind: string, from: number, to: number, make: () => string): Uint8Array {
    const key = `${kind}:${from}:${to}`
    let b = this.memo.get(key)
    if (!b) {
      b = new TextEncoder().encode(make())
      this.memo.set(key, b)
      if (this.memo.size > 16) this.memo.delete(this.memo.keys().next().value!)
    }
    return b
  }

  /** Number of clients waiting now (the B9 bench and tests read it). */
  get waiting(): number { return this.waiters.size }

  async close(): Promise<void> {
    this.stopPolling()
    this.wake()
    await this.reading
    await this.source.close()
  }
}
