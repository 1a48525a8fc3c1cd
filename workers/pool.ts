/**
 * `runWorkers({ store, concurrency, leaseMs, agent })`: serve the sessions of a postgres store
 * from any number of processes (docs/spec/api.md "Across machines"; decision record "postgres-workers" (docs/decisions/ in the repository)
 * ).
 *
 * - **Claim**: one statement takes up to `concurrency - active` sessions that have sent input and
 *   no holder, or a lease that expired (its holder died or stalled), expired leases first:
 *   `FOR UPDATE SKIP LOCKED` (two workers never wait on, or both take, one session), bumping
 *   each token.
 * - **Serve**: the session is repaired and resumed under the new lease (`resumeAgent`: closers
 *   for what the last holder left open; docs/spec/lifecycle.md §8: the interrupted turn is re-run, so a message
 *   a dead worker had accepted gets its answer; pending prompts run), then sent messages are moved into
 *   the agent in send order (`agent.send` with the message's id; the append that logs the splice
 *   marks them moved in the same transaction). The writer heartbeats the lease.
 * - **Hand back**: when the agent is idle, everything is durable and no sent input waits, the
 *   lease is released (conditionally on `pending = 0`, so input sent meanwhile is never stranded).
 * - **Failure**: a store failure halts the agent (`PERSISTENCE_FAILED`, inbox kept); the worker
 *   expires its lease at once so a worker (maybe itself, after `leaseMs`) takes the session over.
 * - **Wake-ups**: LISTEN `turnlog_input` only wakes early (NOTIFY is not durable); every
 *   `pollMs` the worker claims anyway, and it checks its sessions' inboxes, decisions and stop
 *   requests in one statement (checks.ts) every `pollMs` while not listening, less often while
 *   listening (a connected listener misses no NOTIFY).
 * - **Stop from any process**: `store.cancel` records a request; the holder cancels (NOTIFY
 *   `turnlog_cancel` or the poll; a new holder on claim). cancel-worker.ts.
 * - `stop()`: claims nothing more, lets every running turn finish, then hands every session back.
 *
 * This file holds the pool (claims, heartbeats, wake-ups, stop); one claimed session's life is in
 * session-run.ts. Workers run agents, so they sit above `agent/` and `replay/` (their own layer,
 * workers/), not in stores/postgres/ with the store they serve.
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { TurnlogError } from '../events/errors.js'
import { handleCancels } from './cancel-worker.js'
import { checkWith } from './checks.js'
import { SessionRun, type RunHost, type WorkerAgentOptions } from './session-run.js'
import type { PostgresStore } from '../stores/postgres/store.js'
import type { SqliteStore } from '../stores/sqlite/store.js'
import type { WorkerBackend, WorkerStore, WorkerWriter } from './backend.js'
import { PgBackend } from './pg-backend.js'
import { SqliteBackend } from './sqlite-backend.js'

export type { WorkerAgentOptions } from './session-run.js'

export interface WorkerOptions {
  /** `postgresStore(...)` (many machines) or `sqliteStore(file)` (several processes on one machine). */
  store: PostgresStore | SqliteStore
  /** The options of each session's agent (model, tools, hooks, …). May be async. */
  agent: (sessionId: string) => WorkerAgentOptions | Promise<WorkerAgentOptions>
  /** Sessions served at once by this process. Default 8. */
  concurrency?: number
  /** Lease length; heartbeats every third of it. A dead worker's sessions are taken over within
   * about two lease periods. Default 10 000 ms. */
  leaseMs?: number
  /** Fallback polling period: claims (expired leases, due times), and the check of the sessions
   * served here for input and stop requests while the LISTEN connection is down; while it is up,
   * that check runs every max(pollMs, leaseMs / 2) (checks.ts). Default min(1000, leaseMs / 2);
   * on SQLite (no NOTIFY: polling is how input is found) min(100, leaseMs / 2). */
  pollMs?: number
  /** How long an idle session is kept (waiting for more input) before it is handed back. Default
   * min(1000, leaseMs / 2); 0 hands back at once. */
  lingerMs?: number
  /** Shown as the lease owner. Default `host:pid:random`. */
  workerId?: string
  /** Errors of sessions and of the worker's own queries (they never throw out of the worker). */
  onError?: (error: unknown, sessionId?: string) => void
}

export interface Workers {
  readonly workerId: string
  /** Sessions this process serves now. */
  readonly active: ReadonlySet<string>
  readonly stats: { claimed: number; handedBack: number; abandoned: number; moved: number }
  /** Claims nothing more, lets running turns finish, hands every session back. */
  stop(): Promise<void>
}

export function runWorkers(opts: WorkerOptions): Workers {
  return new WorkerPool(opts)
}

class WorkerPool implements Workers, RunHost {
  readonly workerId: string
  readonly store: WorkerStore
  readonly backend: WorkerBackend
  readonly concurrency: number
  readonly leaseMs: number
  readonly pollMs: number
  readonly lingerMs: number
  readonly stats = { claimed: 0, handedBack: 0, abandoned: 0, moved: 0 }
  readonly runs = new Map<string, SessionRun>()
  /** Sessions that failed here: not claimed again by this process before the time. */
  readonly backoff = new Map<string, number>()
  stopping = false
  #claiming: Promise<void> | null = null
  #claimAgain = false
  #timer: NodeJS.Timeout | null = null
  #beatTimer: NodeJS.Timeout | null = null
  /** A claim at the expiry of another worker's lease that missed its heartbeat, and when it fires. */
  #staleTimer: NodeJS.Timeout | null = null
  #staleAt = Infinity
  #beating = false
  #stopped: Promise<void> | null = null
  /** When the fallback check last ran (checks.ts). */
  #checkedAt = 0
  /** Sessions notified (input / stop) while a claim statement was in flight and not served here
   * yet: the claim's flags, read in its snapshot, may predate them. */
  readonly #notedInput = new Set<string>()
  readonly #notedCancel = new Set<string>()

  constructor(readonly opts: WorkerOptions) {
    const kind = (opts?.store as { kind?: unknown } | undefined)?.kind
    if (!opts || typeof opts.agent !== 'function' || !opts.store || (kind !== 'postgres' && kind !== 'sqlite')) {
      throw new TurnlogError('INVALID_ARGUMENT', 'runWorkers needs { store: postgresStore(...) or sqliteStore(file), agent: (sessionId) => options }', { field: 'store' })
    }
    this.concurrency = intOption(opts.concurrency, 8, 'concurrency')
    this.leaseMs = intOption(opts.leaseMs, 10_000, 'leaseMs')
    const pollCap = kind === 'sqlite' ? 100 : 1000
    this.pollMs = intOption(opts.pollMs, Math.max(20, Math.min(pollCap, Math.floor(this.leaseMs / 2))), 'pollMs')
    this.lingerMs = opts.lingerMs === 0 ? 0 : intOption(opts.lingerMs, Math.min(1000, Math.floor(this.leaseMs / 2)), 'lingerMs')
    this.workerId = opts.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    this.backend = kind === 'sqlite'
      ? new SqliteBackend(opts.store as SqliteStore)
      : new PgBackend(opts.store as PostgresStore, this.pollMs, (err) => this.report(err))
    this.store = this.backend.store
    this.#timer = setInterval(() => this.#tick(), this.pollMs)
    this.#beatTimer = setInterval(() => void this.#beat(), Math.max(10, Math.floor(this.leaseMs / 3)))
    this.backend.listen({
      input: (id) => this.#onInput(id),
      cancel: (id) => this.#onCancel(id),
      connected: () => {
        if (this.stopping) return
        this.claimSoon()
        this.#check()
      },
    })
    this.claimSoon()
  }

  get active(): ReadonlySet<string> {
    return new Set(this.runs.keys())
  }

  report(err: unknown, sessionId?: string): void {
    try {
      this.opts.onError?.(err, sessionId)
    } catch {
      // an observer that throws changes nothing
    }
  }

  #tick(): void {
    if (this.stopping) return
    this.claimSoon()
    const quietMs = Math.max(this.pollMs, Math.floor(this.leaseMs / 2))
    if (!this.backend.listening || Date.now() - this.#checkedAt >= quietMs) this.#check()
  }

  /** The fallback check of every session served here, and of their children (checks.ts). */
  #check(): void {
    this.#checkedAt = Date.now()
    const children = [...this.runs.values()].flatMap((r) => r.childIds())
    const ids = [...this.runs.keys()]
    void checkWith(() => this.backend.check(ids, children), this.runs, (err) => this.report(err),
      children, (id) => this.#pokeChild(id))
  }

  /**
   * A child session is served inside its parent's run (never claimed on its own): input for it
   * (a decision recorded with `store.decide(childId, …)`) is handed to the run that opened it.
   * False when no run here serves that child.
   */
  #pokeChild(childId: string): boolean {
    for (const run of this.runs.values()) if (run.pokeChild(childId)) return true
    return false
  }

  /**
   * One statement extends the lease of every session served here (on the LISTEN connection, so
   * a pool busy with appends cannot delay it); a session it does not extend lost its lease: its
   * writer stops (`LEASE_LOST`) before it could append.
   */
  async #beat(): Promise<void> {
    if (this.#beating) return
    const live = [...this.runs.values()].filter((r) => r.writer.live)
    if (live.length === 0) return
    this.#beating = true
    try {
      const kept = await this.backend.beat(this.leaseMs, live.map((x) => ({ id: x.id, token: x.writer.token })))
      for (const run of live) if (!kept.has(run.id)) run.writer.leaseLost()
    } catch (err) {
      // a broken connection: the next beat, or the append's own check, decides
      this.report(err)
    } finally {
      this.#beating = false
    }
  }

  /** Runs a claim round now (coalesced: at most one at a time, one more if asked meanwhile). */
  claimSoon(): void {
    if (this.stopping) return
    if (this.#claiming) {
      this.#claimAgain = true
      return
    }
    this.#claiming = (async () => {
      do {
        this.#claimAgain = false
        await this.#claim().catch((err) => this.report(err))
      } while (this.#claimAgain && !this.stopping)
      this.#claiming = null
    })()
  }

  /**
   * Claims up to `room` sessions. Expired leases come first (`lease_owner IS NULL` sorts false
   * first): a session whose holder died was already accepted and is mid-answer, so it is taken
   * over within about two lease periods even when a backlog of never-started sessions is older
   * (round-12 B8: 7.1 s after a 2 s lease when it queued by `last_activity` alone). Then oldest
   * activity first.
   *
   * The claim also says, per session, whether a stop request is open or a decision is unlogged,
   * and returns its unmoved sent messages (read in the claim's snapshot), so a session starts
   * without a cancel, decisions or inbox read of its own (round 14: three statements fewer per
   * session; a claim of many sessions reads them all in its one statement). A NOTIFY for a session
   * that arrives while the claim is in flight may be for a commit after that snapshot: it is
   * noted, and such a session starts with both reads.
   */
  async #claim(): Promise<void> {
    const room = this.concurrency - this.runs.size
    if (room <= 0 || this.stopping) return
    const now = Date.now()
    for (const [id, t] of this.backoff) if (t <= now) this.backoff.delete(id)
    const skip = [...this.runs.keys(), ...this.backoff.keys()]
    this.#notedInput.clear()
    this.#notedCancel.clear()
    const { claimed, staleLeaseExpiresInMs: stale } = await this.backend.claim(this.workerId, this.leaseMs, room, skip)
    if (stale !== null && claimed.length < room) this.#claimAt(stale)
    for (const row of claimed) {
      this.stats.claimed++
      let writer: WorkerWriter
      try {
        writer = row.adopt()
      } catch (err) {
        this.report(err, row.id)
        this.backoff.set(row.id, Date.now() + this.leaseMs)
        continue
      }
      const noted = this.#notedInput.has(row.id)
      const run = new SessionRun(this, row.id, writer, {
        cancels: row.cancels || this.#notedCancel.has(row.id), decisions: row.decisions || noted,
        inbox: noted ? null : row.inbox,
        overdueMs: row.overdueMs,
      })
      this.runs.set(row.id, run)
      void run.run().finally(() => {
        this.runs.delete(row.id)
        this.claimSoon()
      })
    }
  }

  /**
   * Claims again right after a stale lease (another worker missed its heartbeat) runs out, instead
   * of at the next poll: takeover within one lease period (B8 measured a lease plus up to a poll,
   * median 2.5 s for a 2 s lease). One timer, the earliest wins; 25 ms after the expiry, so the
   * store's clock has passed it.
   */
  #claimAt(inMs: number): void {
    const at = Date.now() + inMs + 25
    if (this.stopping || at >= this.#staleAt) return
    if (this.#staleTimer !== null) clearTimeout(this.#staleTimer)
    this.#staleAt = at
    this.#staleTimer = setTimeout(() => {
      this.#staleTimer = null
      this.#staleAt = Infinity
      this.claimSoon()
    }, at - Date.now())
  }

  /** An early wake (NOTIFY) for input: the run that holds the session pulls, else a claim. */
  #onInput(id: string): void {
    if (this.stopping) return
    const run = this.runs.get(id)
    if (run) void run.pull()
    else if (this.#pokeChild(id)) return // a decision for a child served here (docs/spec/lifecycle.md §10)
    else {
      if (this.#claiming) this.#notedInput.add(id)
      this.claimSoon()
    }
  }

  /** An early wake for a stop request. */
  #onCancel(id: string): void {
    if (this.stopping) return
    const held = this.runs.get(id)
    if (held) void handleCancels(held)
    else if (this.#claiming) this.#notedCancel.add(id)
  }

  stop(): Promise<void> {
    if (!this.#stopped) {
      this.stopping = true
      this.#stopped = (async () => {
        if (this.#timer) clearInterval(this.#timer)
        if (this.#staleTimer) clearTimeout(this.#staleTimer)
        for (const r of this.runs.values()) r.wake()
        await this.#claiming?.catch(() => {})
        await Promise.all([...this.runs.values()].map((r) => r.done))
        if (this.#beatTimer) clearInterval(this.#beatTimer)
        this.backend.close()
      })()
    }
    return this.#stopped
  }
}

function intOption(v: unknown, dflt: number, field: string): number {
  if (v === undefined) return dflt
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
    throw new TurnlogError('INVALID_OPTION', `${field} must be a positive integer`, { field })
  }
  return v
}
