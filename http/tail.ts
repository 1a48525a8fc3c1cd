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
import { TurnlogError } from '../events/errors.js'

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
    // a defect of the log itself (a line that is not an event, a bad seq, an unknown format) stays
    // a defect however often it is read: the tail fails (readers get a 500). Anything else (a
    // dropped connection, a file being replaced) may pass: read again at the next poll.
    transient: (err) => !(TurnlogError.is(err) && LOG_DEFECTS.has(err.code)),
  }
}

/** Error codes that say the stored log is not a valid log. */
const LOG_DEFECTS: ReadonlySet<string> = new Set([
  'MALFORMED_LINE', 'INVALID_EVENT', 'INVALID_HEADER', 'MISSING_HEADER', 'BAD_SEQ', 'CHECKSUM_MISMATCH',
  'FUTURE_FORMAT', 'UNKNOWN_EVENT_TYPE', 'RECORD_TOO_LARGE', 'NOT_LOSSLESS', 'EMPTY_LOG', 'INVARIANT',
])

export interface SessionTailOptions {
  /** How often the source is read while somebody waits and no agent feeds the tail. Default 250 ms. */
  pollMs?: number
  /** Reports a read error (the tail keeps what it has; a transient error is retried at the next poll). */
  onError?: (err: unknown) => void
  /**
   * With at least `fanoutThreshold` live SSE followers (default 64), they are written at most once
   * per `fanoutIntervalMs` (default 20 ms): one socket write per follower per interval instead of
   * per event (B9). Fewer followers are written as soon as the event loop turns.
   */
  fanoutIntervalMs?: number
  fanoutThreshold?: number
}

export class SessionTail {
  readonly events: LogEvent[] = []
  /** An error that stopped the tail (a corrupt log); waiters are woken and see it. */
  failed: unknown = null
  private readonly waiters = new Set<() => void>()
  /** Followers told synchronously of every growth (SSE: no promise or timer per client per batch; B9). */
  private readonly listeners = new Set<() => void>()
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
    if (!this.idle) this.startPolling()
  }

  private wake(): void {
    const ws = [...this.waiters]
    this.waiters.clear()
    for (const w of ws) w()
    this.notify()
    if (this.idle) this.stopPolling()
  }

  private notifying = false

  /**
   * Tells the followers once per event-loop turn, after the appends of this turn: when the
   * process is busy (1,000 followers, B9), the events that arrived meanwhile go out as one batch,
   * one write per follower, instead of one write per follower per event (which is what makes a
   * saturated server fall further behind).
   */
  private notify(): void {
    if (this.notifying || this.listeners.size === 0) return
    this.notifying = true
    const run = (): void => {
      this.notifying = false
      this.lastNotify = performance.now()
      for (const l of [...this.listeners]) {
        try {
          l()
        } catch {
          // a follower's failure ends that follower only (it cleans up itself)
        }
      }
    }
    // many followers: at most one fan-out per `fanoutIntervalMs` (each costs a socket write per
    // follower; what arrives in between goes out in the next one)
    const wait = this.listeners.size >= (this.opts.fanoutThreshold ?? 64)
      ? (this.opts.fanoutIntervalMs ?? 20) - (performance.now() - this.lastNotify)
      : 0
    if (wait > 0) setTimeout(run, wait)
    else setImmediate(run)
  }

  private lastNotify = -Infinity

  /** No waiter, follower or hold: nobody reads this tail now. */
  get idle(): boolean { return this.waiters.size === 0 && this.listeners.size === 0 && this.holds === 0 }

  private holds = 0
  /** Told when the tail becomes idle (its last reader left): the owner may release it. */
  onIdle: (() => void) | null = null

  private idled(): void {
    // told after the current event-loop turn, if still idle (a reader woken now waits again first)
    if (this.idle && this.onIdle !== null) setImmediate(() => { if (this.idle && !this.closed) this.onIdle?.() })
  }

  /**
   * Marks the tail in use by a reader that is between waits (a request being answered, a stream
   * not yet read); the returned function ends the hold (once).
   */
  hold(): () => void {
    this.holds++
    let held = true
    return () => {
      if (!held) return
      held = false
      this.holds--
      this.idled()
    }
  }

  /**
   * Calls `fn` after the tail grew (once per event-loop turn, however many appends it had) and
   * when it fails or closes, until the returned function is called. The tail is polled meanwhile
   * when no agent feeds it.
   */
  listen(fn: () => void): () => void {
    this.listeners.add(fn)
    this.startPolling()
    return () => {
      this.listeners.delete(fn)
      if (this.idle) this.stopPolling()
      this.idled()
    }
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
        if (this.idle) this.stopPolling()
        resolve(this.events.length > length)
        this.idled()
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

  private last: { kind: string; from: number; to: number; bytes: Uint8Array } | null = null

  /**
   * `bytes` for the batch every live follower asks for next: a comparison instead of a map lookup
   * with a fresh key per client (1,000 followers ask for the same range one after the other).
   */
  shared(kind: string, from: number, to: number, make: () => string): Uint8Array {
    const l = this.last
    if (l !== null && l.from === from && l.to === to && l.kind === kind) return l.bytes
    const bytes = this.bytes(kind, from, to, make)
    this.last = { kind, from, to, bytes }
    return bytes
  }

  /** Number of clients waiting now (the B9 bench and tests read it). */
  get waiting(): number { return this.waiters.size + this.listeners.size }

  /** True once `close()` was called (followers end). */
  closed = false

  async close(): Promise<void> {
    this.closed = true
    this.stopPolling()
    this.wake()
    await this.reading
    await this.source.close()
  }
}
