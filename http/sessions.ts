/**
 * The sessions a handler serves: one `SessionTail` per followed session, and (with `agent`) the
 * agents this process runs. An agent is created for a new session (`createAgent`) or resumed for
 * one that exists (`resumeAgent`: repair, then the owed work) on the first write, and kept until
 * the handler closes. Its durable events feed the session's tail: after every commit the tail is
 * given what `agent.flush()` has made durable, so a client never sees an event that a crash could
 * take back. With `workers` (PostgreSQL), nothing runs here: input goes through `store.send` and
 * the tail polls the store.
 */
import type { Agent, AgentOptions } from '../agent/types.js'
import { createAgent } from '../agent/agent.js'
import { TurnlogError } from '../events/errors.js'
import type { ApprovalDecision, InputAnswer } from '../events/index.js'
import { resumeAgent } from '../replay/resume.js'
import type { LogStore } from '../stores/types.js'
import { HttpError, unreadable } from './protocol.js'
import { SessionTail, storeTailSource, type SessionTailOptions } from './tail.js'

/** What an agent of a session is made of (the handler adds `store` and `sessionId`). */
export type SessionAgentOptions = Omit<AgentOptions, 'store' | 'storeWriter' | 'sessionId' | 'prefix'>

/** A store that takes durable input without a lease (PostgreSQL's `send`). */
export interface SendingStore extends LogStore {
  send(sessionId: string, message: { id?: string; content: unknown }, opts?: { target?: 'next-turn' | 'next-step' }): Promise<string>
  /** Records a stop that the worker holding the session carries out (PostgreSQL's `cancel`). */
  cancel?(sessionId: string, opts?: { cause?: { kind: 'user' } }): Promise<{ id: string; state: 'requested' | 'idle' }>
  /** The ids of sent messages no worker has moved into the log yet (PostgreSQL's `pendingSends`). */
  pendingSends?(sessionId: string): Promise<string[]>
  /** Records a person's decision on an approval for the worker that runs the session (PostgreSQL's `decide`). */
  decide?(sessionId: string, approvalId: string, decision: ApprovalDecision, opts?: { by?: { kind: 'user'; id?: string }; waitMs?: number }): Promise<unknown>
  /** Records a person's answer to an input round for the worker that runs the session (`store.answer`). */
  answer?(sessionId: string, requestId: string, answer: InputAnswer, opts?: { by?: { kind: 'user'; id?: string }; waitMs?: number }): Promise<unknown>
}

export class Sessions {
  private readonly tails = new Map<string, SessionTail>()
  private readonly agents = new Map<string, Promise<Agent>>()
  /** Agents with nothing to do (idle or parked), least recently used first: kept up to `idleAgents`. */
  private readonly idleAgents = new Map<string, Agent>()
  private closed = false

  constructor(
    private readonly store: LogStore,
    private readonly agentOptions: ((sessionId: string) => SessionAgentOptions | Promise<SessionAgentOptions>) | undefined,
    private readonly tailOptions: SessionTailOptions,
    private readonly maxIdleAgents = 16,
  ) {}

  /** What this process holds now: followed logs and running or idle agents (issue 38 item 25). */
  held(): { tails: number; agents: number } {
    return { tails: this.tails.size, agents: this.agents.size }
  }

  private makeTail(id: string): SessionTail {
    const t = new SessionTail(storeTailSource(this.store, id), this.tailOptions)
    t.onIdle = () => this.release(id)
    this.tails.set(id, t)
    return t
  }

  /**
   * A session's last reader left (its tail is idle): without an agent here, the tail goes; with
   * one, idle agents beyond `idleAgents` go (disposed: their logs are durable; the next message
   * resumes the session from its log).
   */
  release(id: string): void {
    const t = this.tails.get(id)
    if (this.agents.has(id)) {
      this.evict()
      return
    }
    if (t === undefined || !t.idle) return
    this.tails.delete(id)
    void t.close().catch(() => {})
  }

  private evict(): void {
    for (const [id, agent] of this.idleAgents) {
      if (this.idleAgents.size <= this.maxIdleAgents) return
      const t = this.tails.get(id)
      if ((t !== undefined && !t.idle) || this.busy.has(id)) continue // a reader still follows it: later
      this.idleAgents.delete(id)
      this.agents.delete(id)
      this.tails.delete(id)
      void agent.dispose().catch(() => {}).finally(() => { void t?.close().catch(() => {}) })
    }
  }

  /** The agent settled (idle, or parked for people): it may be released once nobody reads it. */
  private watch(id: string, agent: Agent): void {
    this.idleAgents.delete(id)
    void agent.whenSettled().then(() => {
      if (this.agents.get(id) === undefined || agent.status === 'running' || this.closed || this.busy.has(id)) return
      this.idleAgents.delete(id)
      this.idleAgents.set(id, agent)
      this.evict()
    }, () => {})
  }

  /** True when the session exists (in the store, or as an agent of this process not yet flushed). */
  async exists(id: string): Promise<boolean> {
    return this.agents.has(id) || (this.tails.get(id)?.events.length ?? 0) > 0 || await this.store.has(id)
  }

  /** The session's tail, read up to what is durable now. */
  async tail(id: string, hold?: (release: () => void) => void): Promise<SessionTail> {
    const t = this.tails.get(id) ?? this.makeTail(id)
    const release = t.hold()
    hold?.(release)
    try {
      await t.refresh()
    } catch (err) {
      release()
      throw err
    }
    // a corrupt log is a 500, never an empty session (issue 38 item 28)
    if (t.failed) { release(); throw unreadable(t.failed) }
    if (hold === undefined) release()
    return t
  }

  /**
   * The ids of input acknowledged before this call that is not in `tail` yet, so a resume that
   * sees no turn must wait for the one that will answer it. With workers: the store's sent
   * messages that no worker has moved into the log (`pendingSends`; read after the tail, so a
   * message it does not list was moved and a refresh shows it). In this process: what the agent
   * accepted but had not made durable is flushed and handed to the tail first (then the tail shows
   * it), so none.
   */
  async unloggedInput(id: string, tail: SessionTail): Promise<string[]> {
    const running = this.agents.get(id)
    if (running) {
      const agent = await running.catch(() => null)
      if (!agent) return []
      const n = agent.events.length
      // a failed flush (the agent halted) shows nothing that is not durable
      if (await agent.flush().then(() => true, () => false)) tail.feed(agent.events, n)
      return []
    }
    if (this.agentOptions) return []
    const store = this.store as SendingStore
    if (typeof store.pendingSends !== 'function') return []
    return store.pendingSends(id)
  }

  /** The running agent of a session of this process, if any. */
  running(id: string): Promise<Agent> | undefined {
    return this.agents.get(id)
  }

  /** Sends a prompt: to this process's agent (created or resumed on demand), or through `store.send`. */
  async send(id: string, message: { id: string; content: Array<{ type: 'text'; text: string }> }): Promise<void> {
    if (this.closed) throw new TurnlogError('AGENT_DISPOSED', 'the handler is closed')
    if (!this.agentOptions) {
      await (this.store as SendingStore).send(id, { id: message.id, content: message.content })
      return
    }
    this.busy.set(id, (this.busy.get(id) ?? 0) + 1)
    try {
      this.idleAgents.delete(id)
      const agent = await this.agent(id)
      agent.followup({ id: message.id, content: message.content })
      this.watch(id, agent)
    } finally {
      this.unbusy(id)
    }
  }

  /** Sessions a request is giving input to now: their agent is not released meanwhile. */
  private readonly busy = new Map<string, number>()
  private unbusy(id: string): void {
    const n = (this.busy.get(id) ?? 1) - 1
    if (n <= 0) this.busy.delete(id)
    else this.busy.set(id, n)
  }

  /**
   * A person's decision on an approval: through this process's agent (resumed on demand: a parked
   * session restores parked), or `store.decide` (durable when it resolves; the worker logs it).
   */
  async decide(id: string, approvalId: string, decision: ApprovalDecision): Promise<void> {
    if (this.closed) throw new TurnlogError('AGENT_DISPOSED', 'the handler is closed')
    if (!this.agentOptions) {
      const store = this.store as SendingStore
      if (typeof store.decide !== 'function') throw new HttpError(501, 'NOT_SUPPORTED', 'this store cannot record a decision for its workers (it has no decide())')
      await store.decide(id, approvalId, decision, { by: { kind: 'user' }, waitMs: 0 })
      return
    }
    this.busy.set(id, (this.busy.get(id) ?? 0) + 1)
    try {
      this.idleAgents.delete(id)
      const agent = await this.agent(id)
      await agent.decide(approvalId, decision, { by: { kind: 'user' } })
      this.watch(id, agent)
    } finally {
      this.unbusy(id)
    }
  }

  /**
   * A person's (or the client's) answer to an input round: through this process's agent (resumed
   * on demand: a parked session restores parked), or `store.answer` (durable when it resolves).
   * Resolves once the answer is durable; refusals are the agent's or store's coded errors.
   */
  async answer(id: string, requestId: string, answer: InputAnswer): Promise<void> {
    if (this.closed) throw new TurnlogError('AGENT_DISPOSED', 'the handler is closed')
    if (!this.agentOptions) {
      const store = this.store as SendingStore
      if (typeof store.answer !== 'function') throw new HttpError(501, 'NOT_SUPPORTED', 'this store cannot record an answer for its workers (it has no answer())')
      await store.answer(id, requestId, answer, { by: { kind: 'user' }, waitMs: 0 })
      return
    }
    this.busy.set(id, (this.busy.get(id) ?? 0) + 1)
    try {
      this.idleAgents.delete(id)
      const agent = await this.agent(id)
      await agent.answer(requestId, answer, { by: { kind: 'user' } })
      this.watch(id, agent)
    } finally {
      this.unbusy(id)
    }
  }

  private agent(id: string): Promise<Agent> {
    let p = this.agents.get(id)
    if (!p) {
      p = this.start(id)
      this.agents.set(id, p)
      // a failed start is not cached: the next request tries again
      p.catch(() => { if (this.agents.get(id) === p) this.agents.delete(id) })
    }
    return p
  }

  private async start(id: string): Promise<Agent> {
    const options = await this.agentOptions!(id)
    const exists = await this.store.has(id)
    let agent: Agent
    if (exists) {
      const r = await this.store.open(id, 'read')
      const length = r.length
      await r.close()
      agent = length > 0
        ? await resumeAgent({ ...options, store: this.store, sessionId: id })
        : createAgent({ ...options, store: this.store, sessionId: id })
    } else {
      agent = createAgent({ ...options, store: this.store, sessionId: id })
    }
    const tail = this.tails.get(id) ?? this.makeTail(id)
    this.feed(agent, tail)
    return agent
  }

  /** Hands the agent's durable events to the tail after each flush (one flush in flight at a time). */
  private feed(agent: Agent, tail: SessionTail): void {
    let flushing = false
    let stopped = false
    const pump = (): void => {
      if (flushing || stopped) return
      flushing = true
      const n = agent.events.length
      agent.flush().then(() => {
        flushing = false
        tail.feed(agent.events, n)
        if (agent.events.length > n) pump()
      }, () => {
        // the store failed: the agent halted (PERSISTENCE_FAILED); the tail reads the store again
        stopped = true
        tail.unfeed()
      })
    }
    agent.subscribe(() => pump())
    pump()
  }

  async close(): Promise<void> {
    this.closed = true
    const agents = await Promise.allSettled([...this.agents.values()])
    for (const a of agents) if (a.status === 'fulfilled') await a.value.dispose().catch(() => {}) // a halted agent rejects with its persistence failure, already reported as agent/error
    for (const t of this.tails.values()) await t.close()
    this.tails.clear()
    this.agents.clear()
    this.idleAgents.clear()
  }
}
