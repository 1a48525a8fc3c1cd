/**
 * The JSONL store's decision side channel (lifecycle §9: decisions from another process while the
 * owner runs). The log has one writer, so a decider that is not the owner cannot append; instead
 * every decision is **claimed** as a file `<id>.decisions/<name>.json` and the owner logs it.
 *
 * - The claim is the arbiter of "first decision wins": the record is written to a temp file,
 *   fsynced, then hard-linked to its final name; `link` fails with EEXIST when another claim was
 *   first (atomic, like `open(…, 'wx')`, but the winner's file is never seen half-written). The
 *   directory is fsynced before the claim returns, so a claim is durable when it returns.
 * - Every decision goes through it: `store.decide` from any process, and the owner's own
 *   (`agent.decide`, the expiry, a steer, a cancel), so the owner never logs a decision that lost.
 * - The owner watches the directory (`fs.watch`, with a poll every `pollMs` as the fallback: a
 *   watch may miss events or be unsupported) and logs each claimed decision of an open approval
 *   once. A claim the owner did not log before it died is found by the next owner (the watch lists
 *   the files there already), so nothing claimed is lost.
 * - Files are never deleted: a decider that read the log before the owner logged a decision still
 *   finds its claim taken (deleting them would let a late claim win a second time). They are small.
 *
 * Synchronous file I/O on purpose: the agent's decision paths are synchronous (a decision is
 * appended in the same tick it is made), and a claim is rare and small. It does not go through
 * the store's injectable `StoreFs` (fault injection covers the log, not this channel).
 */
import { createHash, randomBytes } from 'node:crypto'
import {
  closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, readdirSync, unlinkSync, watch, writeSync,
  type FSWatcher,
} from 'node:fs'
import { join } from 'node:path'
import { z } from 'zod'
import { ApprovalBy, ApprovalDecision } from '../../events/approvals.js'
import { TurnlogError } from '../../events/errors.js'
import type { DecisionChannel, DecisionRecord, DecisionWatch } from '../types.js'

const Record = z.object({ approvalId: z.string(), decision: ApprovalDecision, by: ApprovalBy, time: z.number() })

/** Default interval of the poll that backs up the file-system watch. */
export const DECISION_POLL_MS = 500

/** The directory of a session's claimed decisions. */
export function decisionsDir(dir: string, sessionId: string): string {
  return join(dir, `${sessionId}.decisions`)
}

/** A file name for an approval id: the id itself when it is a safe name, else a hash of it. */
export function decisionFileName(approvalId: string): string {
  if (/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,150}$/.test(approvalId)) return `a-${approvalId}.json`
  return `h-${createHash('sha256').update(approvalId).digest('hex')}.json`
}

function ioFail(err: unknown, file: string, what: string, sessionId: string): TurnlogError {
  const code = (err as { code?: unknown } | null)?.code
  return new TurnlogError('IO_ERROR', `${what}: ${err instanceof Error ? err.message : String(err)}`, { sessionId, file, info: { errno: typeof code === 'string' ? code : undefined } })
}

/** Reads one claimed decision; a coded error for a file that is not one. */
export function readDecisionFile(file: string, sessionId: string): DecisionRecord {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw ioFail(err, file, 'cannot read a claimed decision', sessionId)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (err) {
    throw new TurnlogError('INVALID_EVENT', `a claimed decision is not JSON: ${err instanceof Error ? err.message : String(err)}`, { sessionId, file })
  }
  const r = Record.safeParse(parsed)
  if (!r.success) throw new TurnlogError('INVALID_EVENT', `a claimed decision is malformed: ${r.error.issues[0]!.message}`, { sessionId, file, field: r.error.issues[0]!.path.join('.') })
  return r.data
}

/** Every claimed decision of a session, by approval id (unreadable files are skipped and reported). */
export function readDecisions(dir: string, sessionId: string, onError?: (err: unknown) => void): Map<string, DecisionRecord> {
  const d = decisionsDir(dir, sessionId)
  const out = new Map<string, DecisionRecord>()
  let names: string[]
  try {
    names = readdirSync(d)
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return out
    throw ioFail(err, d, 'cannot list the claimed decisions', sessionId)
  }
  for (const n of names.sort()) {
    if (!n.endsWith('.json') || n.startsWith('.')) continue
    try {
      const rec = readDecisionFile(join(d, n), sessionId)
      if (decisionFileName(rec.approvalId) === n) out.set(rec.approvalId, rec)
      else throw new TurnlogError('INVALID_EVENT', `a claimed decision's file name does not match its approval id ${JSON.stringify(rec.approvalId)}`, { sessionId, file: join(d, n) })
    } catch (err) {
      onError?.(err)
    }
  }
  return out
}

/**
 * Claims `rec` (see the file comment). Returns null when this claim won, else the record that won.
 * Throws `IO_ERROR` when the claim could not be made durable (then it may or may not stand: the
 * caller reports the failure, and a later claim or read tells which).
 */
export function claimDecision(dir: string, sessionId: string, rec: DecisionRecord): DecisionRecord | null {
  const d = decisionsDir(dir, sessionId)
  const checked = Record.parse(rec)
  const final = join(d, decisionFileName(checked.approvalId))
  const tmp = join(d, `.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  try {
    mkdirSync(d, { recursive: true })
  } catch (err) {
    throw ioFail(err, d, 'cannot create the decisions directory', sessionId)
  }
  try {
    const fd = openSync(tmp, 'wx', 0o644)
    try {
      writeSync(fd, `${JSON.stringify(checked)}\n`)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    try {
      linkSync(tmp, final)
    } catch (err) {
      if ((err as { code?: unknown }).code === 'EEXIST') return readDecisionFile(final, sessionId)
      throw err
    }
    const dfd = openSync(d, 'r')
    try {
      fsyncSync(dfd)
    } finally {
      closeSync(dfd)
    }
    return null
  } catch (err) {
    if (TurnlogError.is(err)) throw err
    throw ioFail(err, final, 'cannot claim the decision', sessionId)
  } finally {
    try {
      unlinkSync(tmp)
    } catch {
      // not created, or already gone
    }
  }
}

/** The channel of one session (a JSONL write handle holds it). */
export class JsonlDecisionChannel implements DecisionChannel {
  readonly #stops = new Set<() => void>()

  constructor(readonly dir: string, readonly sessionId: string, readonly pollMs: number = DECISION_POLL_MS) {}

  claim(rec: DecisionRecord): DecisionRecord | null {
    return claimDecision(this.dir, this.sessionId, rec)
  }

  watch(listener: (rec: DecisionRecord) => void, onError?: (err: unknown) => void): DecisionWatch {
    const d = decisionsDir(this.dir, this.sessionId)
    const seen = new Set<string>()
    let stopped = false
    const report = (err: unknown) => {
      try {
        onError?.(err)
      } catch {
        // a listener's throw stays with the listener
      }
    }
    const scan = () => {
      if (stopped) return
      let recs: Map<string, DecisionRecord>
      try {
        recs = readDecisions(this.dir, this.sessionId, report)
      } catch (err) {
        report(err)
        return
      }
      for (const [id, rec] of recs) {
        if (seen.has(id) || stopped) continue
        seen.add(id)
        try {
          listener(rec)
        } catch (err) {
          report(err)
        }
      }
    }
    let watcher: FSWatcher | null = null
    try {
      mkdirSync(d, { recursive: true })
      watcher = watch(d, { persistent: false }, () => scan())
      watcher.on('error', () => {
        // the poll goes on serving
        watcher?.close()
      })
    } catch {
      watcher = null // no watch on this file system: the poll alone
    }
    const poll = setInterval(scan, this.pollMs)
    poll.unref()
    const stop = () => {
      if (stopped) return
      stopped = true
      clearInterval(poll)
      watcher?.close()
      this.#stops.delete(stop)
    }
    this.#stops.add(stop)
    // the claims there already (decided while no owner ran, or before this owner watched)
    queueMicrotask(scan)
    return {
      stop,
      keepAlive: (on) => {
        if (on) poll.ref()
        else poll.unref()
      },
    }
  }

  /** Stops every watch (the write handle closes). */
  close(): void {
    for (const s of [...this.#stops]) s()
  }
}
