/**
 * One session a worker claimed (pool.ts): resume it under the claimed lease, feed it the sent
 * input in send order, and hand it back when it is idle, durable and nothing sent waits; on a
 * failure, expire the lease at once so a worker takes the session over (see pool.ts for the
 * whole protocol).
 */
import type { Agent } from '../agent/types.js'
import { TurnlogError } from '../events/errors.js'
import { resumeAgent, type ResumeOptions } from '../replay/resume.js'
import type { LogStore, LogWriter, OpenMode } from '../stores/types.js'
import type { InboxRow, WorkerBackend, WorkerStore, WorkerWriter } from './backend.js'
import { handleCancels } from './cancel-worker.js'
import { pullDecisions } from '../stores/postgres/pull-decisions.js'

/** What a worker passes to `resumeAgent` for a session: the agent's options but its store. */
export type WorkerAgentOptions = Omit<ResumeOptions, 'store' | 'sessionId' | 'log' | 'storeWriter' | 'prefix'>

export type { InboxRow } from './backend.js'

/** What the claim read for the start of a run (pool.ts). */
export interface FirstRead {
  cancels: boolean
  decisions: boolean
  inbox: InboxRow[] | null
  /** How long ago (ms, the database's clock) the session's `due_at` passed when it was claimed;
   * null when it was not due. Sets the agent's time floor (`logClock`). */
  overdueMs?: number | null
}

/** What a session run needs of its worker pool (`runWorkers`' pool provides it). */
export interface RunHost {
  readonly store: WorkerStore
  /** The store's statements (pg-backend.ts, sqlite-backend.ts). */
  readonly backend: WorkerBackend
  readonly opts: { agent: (sessionId: string) => WorkerAgentOptions | Promise<WorkerAgentOptions> }
  readonly leaseMs: number
  readonly pollMs: number
  readonly lingerMs: number
  readonly stats: { claimed: number; handedBack: number; abandoned: number; moved: number }
  /** Sessions that failed here: not claimed again by this process before the time. */
  readonly backoff: Map<string, number>
  /** True once `stop()` was called: claim nothing, hand back. */
  readonly stopping: boolean
  /** Reports an error to `onError` (never throws). */
  report(err: unknown, sessionId?: string): void
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** One claimed session: resume it, feed it sent input, hand it back. */
export class SessionRun {
  agent: Agent | null = null
  done: Promise<void> = Promise.resolve()
  /** Sent message ids given to the agent (never given twice by this holder). */
  readonly handed = new Set<string>()
  #chain: Promise<unknown> = Promise.resolve()
  #newInput = false
  #closing = false
  #wakeIdle: (() => void) | null = null
  failed = false
  /**
   * The write handles of the children this run's subagent calls opened (docs/spec/lifecycle.md §10): a child is
   * never claimed on its own, so a decision recorded for it elsewhere reaches it through this run
   * (pool.ts routes the NOTIFY and the fallback check here). Closed ones are pruned when read.
   */
  readonly #children = new Map<string, WorkerWriter>()

  /**
   * @param first what the claim saw (pool.ts): whether a stop request is open, whether a
   *   decision is unlogged, and the unmoved sent messages (null: read them); the start uses it
   *   instead of reading again (a NOTIFY or the fallback check brings what was committed later;
   *   one that meets the run before its agent exists makes the start read everything).
   */
  constructor(readonly pool: RunHost, readonly id: string, readonly writer: WorkerWriter,
    readonly first: FirstRead = { cancels: true, decisions: true, inbox: null }) {}

  run(): Promise<void> {
    this.done = this.#run()
    return this.done
  }

  async #run(): Promise<void> {
    const { pool, id, writer } = this
    try {
      const options = await logClock(await pool.opts.agent(id), writer, this.first.overdueMs ?? null, (err) => pool.report(err, id))
      // The error listener is installed with the agent (creation-time hooks), before resume's plan
      // runs: RESUME_LIMIT and a store failure while repairing reach onError (docs/spec/lifecycle.md §8).
      const onError = (e: { error?: unknown; where?: string } | undefined) => {
        if (e?.where === 'store') this.failed = true
        pool.report(e?.error, id)
      }
      const agent = await resumeAgent({
        ...options, hooks: withListener(options.hooks, 'agent/error', onError),
        store: leasedStore(pool.store, writer, (child) => this.#children.set(child.sessionId, child)), sessionId: id, autoStart: false,
      })
      this.agent = agent
      agent.wake()
      // stops recorded while nobody (or a dead worker) held the session (cancel-worker.ts)
      if (this.first.cancels) void handleCancels(this)
      let initial = true
      for (;;) {
        await this.pull(initial)
        initial = false
        // what this pull moved is the agent's now (whenSettled waits for it): only input that
        // arrives after it (a NOTIFY's or the poll's pull) is a reason to go round again. Going
        // round after every pull that moved something cost a second inbox + decisions read per
        // session (round 14, B8); input sent after this pull and not pulled yet is caught by the
        // hand-back instead, which releases only where `pending = 0`.
        this.#newInput = false
        // parked (docs/spec/lifecycle.md §9): only decisions are owed; the lease is handed back below (a
        // decision or a due expiry makes the session claimable again)
        await agent.whenSettled()
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
        // parked only because a running child is (docs/spec/lifecycle.md §10): the child runs in this process,
        // so the lease is kept (handing it back would dispose the parent and cancel the child)
        if ((agent as { parkedByChild?: boolean }).parkedByChild === true && !pool.stopping) {
          await Promise.race([agent.whenIdle(), sleep(pool.pollMs)])
          continue
        }
        // a restored parked step decides its passed expiries on a timer of 0 ms: let it fire first
        if (agent.status === 'parked') await sleep(0)
        const outcome = await this.#serial(async () => {
          if (this.#newInput || agent.status === 'running') return 'again'
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

  /** The ids of the live children this run serves (their write handles are open here). */
  childIds(): string[] {
    const out: string[] = []
    for (const [cid, w] of this.#children) {
      if (w.live) out.push(cid)
      else this.#children.delete(cid)
    }
    return out
  }

  /**
   * Input for a child this run serves (a NOTIFY or the fallback check: a decision recorded with
   * `store.decide(childId, …)`): its write handle's decision channel reads it now, as its own
   * parked-owner poll would (stores/postgres/decision-channel.ts). False when no live child of this
   * run has that id.
   */
  pokeChild(childId: string): boolean {
    const w = this.#children.get(childId)
    if (w === undefined) return false
    if (!w.live) {
      this.#children.delete(childId)
      return false
    }
    const channel = w.decisions as { poll?: () => void } | undefined
    try {
      channel?.poll?.()
    } catch (err) {
      this.pool.report(err, childId) // never thrown by the store's channel; a report, not a crash
    }
    return true
  }

  /** Ends a linger early (stop, new input). */
  wake(): void {
    this.#wakeIdle?.()
  }

  /** Runs `fn` in the serial chain (the cancel handler: no pull moves input meanwhile). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#serial(fn)
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.#chain.then(fn)
    this.#chain = p.catch(() => {})
    return p
  }

  /** Moves the session's waiting sent messages into the agent, in send order, and hands it the
   * decisions recorded elsewhere. `initial`: the start's pull, which uses what the claim read. */
  pull(initial = false): Promise<void> {
    return this.#serial(async () => {
      const agent = this.agent
      if (!agent && !this.#closing) {
        // still resuming: the start's own pull reads everything
        this.first.decisions = true
        this.first.inbox = null
      }
      if (!agent || this.#closing || this.failed || this.pool.stopping) return
      if ((!initial || this.first.decisions) && await pullDecisions(() => this.pool.backend.decisionRows(this.id), agent, (err) => this.pool.report(err, this.id)) > 0) {
        this.#newInput = true
        this.wake()
      }
      let rows: InboxRow[]
      if (initial && this.first.inbox) rows = this.first.inbox
      else {
        try {
          rows = await this.pool.backend.inbox(this.id)
        } catch (err) {
          this.pool.report(err, this.id)
          return
        }
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

/**
 * The agent's clock for a session claimed because its due time passed: never behind the log's
 * own time base as the database measured it. `due_at` was stored as the database's clock plus the
 * delay from the writing agent's clock (decisions.ts "Clock skew"), so when the claim found it
 * passed `overdueMs` ago, the log's time base stood at least at the session's next due time (in
 * that time base: the earliest open expiry or wakeup, folded by the writer) plus `overdueMs`. A
 * worker whose own clock is behind that would find nothing due, hand the session back still due,
 * and claim it again at once: a claim loop until its clock caught up. So its clock is moved
 * forward by the difference for this run (the events it stamps then continue the log's time
 * base); a clock that is not behind is left as it is. The fold is the writer's own (its trackers
 * keep it for the batch that logs the expiry: no extra query over what that batch needs).
 */
async function logClock(options: WorkerAgentOptions, writer: WorkerWriter, overdueMs: number | null,
  onError: (err: unknown) => void): Promise<WorkerAgentOptions> {
  if (overdueMs === null || !Number.isFinite(overdueMs)) return options
  const base = options.clock ?? Date.now
  let offset: number
  try {
    const due = await writer.nextDue()
    if (due === null) return options
    const own = base()
    if (typeof own !== 'number' || !Number.isFinite(own)) return options
    offset = due + Math.max(0, overdueMs) - own
  } catch (err) {
    // the fold failed (a read) or the app's clock threw: the agent keeps its own clock
    onError(err)
    return options
  }
  if (!(offset > 0)) return options
  return { ...options, clock: () => base() + offset }
}

/** The app's creation-time hooks plus one more listener (an app's own listeners of `name` run first). */
function withListener(hooks: WorkerAgentOptions['hooks'], name: string, listener: unknown): WorkerAgentOptions['hooks'] {
  // typed loosely on purpose: spreading the full HookMap union is too complex for the compiler
  const all: Record<string, unknown> = { ...(hooks as Record<string, unknown> | undefined) }
  const mine = all[name]
  const list = mine === undefined ? [] : Array.isArray(mine) ? [...(mine as unknown[])] : [mine]
  all[name] = [...list, listener]
  return all as WorkerAgentOptions['hooks']
}

/**
 * The store as `resumeAgent` sees it: its one `open(id, 'write')` gets the claimed lease's writer;
 * any other session's write handle is a child's (`onChild` is told of each one opened).
 */
function leasedStore(store: WorkerStore, writer: LogWriter, onChild: (w: WorkerWriter) => void): LogStore {
  let used = false
  const open = async (id: string, mode: OpenMode, o?: object): Promise<unknown> => {
    if (mode === 'write' && id !== writer.sessionId) {
      const child = await openChild(store, id, o)
      onChild(child)
      return child
    }
    if (mode === 'write') {
      if (used) {
        throw new TurnlogError('SESSION_OWNED', 'the worker holds this session\'s only write handle', { sessionId: id })
      }
      used = true
      return writer
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

/**
 * A child session's write handle (docs/spec/lifecycle.md §10): a subagent call of the served session runs its
 * child in this process, under the child's own lease in the same store. A child re-attached after
 * a worker died may still be leased by the dead process for up to one lease period: that lease
 * runs out (nobody renews it), so `SESSION_OWNED` is retried until it has, within `leaseMs` and a
 * second. A live owner past that stays `SESSION_OWNED` (the call's error).
 */
async function openChild(store: WorkerStore, id: string, o?: object): Promise<WorkerWriter> {
  const deadline = Date.now() + store.leaseMs + 1000
  for (;;) {
    try {
      return await store.open(id, 'write', o)
    } catch (err) {
      if (!TurnlogError.is(err, 'SESSION_OWNED') || Date.now() >= deadline) throw err
      await sleep(Math.min(200, Math.max(10, deadline - Date.now())))
    }
  }
}
