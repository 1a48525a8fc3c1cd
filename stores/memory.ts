/**
 * `memoryStore()`: the store contract in memory (the agent's default, tests, the fuzzers). Same
 * rules as the durable stores: one writer per session within the process (`SESSION_OWNED`), a
 * fencing token per ownership, `expectedSeq` (`SEQ_CONFLICT`), validated events. Events are kept as
 * frozen JSON copies, so a caller's later mutation cannot change the log (P3: what goes in comes
 * back out, deep-equal). Appends resolve on the next microtask (nothing to fsync), in order.
 */
import { answerInStore, type StoreAnswerOptions, type StoreAnswered } from './answer.js'
import type { LogEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import { LogHeader, JSONL_FORMAT } from '../events/jsonl.js'
import { deepFreeze } from '../events/lossless.js'
import { defaultRegistry, type EventRegistry } from '../events/registry.js'
import { checkBatch } from './batch.js'
import { assertSessionId } from './ids.js'
import type {
  AppendOptions, AppendResult, HeaderInit, LogReader, LogStore, LogWriter, OpenMode, OpenWriteOptions,
} from './types.js'

export interface MemoryStoreOptions {
  registry?: EventRegistry
  /** Epoch ms for `createdAt`. Default `Date.now`. */
  clock?: () => number
}

interface Entry {
  header: LogHeader
  events: LogEvent[]
  /** Last fencing token handed out. */
  token: number
  /** The open writer, if any. */
  owner: MemoryWriter | null
}

export function memoryStore(opts: MemoryStoreOptions = {}): LogStore & { answer(id: string, requestId: string, answer: unknown, opts?: StoreAnswerOptions): Promise<StoreAnswered> } {
  return new MemoryStore(opts)
}

class MemoryStore implements LogStore {
  readonly kind = 'memory'
  readonly #sessions = new Map<string, Entry>()
  readonly #registry: EventRegistry
  readonly #clock: () => number

  constructor(opts: MemoryStoreOptions) {
    this.#registry = opts.registry ?? defaultRegistry
    this.#clock = opts.clock ?? Date.now
  }

  /**
   * Answers an open input round of a session no agent owns now (docs/spec/lifecycle.md §11;
   * stores/answer.ts). `SESSION_OWNED` while an agent owns it: answer through that agent.
   */
  answer(id: string, requestId: string, answer: unknown, opts: StoreAnswerOptions = {}): Promise<StoreAnswered> {
    return answerInStore(this, id, requestId, answer, { clock: this.#clock, ...opts })
  }

  async create(id: string, init: HeaderInit = {}): Promise<LogHeader> {
    assertSessionId(id)
    const header = makeHeader(id, init, this.#clock)
    if (this.#sessions.has(id)) throw new TurnlogError('SESSION_EXISTS', `session ${JSON.stringify(id)} exists already`, { sessionId: id })
    this.#sessions.set(id, { header, events: [], token: 0, owner: null })
    return header
  }

  open(id: string, mode: 'read'): Promise<LogReader>
  open(id: string, mode: 'write', opts?: OpenWriteOptions): Promise<LogWriter>
  open(id: string, mode: OpenMode, opts?: OpenWriteOptions): Promise<LogReader | LogWriter>
  async open(id: string, mode: OpenMode, _opts?: OpenWriteOptions): Promise<LogReader | LogWriter> {
    assertSessionId(id)
    if (mode !== 'read' && mode !== 'write') {
      throw new TurnlogError('INVALID_ARGUMENT', `open mode must be 'read' or 'write', got ${String(mode)}`, { sessionId: id })
    }
    const entry = this.#sessions.get(id)
    if (!entry) throw new TurnlogError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)} in the store`, { sessionId: id })
    if (mode === 'read') return new MemoryReader(id, entry.header, entry.events.slice())
    if (entry.owner) {
      throw new TurnlogError('SESSION_OWNED', 'the session has a writer already (in this process)', {
        sessionId: id, info: { token: entry.owner.token },
      })
    }
    const w = new MemoryWriter(id, entry, ++entry.token, this.#registry)
    entry.owner = w
    return w
  }

  async list(): Promise<string[]> {
    return [...this.#sessions.keys()].sort()
  }

  async has(id: string): Promise<boolean> {
    assertSessionId(id)
    return this.#sessions.has(id)
  }
}

export function makeHeader(id: string, init: HeaderInit, clock: () => number): LogHeader {
  if (typeof init !== 'object' || init === null) {
    throw new TurnlogError('INVALID_ARGUMENT', 'the header init must be an object', { sessionId: id })
  }
  const extra = Object.keys(init).filter((k) => !['createdAt', 'parent', 'inheritedEventCount'].includes(k))
  if (extra.length) {
    throw new TurnlogError('INVALID_HEADER', `the store sets ${extra.join(', ')} itself`, { sessionId: id, field: extra[0] })
  }
  const raw: Record<string, unknown> = {
    type: 'session', format: JSONL_FORMAT, id, createdAt: init.createdAt ?? clock(), checksums: 'crc32',
  }
  if (init.parent !== undefined) raw.parent = init.parent
  if (init.inheritedEventCount !== undefined) raw.inheritedEventCount = init.inheritedEventCount
  const r = LogHeader.safeParse(raw)
  if (!r.success) {
    const issue = r.error.issues[0]!
    throw new TurnlogError('INVALID_HEADER', issue.message, { sessionId: id, field: issue.path.join('.') || undefined })
  }
  return raw as LogHeader
}

async function* iterate(events: readonly LogEvent[], from: number, to: number): AsyncGenerator<LogEvent> {
  for (let i = Math.max(0, from); i < to; i++) yield events[i]!
}

function checkFrom(fromSeq: unknown, sessionId: string): number {
  if (fromSeq === undefined) return 0
  if (typeof fromSeq !== 'number' || !Number.isSafeInteger(fromSeq) || fromSeq < 0) {
    throw new TurnlogError('INVALID_ARGUMENT', 'events(fromSeq): fromSeq must be a non-negative integer', { sessionId, field: 'fromSeq' })
  }
  return fromSeq
}

class MemoryReader implements LogReader {
  readonly mode = 'read' as const
  constructor(readonly sessionId: string, readonly header: LogHeader, readonly snapshot: readonly LogEvent[]) {}
  get length(): number {
    return this.snapshot.length
  }
  events(fromSeq?: number): AsyncIterable<LogEvent> {
    return iterate(this.snapshot, checkFrom(fromSeq, this.sessionId), this.snapshot.length)
  }
  async close(): Promise<void> {}
}

class MemoryWriter implements LogWriter {
  readonly mode = 'write' as const
  readonly header: LogHeader
  #closed = false
  #failed: TurnlogError | null = null
  /** Appends chain on this, so they resolve in order. */
  #tail: Promise<unknown> = Promise.resolve()

  constructor(readonly sessionId: string, readonly entry: Entry, readonly token: number, readonly registry: EventRegistry) {
    this.header = entry.header
  }

  get length(): number {
    return this.entry.events.length
  }
  get durableLength(): number {
    return this.entry.events.length
  }
  get failed(): TurnlogError | null {
    return this.#failed
  }

  events(fromSeq?: number): AsyncIterable<LogEvent> {
    const from = checkFrom(fromSeq, this.sessionId)
    return iterate(this.entry.events, from, this.entry.events.length)
  }

  append(events: readonly LogEvent[], opts: AppendOptions): Promise<AppendResult> {
    try {
      if (this.#closed) throw new TurnlogError('SESSION_CLOSED', 'the write handle is closed', { sessionId: this.sessionId })
      if (this.entry.owner !== this) {
        throw new TurnlogError('SESSION_OWNED', 'this handle lost ownership of the session (stale fencing token)', {
          sessionId: this.sessionId, info: { token: this.token, current: this.entry.token },
        })
      }
      checkBatch(this.sessionId, events, opts?.expectedSeq, this.entry.events.length, this.registry, opts?.trusted === true)
    } catch (err) {
      return Promise.reject(err)
    }
    const firstSeq = this.entry.events.length
    for (const e of events) this.entry.events.push(deepFreeze(JSON.parse(JSON.stringify(e)) as LogEvent))
    const result = { firstSeq, length: this.entry.events.length }
    const p = this.#tail.then(() => result)
    this.#tail = p
    return p
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#tail
    if (this.entry.owner === this) this.entry.owner = null
  }
}
