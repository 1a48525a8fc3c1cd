/**
 * `repair`: a crashed session's log back to a valid one (issue "Repair", P5).
 *
 * - Reads with `tolerateTornTail`: every complete, checked record is kept (a garbled last record
 *   that still parses is caught by its crc); an unterminated last line that holds a complete
 *   record (only its `\n` lost) is kept too. The torn bytes are returned for quarantine.
 * - Corruption before the tail (a bad line, crc, seq or schema in the middle) is thrown by
 *   `readLog` as its coded error (`repairable: false`); a complete prefix that breaks an L
 *   invariant is refused with `INVARIANT` (a torn tail never causes that: the checker is
 *   prefix-closed). Nothing is written in either case.
 * - Whatever the kept records leave open gets the synthetic closers of `closers.ts`
 *   (reason `interrupted`), timed at the last event.
 * - A subagent call that was running gets its child's outcome when the child's log (the store, or
 *   the JSONL directory: `childLogs`) shows that this call's child ended (docs/spec/lifecycle.md §10).
 *
 * `repair` and `repairEvents` work in memory and write nothing; `writeRepaired` writes a result.
 * `repairFile` (what `turnlog repair LOG -o OUT` runs) does the same while the log streams: each
 * record is checked (`Repairer`), folded into the closers' state and written to OUT's temp file,
 * so memory stays bounded by the folded state, not the log. The original is never touched.
 */
import { rm } from 'node:fs/promises'
import { dirname } from 'node:path'
import { readDecisions } from '../stores/jsonl/decisions.js'
import type { LogEvent, SessionEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import type { CheckerOptions, Violation } from '../events/invariants/types.js'
import { encodeEvent, encodeHeader, type LogHeader } from '../events/jsonl.js'
import { findLossy } from '../events/lossless.js'
import { defaultRegistry, type EventRegistry } from '../events/registry.js'
import { AtomicFile, exists, fileExists } from './atomic-file.js'
import { finishedChildren, type ChildLogSource } from './child-outcome.js'
import { CloserState, closersAt, type AcceptedDecision, type ChildOutcome, type CloserOptions } from './closers.js'
import { readLog, scanLog } from './read-log.js'
import { Verifier } from './verify.js'
import { writeLog, type WriteLogResult } from './write-log.js'

export interface RepairOptions extends CheckerOptions {
  /** Validates events (plugin types). Default the core registry. */
  registry?: EventRegistry
  /** Names the input in errors when it is bytes. */
  file?: string
  /**
   * Decisions the store accepted that the log may not hold yet, by approval id (closers.ts
   * `CloserOptions.decisions`): an open request of the interrupted step gets its accepted
   * decision, not `by: canceled`. `repairSession` reads them from the store; `repairFile` from the
   * JSONL claims beside the log.
   */
  decisions?: ReadonlyMap<string, AcceptedDecision>
  /** Leaves the open step to a resumed agent that re-attaches its children (closers.ts `CloserOptions.reattach`). */
  reattach?: CloserOptions['reattach']
  /** Leaves the open step to a resumed agent that issues its running idempotent calls again (closers.ts `CloserOptions.reissue`). */
  reissue?: CloserOptions['reissue']
  /** Leaves the open step to a resumed agent when a running call logged a round (closers.ts `CloserOptions.continueRounds`). */
  continueRounds?: boolean
  /** Finished children's outcomes by call id (closers.ts `CloserOptions.children`; replay/child-outcome.ts). */
  children?: ReadonlyMap<string, ChildOutcome>
}

export interface RepairResult {
  /** The repaired log: every complete record, then the closers. */
  log: { header: LogHeader; events: LogEvent[] }
  /** The torn tail (byte offset where it starts, its bytes), or null when the input ended cleanly. */
  quarantined: { offset: number; bytes: Uint8Array } | null
  /** The synthetic closers appended (also the tail of `log.events`); empty when nothing was open. */
  closers: LogEvent[]
  /** Events kept from the input (`log.events.length - closers.length`). */
  keptEventCount: number
}

/** Options of the repairs that read (`repair`, `repairFile`): where the children's logs are. */
export interface RepairReadOptions extends RepairOptions {
  /**
   * Where the logs of the parent's children are (docs/spec/lifecycle.md §10: a running subagent call whose child
   * ended gets the child's outcome, replay/child-outcome.ts): a `LogStore` (the parent's), or a
   * JSONL directory. Default: the directory of a log given as a path; none for bytes (the call is
   * then `TOOL_OUTCOME_UNKNOWN`). `false`: read no child. Ignored when `children` is given.
   */
  childLogs?: ChildLogSource | false
}

/** Repairs a JSONL log given as a path or bytes. Never writes (it may read the children's logs, `childLogs`). */
export async function repair(source: string | Uint8Array, opts: RepairReadOptions = {}): Promise<RepairResult> {
  const read = await readLog(source, {
    tolerateTornTail: true,
    ...(opts.registry ? { registry: opts.registry } : {}),
    ...(opts.file !== undefined ? { file: opts.file } : {}),
  })
  const torn = read.torn
  let header = read.header
  const events = read.events
  let quarantined: RepairResult['quarantined'] = null
  if (torn) {
    if (torn.header) header = torn.header
    if (torn.record) events.push(torn.record as SessionEvent) // complete but for its `\n`: kept, nothing to quarantine
    else quarantined = { offset: torn.offset, bytes: torn.bytes }
  }
  const from = childSource(opts, typeof source === 'string' ? dirname(read.file ?? source) : undefined)
  const r = new Repairer(header, { ...opts, file: read.file ?? opts.file })
  for (let i = 0; i < events.length; i++) r.push(events[i]!)
  await r.readChildren(from)
  const closers = r.finish()
  return { log: { header, events: (events as LogEvent[]).concat(closers) }, quarantined, closers, keptEventCount: events.length }
}

/** Where `opts` says the children are (`RepairReadOptions.childLogs`), else `beside`; none when outcomes are given. */
function childSource(opts: RepairReadOptions, beside: string | undefined): ChildLogSource | undefined {
  if (opts.children !== undefined || opts.childLogs === false) return undefined
  return opts.childLogs ?? beside
}

/**
 * The repair check, one event at a time: every event is verified (schema and L invariants) and
 * folded into the closers' state; the first event that breaks anything throws `INVARIANT`
 * (`repairable: false`). `finish()` computes the closers and checks them the same way (a closer
 * bug throws a plain Error: a repair never hands out a log that does not verify).
 */
export class Repairer {
  readonly #verifier: Verifier
  readonly #closer = new CloserState()
  #count = 0
  #lastTime = 0

  constructor(readonly header: LogHeader, public opts: RepairOptions = {}) {
    this.#verifier = new Verifier({ ...checkerOpts(opts), maxViolations: 5, ...(opts.registry ? { registry: opts.registry } : {}) })
  }

  get eventCount(): number {
    return this.#count
  }

  push(e: LogEvent): void {
    this.#verifier.push(e)
    if (!this.#verifier.ok) {
      const vs = this.#verifier.result().violations
      const first = vs[0]!
      throw new TurnlogError('INVARIANT', `the log is corrupt before its tail, not repairable: ${first.message}`, {
        seq: first.seq, invariant: first.invariant, repairable: false, sessionId: this.header.id,
        ...(this.opts.file !== undefined ? { file: this.opts.file } : {}),
        info: { violations: vs.slice(0, 5) },
      })
    }
    this.#closer.apply(e)
    this.#count++
    this.#lastTime = e.time
  }

  /**
   * Reads the finished children of the open step's running subagent calls from `from` (before
   * `finish`): their outcomes become those calls' results (replay/child-outcome.ts). Reads nothing
   * without a source, when outcomes were given, or when no such call runs.
   */
  async readChildren(from: ChildLogSource | undefined): Promise<void> {
    if (from === undefined || this.opts.children !== undefined) return
    const running = this.#closer.runningChildren()
    if (running.length === 0) return
    const children: ReadonlyMap<string, ChildOutcome> = await finishedChildren(from, this.header.id, running)
    if (children.size > 0) this.opts = { ...this.opts, children }
  }

  /** The closers for everything pushed (checked). */
  finish(): LogEvent[] {
    const closers = closersAt(this.#closer, { length: this.#count, time: this.#lastTime }, {
      reason: 'interrupted', ...(this.opts.decisions !== undefined ? { decisions: this.opts.decisions } : {}),
      ...(this.opts.reattach !== undefined ? { reattach: this.opts.reattach } : {}),
      ...(this.opts.reissue !== undefined ? { reissue: this.opts.reissue } : {}),
      ...(this.opts.continueRounds === true ? { continueRounds: true } : {}),
      ...(this.opts.children !== undefined ? { children: this.opts.children } : {}),
    })
    for (const c of closers) this.#verifier.push(c)
    if (!this.#verifier.ok) {
      // A bug in the closers: never hand out a log that does not verify.
      const first: Violation = this.#verifier.result().violations[0]!
      throw new Error(`repair produced an invalid log: ${first.invariant} at seq ${first.seq}: ${first.message}`)
    }
    return closers
  }
}

/**
 * Closes an in-memory log (already read: complete records only). Refuses a log that breaks an
 * L invariant with `INVARIANT` (`repairable: false`). Synchronous, so it reads no child's log: a
 * running subagent call gets its finished child's outcome only through `children`
 * (`readChildOutcomes(store, log)`, replay/child-outcome.ts), else `TOOL_OUTCOME_UNKNOWN`.
 */
export function repairEvents(
  log: { header: LogHeader; events: readonly LogEvent[] },
  opts: RepairOptions & { quarantined?: RepairResult['quarantined'] } = {},
): RepairResult {
  const r = new Repairer(log.header, opts)
  for (let i = 0; i < log.events.length; i++) r.push(log.events[i]!)
  const closers = r.finish()
  const repaired = log.events.concat(closers)
  return { log: { header: log.header, events: repaired }, quarantined: opts.quarantined ?? null, closers, keptEventCount: log.events.length }
}

function checkerOpts(o: CheckerOptions): CheckerOptions {
  return {
    ...(o.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: o.maxStepsPerTurn } : {}),
    ...(o.maxRetries !== undefined ? { maxRetries: o.maxRetries } : {}),
    ...(o.maxResumeRuns !== undefined ? { maxResumeRuns: o.maxResumeRuns } : {}),
  }
}

export interface WriteRepairedResult extends WriteLogResult {
  /** The quarantine file (`OUT.quarantine`), or null when there were no torn bytes. */
  quarantineFile: string | null
}

/**
 * Writes a repair result: the torn bytes to `out + '.quarantine'` first (refused if it exists,
 * unless `overwrite`), then the log to `out` (`writeLog`: temp file, fsync, link; `FILE_EXISTS`
 * unless `overwrite`); a refused `out` removes the new quarantine. Both are new files moved into
 * place: an existing file (or what a symlink there points to) is never written into.
 */
export async function writeRepaired(
  out: string,
  result: RepairResult,
  opts: { overwrite?: boolean; checksums?: boolean; registry?: EventRegistry } = {},
): Promise<WriteRepairedResult> {
  const quarantineFile = result.quarantined ? `${out}.quarantine` : null
  if (quarantineFile !== null) await writeQuarantine(quarantineFile, result.quarantined!.bytes, opts.overwrite === true)
  let written: WriteLogResult
  try {
    written = await writeLog(out, result.log, opts)
  } catch (err) {
    if (quarantineFile !== null) await removeQuietly(quarantineFile)
    throw err
  }
  return { ...written, quarantineFile }
}

async function writeQuarantine(file: string, bytes: Uint8Array, overwrite: boolean): Promise<void> {
  if (!overwrite && (await exists(file))) {
    throw new TurnlogError('FILE_EXISTS', 'the quarantine file already exists', { file })
  }
  const q = await AtomicFile.create(file)
  try {
    await q.write(bytes)
    await q.commit({ overwrite })
  } catch (err) {
    if (TurnlogError.is(err, 'FILE_EXISTS')) throw new TurnlogError('FILE_EXISTS', 'the quarantine file already exists', { file })
    throw err
  } finally {
    await q.discard()
  }
}

async function removeQuietly(file: string): Promise<void> {
  await rm(file, { force: true }).catch(() => {})
}

export interface RepairFileOptions extends RepairReadOptions {
  /** Replace OUT (and OUT.quarantine) if they exist. Default false: `FILE_EXISTS`. */
  overwrite?: boolean
  /** Called after each chunk read (bytes read, total). */
  onProgress?: (bytesRead: number, totalBytes: number) => void
}

export interface RepairFileResult {
  header: LogHeader
  /** Events kept from the input. */
  keptEventCount: number
  closers: LogEvent[]
  quarantined: { offset: number; bytes: Uint8Array } | null
  quarantineFile: string | null
  /** Events written to OUT. */
  eventCount: number
  bytes: number
}

const FLUSH_AT = 1 << 20

/**
 * Repairs the log at `source` into the new file `out` while it streams (see the file comment):
 * the same checks, closers and refusals as `repair` + `writeRepaired`, with memory bounded by the
 * checker's and the closers' folded state. OUT is written with checksums.
 */
export async function repairFile(source: string, out: string, opts: RepairFileOptions = {}): Promise<RepairFileResult> {
  const registry = opts.registry ?? defaultRegistry
  if (!opts.overwrite && (await exists(out))) throw fileExists(out)
  const f = await AtomicFile.create(out)
  try {
    let repairer: Repairer | undefined
    let pending = ''
    const flush = async (): Promise<void> => {
      if (pending === '') return
      const b = Buffer.from(pending, 'utf8')
      pending = ''
      await f.write(b)
    }
    const start = (header: LogHeader): Repairer => {
      const { checksums: _drop, ...rest } = header
      void _drop
      pending += encodeHeader({ ...rest, checksums: 'crc32' }) + '\n'
      // the JSONL store's claimed decisions beside the log (`<dir>/<id>.decisions/`): accepted, maybe unlogged
      const decisions = opts.decisions ?? readDecisions(dirname(source), header.id)
      return new Repairer(header, { ...opts, decisions, file: source })
    }
    const add = (r: Repairer, e: LogEvent): void => {
      r.push(e)
      pending += encodeEvent(e, { checksums: true }) + '\n'
    }
    const summary = await scanLog(source, {
      tolerateTornTail: true, registry, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    }, async (batch, header) => {
      repairer ??= start(header)
      for (let i = 0; i < batch.length; i++) add(repairer, batch[i]!)
      if (pending.length >= FLUSH_AT) await flush()
    })
    const torn = summary.torn
    const header = torn?.header ?? summary.header
    repairer ??= start(header)
    let quarantined: RepairFileResult['quarantined'] = null
    if (torn) {
      if (torn.record) add(repairer, torn.record)
      else quarantined = { offset: torn.offset, bytes: torn.bytes }
    }
    const kept = repairer.eventCount
    // children that ended before the parent logged their call's result: their logs beside (docs/spec/lifecycle.md §10)
    await repairer.readChildren(childSource(opts, dirname(source)))
    const closers = repairer.finish()
    for (const c of closers) {
      // closers are built here, not read: hold them to the schema like writeLog would
      registry.validate(c, { file: out })
      const lossy = findLossy(c.data)
      if (lossy) throw new TurnlogError('NOT_LOSSLESS', `${lossy.path}: ${lossy.why}`, { file: out, seq: c.seq, field: lossy.path })
      pending += encodeEvent(c, { checksums: true }) + '\n'
    }
    await flush()
    const quarantineFile = quarantined ? `${out}.quarantine` : null
    if (quarantineFile !== null) await writeQuarantine(quarantineFile, quarantined!.bytes, opts.overwrite === true)
    try {
      await f.commit({ overwrite: opts.overwrite === true })
    } catch (err) {
      if (quarantineFile !== null) await removeQuietly(quarantineFile)
      throw err
    }
    return { header, keptEventCount: kept, closers, quarantined, quarantineFile, eventCount: kept + closers.length, bytes: f.bytes }
  } finally {
    await f.discard()
  }
}
