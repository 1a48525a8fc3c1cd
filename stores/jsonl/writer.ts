/**
 * The jsonl store's write handle: group commit (one write + one fsync per batch), fencing before
 * each batch, failures that stop the handle, and the torn-tail quarantine. See
 * decision record "stores" (docs/decisions/ in the repository).
 */
import { join } from 'node:path'
import type { LogEvent } from '../../events/envelope.js'
import { TurnlogError } from '../../events/errors.js'
import { encodeEvent, type LogHeader, type TornTail } from '../../events/jsonl.js'
import { checkBatch } from '../batch.js'
import { GroupCommit } from '../group-commit.js'
import type { AppendOptions, AppendResult, DecisionRecord, LogWriter } from '../types.js'
import { JsonlDecisionChannel } from './decision-watch.js'
import { readDecisions } from './decisions.js'
import type { StoreFile } from './fs.js'
import { checkFrom, errno, ioError, writeAll } from './io.js'
import type { LockIdentity, LockOwner } from './lock.js'
import { streamLog, type LogFiles, type Scan } from './scan.js'

/** What the write handle needs of its store (`JsonlStore` provides it). */
export interface WriterHost extends LogFiles {
  readonly dir: string
  /** The fencing check before each batch (lock.ts `checkFence`). */
  checkFence(id: string, owner: LockOwner, seen?: LockIdentity): Promise<void>
  releaseLock(id: string, owner: LockOwner): Promise<void>
}

/** One accepted append: its encoded records. */
interface Encoded {
  bytes: Buffer
  count: number
}

export class JsonlWriter implements LogWriter {
  readonly mode = 'write' as const
  readonly header: LogHeader
  readonly token: number
  #torn: TornTail | undefined
  /** Accepted events (the next seq). */
  #length: number
  #durableLength: number
  /** Bytes written to the file (durable and in flight). */
  #size: number
  #durableBytes: number
  #failed: TurnlogError | null = null
  #closed = false
  #closing: Promise<void> | null = null
  readonly #commits = new GroupCommit<Encoded>({
    commit: (batch) => this.#commit(batch),
    stop: (err) => this.#stop(err),
    failed: () => this.#failed,
    // a batch starts at setImmediate: the appends of one event-loop turn share one write + fsync
    // (a step's last chunks, its message and the `tool/call` its body waits for: one fsync before
    // the body instead of two; a 4-step session ~10% faster on this machine's disk)
  }, setImmediate)
  /** The lock file as this owner wrote it (fencing fast path); null until first checked. */
  readonly #lockId: LockIdentity = { ino: -1, size: -1, mtimeMs: -1 }
  /** Decisions claimed by other processes (and this owner) while it owns the session (decisions.ts). */
  readonly decisions: JsonlDecisionChannel

  constructor(
    readonly store: WriterHost,
    readonly sessionId: string,
    readonly file: string,
    scan: Scan,
    readonly fh: StoreFile,
    readonly owner: LockOwner,
    readonly lockFile: StoreFile,
  ) {
    this.header = scan.header
    this.token = owner.token
    this.#torn = scan.torn
    this.#length = scan.count
    this.#durableLength = scan.count
    this.#size = scan.torn ? scan.torn.offset + scan.torn.bytes.length : scan.completeBytes
    this.#durableBytes = scan.completeBytes
    this.decisions = new JsonlDecisionChannel(store.dir, sessionId, { fs: store.fs })
  }

  /** Every claimed decision of the session (decisions.ts; read by repair, replay/closers.ts). */
  async acceptedDecisions(): Promise<ReadonlyMap<string, DecisionRecord>> {
    return readDecisions(this.store.dir, this.sessionId, undefined, this.store.fs)
  }

  get length(): number {
    return this.#length
  }
  get durableLength(): number {
    return this.#durableLength
  }
  get failed(): TurnlogError | null {
    return this.#failed
  }
  get torn(): TornTail | undefined {
    return this.#torn
  }
  /** Number of write+fsync batches done (tests and the bench read it). */
  get batches(): number {
    return this.#commits.batches
  }

  events(fromSeq?: number): AsyncIterable<LogEvent> {
    return streamLog(this.store, this.sessionId, this.file, this.#durableBytes, checkFrom(fromSeq, this.sessionId))
  }

  append(events: readonly LogEvent[], opts: AppendOptions): Promise<AppendResult> {
    let bytes: Buffer
    try {
      if (this.#failed) throw this.#failed
      if (this.#closed) throw new TurnlogError('SESSION_CLOSED', 'the write handle is closed', { sessionId: this.sessionId })
      if (this.#torn) {
        throw new TurnlogError('TORN_TAIL', 'the log has a torn tail: quarantine it (repair) before appending', {
          sessionId: this.sessionId, file: this.file, offset: this.#torn.offset, line: this.#torn.line, repairable: true,
        })
      }
      checkBatch(this.sessionId, events, opts?.expectedSeq, this.#length, this.store.registry, opts?.trusted === true)
      let text = ''
      for (const e of events) text += encodeEvent(e, { checksums: true }) + '\n'
      bytes = Buffer.from(text, 'utf8')
    } catch (err) {
      return Promise.reject(err)
    }
    const firstSeq = this.#length
    this.#length += events.length
    if (events.length === 0) {
      // nothing to write: durable once everything accepted before it is
      return this.#commits.barrier().then(() => ({ firstSeq, length: firstSeq }))
    }
    // appends made in the same tick share a write and an fsync
    return this.#commits.enqueue({ bytes, count: events.length }, { firstSeq, length: this.#length })
  }

  async #commit(batch: readonly Encoded[]): Promise<void> {
    const buf = batch.length === 1 ? batch[0]!.bytes : Buffer.concat(batch.map((p) => p.bytes))
    let n = 0
    for (const p of batch) n += p.count
    // fencing: a writer whose lock was taken over (or removed) writes nothing more
    await this.store.checkFence(this.sessionId, this.owner, this.#lockId)
    try {
      await writeAll(this.fh, buf, this.#size)
    } catch (err) {
      // whatever part reached the file is a torn tail for the next opener; this handle stops
      throw ioError('IO_ERROR', err, this.file, 'write failed', this.sessionId, this.#durableLength)
    }
    this.#size += buf.length
    try {
      await this.fh.sync()
    } catch (err) {
      throw ioError('FSYNC_FAILED', err, this.file, 'fsync failed: the session stops writing (an fsync is never retried)', this.sessionId, this.#durableLength)
    }
    this.#durableBytes = this.#size
    this.#durableLength += n
  }

  /** A failed batch stops the handle: its appends and those queued behind it reject with `e`. */
  #stop(err: unknown): TurnlogError {
    const e = TurnlogError.is(err) ? err : ioError('IO_ERROR', err, this.file, 'append failed', this.sessionId)
    this.#failed = e
    return e
  }

  async quarantineTornTail(): Promise<{ file: string; bytes: number; offset: number } | null> {
    if (this.#failed) throw this.#failed
    if (this.#closed) throw new TurnlogError('SESSION_CLOSED', 'the write handle is closed', { sessionId: this.sessionId })
    const torn = this.#torn
    if (!torn) return null
    const fs = this.store.fs
    const dir = this.store.dir
    let q = ''
    let qh: StoreFile | undefined
    for (let n = 1; !qh; n++) {
      q = join(dir, `${this.sessionId}.quarantine-${n}`)
      try {
        qh = await fs.open(q, 'wx', 0o644)
      } catch (err) {
        if (errno(err) !== 'EEXIST' || n > 10_000) throw ioError('IO_ERROR', err, q, 'cannot create the quarantine file', this.sessionId)
      }
    }
    try {
      await writeAll(qh, torn.bytes, 0)
      await qh.sync()
    } catch (err) {
      await qh.close().catch(() => {})
      throw ioError('IO_ERROR', err, q, 'cannot write the quarantine file', this.sessionId)
    }
    await qh.close().catch(() => {})
    try {
      await fs.syncDir(dir)
      // only now, with the torn bytes durable elsewhere, cut the log back to its last complete record
      await this.store.checkFence(this.sessionId, this.owner)
      await this.fh.truncate(torn.offset)
      await this.fh.sync()
    } catch (err) {
      const e = TurnlogError.is(err) ? err : ioError('FSYNC_FAILED', err, this.file, 'cannot cut the torn tail', this.sessionId)
      this.#failed = e
      throw e
    }
    this.#size = torn.offset
    this.#durableBytes = torn.offset
    this.#torn = undefined
    return { file: q, bytes: torn.bytes.length, offset: torn.offset }
  }

  close(): Promise<void> {
    if (!this.#closing) {
      this.#closed = true
      this.decisions.close()
      this.#closing = (async () => {
        await this.#commits.running?.catch(() => {})
        await this.fh.close().catch(() => {})
        await this.store.releaseLock(this.sessionId, this.owner).catch(() => {})
        await this.lockFile.close().catch(() => {})
      })()
    }
    return this.#closing
  }
}

