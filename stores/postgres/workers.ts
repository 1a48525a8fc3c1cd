/**
 * `runWorkers({ store, concurrency, leaseMs, agent })`: serve the sessions of a postgres store
 * from any number of processes (api.md "Across machines"; docs/ARCHITECTURE.md "Decisions:
 * PostgreSQL store and workers").
 *
 * - **Claim**: one statement takes up to `concurrency - active` sessions that have sent input and
 *   no holder, or a lease that expired (its holder died or stalled): `FOR UPDATE SKIP LOCKED`
 *   (two workers never wait on, or both take, one session), bumping each token.
 * - **Serve**: the session is repaired and resumed under the new lease (`resumeAgent`: closers
 *   for what the last holder left open; lifecycle §8: the interrupted turn is re-run, so a message
 *   a dead worker had accepted gets its answer; pending prompts run), then sent messages are moved into
 *   the agent in send order (`agent.send` with the message's id; the append that logs the splice
 *   marks them moved in the same transaction). The writer heartbeats the lease.
 * - **Hand back**: when the agent is idle, everything is durable and no sent input waits, the
 *   lease is released (conditionally on `pending = 0`, so input sent meanwhile is never stranded).
 * - **Failure**: a store failure halts the agent (`PERSISTENCE_FAILED`, inbox kept); the worker
 *   expires its lease at once so a worker (maybe itself, after `leaseMs`) takes the session over.
 * - **Wake-ups**: LISTEN `turnlog_input` only wakes early (NOTIFY is not durable); every
 *   `pollMs` the worker claims and checks its sessions' inboxes anyway.
 * - `stop()`: claims nothing more, lets every running turn finish, then hands every session back.
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import pg from 'pg'
import type { Agent } from '../../agent/types.js'
import { TurnlogError } from '../../events/errors.js'
import { resumeAgent, type ResumeOptions } from '../../replay/resume.js'
import type { LogStore, LogWriter, OpenMode } from '../types.js'
import { INPUT_CHANNEL } from './schema.js'
import type { PostgresStore } from './store.js'
import type { PgWriter } from './writer.js'

/** What a worker passes to `resumeAgent` for a session: the agent's options but its store. */
export type WorkerAgentOptions = Omit<ResumeOptions, 'store' | 'sessionId' | 'log' | 'storeWriter' | 'prefix'>

export interface WorkerOptions {
  store: PostgresStore
  /** The options of each session's agent (model, tools, hooks, …). May be async. */
  agent: (sessionId: string) => WorkerAgentOptions | Promise<WorkerAgentOptions>
  /** Sessions served at once by this process. Default 8. */
  concurrency?: number
  /** Lease length; heartbeats every third of it. A dead worker's sessions are taken over within
   * about two lease periods. Default 10 000 ms. */
  leaseMs?: number
  /** Fallback polling period (claims, inbox checks). Default min(1000, leaseMs / 2). */
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

class WorkerPool implements Workers {
  readonly workerId: string
  readonly store: PostgresStore
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
  #beating = false
  #listener: pg.Client | pg.PoolClient | null = null
  #listenerRetry: NodeJS.Timeout | null = null
  #stopped: Promise<void> | null = null

  constructor(readonly opts: WorkerOptions) {
    if (!opts || typeof opts.agent !== 'function' || !opts.store || opts.store.kind !== 'postgres') {
      throw new TurnlogError('INVALID_ARGUMENT', 'runWorkers needs { store: postgresStore(...), agent: (sessionId) => options }', { field: 'store' })
    }
    this.store = opts.store
    this.concurrency = intOption(opts.concurrency, 8, 'concurrency')
    this.leaseMs = intOption(opts.leaseMs, 10_000, 'leaseMs')
    this.pollMs = intOption(opts.pollMs, Math.max(20, Math.min(1000, Math.floor(this.leaseMs / 2))), 'pollMs')
    this.lingerMs = opts.lingerMs === 0 ? 0 : intOption(opts.lingerMs, Math.min(1000, Math.floor(this.leaseMs / 2)), 'lingerMs')
    this.workerId = opts.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    this.#timer = setInterval(() => this.#tick(), this.pollMs)
    this.#beatTimer = setInterval(() => void this.#beat(), Math.max(10, Math.floor(this.leaseMs / 3)))
    void this.#listen()
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
    void this.#checkInboxes()
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
      const q = this.#listener ?? this.store.pool
      const r = await q.query(
        `UPDATE turnlog_sessions s SET lease_until = clock_timestamp() + $1 * interval '1 millisecond'
         FROM unnest($2::text[], $3::bigint[]) AS h(id, token)
         WHERE s.id = h.id AND s.token = h.token AND s.lease_owner IS NOT NULL AND s.lease_until > clock_timestamp()
         RETURNING s.id`,
        [this.leaseMs, live.map((x) => x.id), live.map((x) => x.writer.token)],
      )
      const kept = new Set((r.rows as Array<{ id: string }>).map((x) => x.id))
      for (const run of live) if (!kept.has(run.id)) run.writer.leaseLost()
    } catch (err) {
      // a broken connection: the next beat, or the append's own check, decides
      this.report(err)
    } finally {
      this.#beating = false
    }
  }

  /** One query for every session served here: which have input waiting. */
  async #checkInboxes(): Promise<void> {
    const ids = [...this.runs.keys()]
    if (ids.length === 0) return
    try {
      const r = await this.store.pool.query(
        'SELECT DISTINCT session_id FROM turnlog_inbox WHERE session_id = ANY($1) AND moved_seq IS NULL', [ids],
      )
      for (const row of r.rows as Array<{ session_id: string }>) void this.runs.get(row.session_id)?.pull()
    } catch (err) {
      this.report(err)
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

  async #claim(): Promise<void> {
    const room = this.concurrency - this.runs.size
    if (room <= 0 || this.stopping) return
    const now = Date.now()
    for (const [id, t] of this.backoff) if (t <= now) this.backoff.delete(id)
    const skip = [...this.runs.keys(), ...this.backoff.keys()]
    const r = await this.store.pool.query(
      `UPDATE turnlog_sessions s SET token = s.token + 1, lease_owner = $1,
         lease_until = clock_timestamp() + $2 * interval '1 millisecond'
       FROM (SELECT id FROM turnlog_sessions
             WHERE ((lease_owner IS NULL AND pending > 0)
                 OR (lease_owner IS NOT NULL AND lease_until <= clock_timestamp()))
               AND NOT (id = ANY($4))
             ORDER BY last_activity LIMIT $3 FOR UPDATE SKIP LOCKED) AS pick
       WHERE s.id = pick.id
       RETURNING s.id, s.token, s.length, s.header::text AS header`,
      [this.workerId, this.leaseMs, room, skip],
    )
    for (const row of r.rows as Array<{ id: string; token: string; length: number; header: string }>) {
      this.stats.claimed++
      let writer: PgWriter
      try {
        writer = this.store.adopt(row.id, Number(row.token), row.length, row.header, this.leaseMs, false)
      } catch (err) {
        this.report(err, row.id)
        this.backoff.set(row.id, Date.now() + this.leaseMs)
        continue
      }
      const run = new SessionRun(this, row.id, writer)
      this.runs.set(row.id, run)
      void run.run().finally(() => {
        this.runs.delete(row.id)
        this.claimSoon()
      })
    }
  }

  async #listen(): Promise<void> {
    if (this.stopping) return
    let c: pg.Client | pg.PoolClient
    try {
      if (this.store.connectionString) {
        const client = new pg.Client({ connectionString: this.store.connectionString })
        await client.connect()
        c = client
      } else {
        c = await this.store.pool.connect()
      }
    } catch (err) {
      this.report(err)
      this.#retryListen()
      return
    }
    const lost = () => {
      if (this.#listener !== c) return
      this.#listener = null
      this.#retryListen()
    }
    c.on('error', lost)
    c.on('end', lost)
    c.on('notification', (msg) => {
      if (this.stopping || msg.channel !== INPUT_CHANNEL || !msg.payload) return
      const run = this.runs.get(msg.payload)
      if (run) void run.pull()
      else this.claimSoon()
    })
    try {
      await c.query(`LISTEN ${INPUT_CHANNEL}`)
    } catch (err) {
      this.report(err)
      endClient(c)
      this.#retryListen()
      return
    }
    if (this.stopping) {
      endClient(c)
      return
    }
    this.#listener = c
    // input sent while we were not listening: catch up now
    this.claimSoon()
  }

  #retryListen(): void {
    if (this.stopping || this.#listenerRetry) return
    this.#listenerRetry = setTimeout(() => {
      this.#listenerRetry = null
      void this.#listen()
    }, this.pollMs)
  }

  stop(): Promise<void> {
    if (!this.#stopped) {
      this.stopping = true
      this.#stopped = (async () => {
        if (this.#timer) clearInterval(this.#timer)
        for (const r of this.runs.values()) r.wake()
        if (this.#listenerRetry) clearTimeout(this.#listenerRetry)
        await this.#claiming?.catch(() => {})
        await Promise.all([...this.runs.values()].map((r) => r.done))
        if (this.#beatTimer) clearInterval(this.#beatTimer)
        const l = this.#listener
        this.#listener = null
        if (l) endClient(l)
      })()
    }
    return this.#stopped
  }
}

function endClient(c: pg.Client | pg.PoolClient): void {
  if ('release' in c && typeof c.release === 'function') c.release(true)
  else void (c as pg.Client).end().catch(() => {})
}

/** One claimed session: resume it, feed it sent input, hand it back. */
class SessionRun {
  agent: Agent | null = null
  done: Promise<void> = Promise.resolve()
  /** Sent message ids given to the agent (never given twice by this holder). */
  readonly handed = new Set<string>()
  #chain: Promise<unknown> = Promise.resolve()
  #newInput = false
  #closing = false
  #wakeIdle: (() => void) | null = null
  failed = false

  constructor(readonly pool: WorkerPool, readonly id: string, readonly writer: PgWriter) {}

  run(): Promise<void> {
    this.done = this.#run()
    return this.done
  }

  async #run(): Promise<void> {
    const { pool, id, writer } = this
    try {
      const options = await pool.opts.agent(id)
      // autoStart false: the error listener is in place before the resume turn (lifecycle §8) opens
      const agent = await resumeAgent({ ...options, store: leasedStore(pool.store, writer), sessionId: id, autoStart: false })
      this.agent = agent
      agent.on('agent/error', (e) => {
        if (e?.where === 'store') this.failed = true
        pool.report(e?.error, id)
      })
      agent.wake()
      for (;;) {
        this.#newInput = false
        await this.pull()
        await agent.whenIdle()
        try {
          await agent.flush()
        } catch {
          this.failed = true
        }
        if (this.failed || writer.failed) {
          this.failed = true
          break
        }
        // linger: more input soon is served by this agent instead of a fresh resume elsewhere
        if (!this.#newInput && !pool.stopping && pool.lingerMs > 0) await this.#idle(pool.lingerMs)
        if (this.#newInput && !pool.stopping) continue
        const outcome = await this.#serial(async () => {
          if (this.#newInput) return 'again'
          if (pool.stopping) {
            this.#closing = true
            return 'stop'
          }
          if (await writer.handBack()) {
            this.#closing = true
            return 'handed'
          }
          return 'busy'
        })
        if (outcome === 'stop') break
        if (outcome === 'handed') {
          pool.stats.handedBack++
          break
        }
        // input is waiting that the next pull sees, or the hand-back's query failed: not a busy loop
        if (outcome === 'busy') await sleep(Math.min(pool.pollMs, 50))
      }
    } catch (err) {
      this.failed = true
      pool.report(err, id)
    } finally {
      this.#closing = true
      if (this.failed) {
        pool.stats.abandoned++
        pool.backoff.set(id, Date.now() + pool.leaseMs)
        await writer.abandon()
      }
      await this.agent?.dispose().catch((err: unknown) => pool.report(err, id))
      await writer.close()
    }
  }

  /** Resolves after `ms`, or earlier on new input or stop. */
  #idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms)
      function done() {
        clearTimeout(t)
        resolve()
      }
      this.#wakeIdle = () => {
        this.#wakeIdle = null
        done()
      }
    })
  }

  /** Ends a linger early (stop, new input). */
  wake(): void {
    this.#wakeIdle?.()
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.#chain.then(fn)
    this.#chain = p.catch(() => {})
    return p
  }

  /** Moves the session's waiting sent messages into the agent, in send order. */
  pull(): Promise<void> {
    return this.#serial(async () => {
      const agent = this.agent
      if (!agent || this.#closing || this.failed || this.pool.stopping) return
      let rows: Array<{ message_id: string; target: string; wake: boolean; message: string }>
      try {
        const r = await this.pool.store.pool.query(
          'SELECT message_id, target, wake, message::text AS message FROM turnlog_inbox WHERE session_id = $1 AND moved_seq IS NULL ORDER BY n',
          [this.id],
        )
        rows = r.rows as typeof rows
      } catch (err) {
        this.pool.report(err, this.id)
        return
      }
      for (const row of rows) {
        if (this.handed.has(row.message_id) || this.#closing || this.failed) continue
        let m: { id: string; content: never; source?: never }
        try {
          m = JSON.parse(row.message) as typeof m
        } catch (err) {
          this.pool.report(new TurnlogError('INVALID_MESSAGE', 'a sent message is not JSON', { sessionId: this.id, info: { messageId: row.message_id } }), this.id)
          continue
        }
        const target = row.target === 'next-step' ? 'next-step' : 'next-turn'
        this.handed.add(row.message_id)
        this.writer.expectMove(row.message_id)
        try {
          agent.send({ id: row.message_id, content: m.content, ...(m.source ? { source: m.source } : {}) }, target, row.wake !== false)
          this.#newInput = true
          this.pool.stats.moved++
          this.wake()
        } catch (err) {
          // refused by the agent (halted, or a message it cannot take): the row stays unmoved
          this.pool.report(err, this.id)
          if (TurnlogError.is(err, 'PERSISTENCE_FAILED') || TurnlogError.is(err, 'AGENT_DISPOSED')) this.failed = true
        }
      }
    })
  }
}

/** The store as `resumeAgent` sees it: its one `open(id, 'write')` gets the claimed lease's writer. */
function leasedStore(store: PostgresStore, writer: LogWriter): LogStore {
  let used = false
  const open = (id: string, mode: OpenMode, o?: object) => {
    if (mode === 'write') {
      if (used || id !== writer.sessionId) {
        return Promise.reject(new TurnlogError('SESSION_OWNED', 'the worker holds this session\'s only write handle', { sessionId: id }))
      }
      used = true
      return Promise.resolve(writer)
    }
    return store.open(id, mode, o)
  }
  return {
    kind: store.kind,
    create: (id, h) => store.create(id, h),
    open: open as LogStore['open'],
    list: () => store.list(),
    has: (id) => store.has(id),
  }
}

function intOption(v: unknown, dflt: number, field: string): number {
  if (v === undefined) return dflt
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
    throw new TurnlogError('INVALID_OPTION', `${field} must be a positive integer`, { field })
  }
  return v
}
