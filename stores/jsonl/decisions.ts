/**
 * The JSONL store's decision claims (docs/spec/lifecycle.md §9: decisions from another process while the owner
 * runs, or after it exited). The log has one writer, so a decider that is not the owner cannot
 * append; instead every decision is **claimed** as a file in `<id>.decisions/` and the owner logs
 * it (the watch that delivers claims to the owner is in decision-watch.ts).
 *
 * - The claim is the arbiter of "first decision wins": the record is written to a temp file,
 *   fsynced, closed, then hard-linked to its final name; `link` fails with EEXIST when another
 *   claim was first (atomic, like `open(…, 'wx')`, and the winner's file is never seen
 *   half-written: its bytes were durable before it had the name). The directory is fsynced before
 *   the claim returns, so a claim is durable when it returns.
 * - Every decision goes through it: `store.decide` from any process, and the owner's own
 *   (`agent.decide`, the expiry, a steer, a cancel), so the owner never logs a decision that lost.
 * - The same decision claimed again (same approval, decision and `by`: a retry after a fault, or
 *   the owner logging a claim it read) finds its own claim and wins, after fsyncing the directory:
 *   a retry after a failed directory fsync succeeds instead of losing to itself.
 * - A file at the final name whose **content** is not a claim (torn, garbage, a FIFO, a directory,
 *   too large; never written by this protocol, which links only complete fsynced files) is left as
 *   it is and the next **generation** of the name is claimed (`a-<id>~1.json`, up to
 *   `MAX_GENERATIONS`). Every reader takes the lowest generation that holds a claim, over
 *   unreadable lower ones, so there is still exactly one winner and no bytes are moved or
 *   rewritten. A read that fails for I/O (EIO, EMFILE…) is an `IO_ERROR` and decides nothing.
 * - Files are never deleted: a decider that read the log before the owner logged a decision still
 *   finds its claim taken (deleting them would let a late claim win a second time). They are small.
 *
 * - Answers of input rounds (docs/spec/lifecycle.md §11) are claimed the same way, in the same directory: a
 *   request id and an approval id are both the agent's fresh ids, so one name space holds both; a
 *   record with `answer` is an answer (`claimAnswer`, `readAnswers`), every other is a decision.
 *
 * Synchronous file I/O on purpose: the agent's decision paths are synchronous (a decision is
 * claimed and appended in the same tick it is made). It goes through the store's injectable
 * `StoreFs.claims` (fs.ts), so the fault tests reach every step (test/stores/jsonl-decision-faults.test.ts).
 */
import { createHash, randomBytes } from 'node:crypto'
import { basename, join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { z } from 'zod'
import { ApprovalBy, ApprovalDecision } from '../../events/approvals.js'
import { TurnlogError } from '../../events/errors.js'
import { InputAnswer, InputBy } from '../../events/inputs.js'
import type { AnswerRecord, DecisionRecord } from '../types.js'
import { nodeFs, type ClaimFs, type StoreFs } from './fs.js'
import { errno, ioError } from './io.js'

const DecisionRec = z.object({ approvalId: z.string(), decision: ApprovalDecision, by: ApprovalBy, time: z.number() })
const AnswerRec = z.object({ requestId: z.string(), answer: InputAnswer, by: InputBy, time: z.number() })
const Record = z.union([DecisionRec, AnswerRec])

/** A claim: a decision or an answer. */
export type ClaimRecord = DecisionRecord | AnswerRecord

/** The id a claim is filed under. */
function claimId(rec: ClaimRecord): string {
  return 'approvalId' in rec ? rec.approvalId : rec.requestId
}

/** True for an answer's claim. */
export function isAnswerClaim(rec: ClaimRecord): rec is AnswerRecord {
  return !('approvalId' in rec)
}

/** A claim file larger than this is not a claim (a record with edited arguments is far smaller). */
export const MAX_CLAIM_BYTES = 16 * 1024 * 1024
/** How many unreadable files at an approval's claim names a decider steps over before it gives up. */
export const MAX_GENERATIONS = 8

/** The directory of a session's claimed decisions. */
export function decisionsDir(dir: string, sessionId: string): string {
  return join(dir, `${sessionId}.decisions`)
}

/**
 * A file name for an approval id: the id itself when it is a safe name, else a hash of it;
 * generation `gen` > 0 (after unreadable files at the lower ones) adds `~gen` (`~` is in no id name).
 */
export function decisionFileName(approvalId: string, gen = 0): string {
  const base = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,150}$/.test(approvalId) ? `a-${approvalId}` : `h-${createHash('sha256').update(approvalId).digest('hex')}`
  return gen === 0 ? `${base}.json` : `${base}~${gen}.json`
}

/** The base and generation of a claim file name, or null for a name that is not one. */
function parseName(name: string): { base: string; gen: number } | null {
  if (name.startsWith('.') || !name.endsWith('.json')) return null
  const m = /^(.*?)(?:~([1-9][0-9]?))?\.json$/.exec(name)
  return m === null || m[1] === '' ? null : { base: m[1]!, gen: m[2] === undefined ? 0 : Number(m[2]) }
}

/**
 * Reads one claimed decision (its file name must be its approval's at generation `gen`). Coded:
 * `INVALID_EVENT` for a file whose content is not a claim (torn, not JSON, malformed, a special
 * file, too large, under another approval's name), `IO_ERROR` when it cannot be read.
 */
export function readDecisionFile(file: string, sessionId: string, fs: StoreFs = nodeFs, gen?: number): ClaimRecord {
  let buf: Buffer
  try {
    buf = fs.claims.readFile(file, MAX_CLAIM_BYTES)
  } catch (err) {
    const e = errno(err)
    if (e === 'ENOTREG' || e === 'EISDIR' || e === 'EFBIG') {
      throw new TurnlogError('INVALID_EVENT', `a claimed decision must be a regular file of at most ${MAX_CLAIM_BYTES} bytes: ${(err as Error).message}`, { sessionId, file, info: { errno: e } })
    }
    throw ioError('IO_ERROR', err, file, 'cannot read a claimed decision', sessionId)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(buf.toString('utf8'))
  } catch (err) {
    throw new TurnlogError('INVALID_EVENT', `a claimed decision is not JSON (torn or foreign): ${err instanceof Error ? err.message : String(err)}`, { sessionId, file })
  }
  const r = Record.safeParse(parsed)
  if (!r.success) throw new TurnlogError('INVALID_EVENT', `a claimed decision is malformed: ${r.error.issues[0]!.message}`, { sessionId, file, field: r.error.issues[0]!.path.join('.') })
  const name = basename(file)
  const at = gen ?? parseName(name)?.gen ?? 0
  const id = claimId(r.data as ClaimRecord)
  if (decisionFileName(id, at) !== name) {
    throw new TurnlogError('INVALID_EVENT', `a claimed decision's file name does not match its id ${JSON.stringify(id)}`, { sessionId, file })
  }
  return r.data as ClaimRecord
}

/**
 * Every claimed decision of a session, by approval id: per approval the lowest generation that
 * holds a claim, over unreadable lower ones. Each file that is not a claim, or cannot be read, is
 * reported to `onError` (coded, naming the file) and skipped; an approval whose lower generation
 * cannot be read for I/O is left out this time (a later read tells).
 */
export function readDecisions(dir: string, sessionId: string, onError?: (err: unknown) => void, fs: StoreFs = nodeFs): Map<string, DecisionRecord> {
  const out = new Map<string, DecisionRecord>()
  for (const [id, rec] of readClaims(dir, sessionId, onError, fs)) if (!isAnswerClaim(rec)) out.set(id, rec)
  return out
}

/** Every claimed answer of a session's input rounds, by request id (as `readDecisions`). */
export function readAnswers(dir: string, sessionId: string, onError?: (err: unknown) => void, fs: StoreFs = nodeFs): Map<string, AnswerRecord> {
  const out = new Map<string, AnswerRecord>()
  for (const [id, rec] of readClaims(dir, sessionId, onError, fs)) if (isAnswerClaim(rec)) out.set(id, rec)
  return out
}

/** Every claim of a session (decisions and answers), by id. */
export function readClaims(dir: string, sessionId: string, onError?: (err: unknown) => void, fs: StoreFs = nodeFs): Map<string, ClaimRecord> {
  const d = decisionsDir(dir, sessionId)
  const out = new Map<string, ClaimRecord>()
  let names: string[]
  try {
    names = fs.claims.readdir(d)
  } catch (err) {
    if (errno(err) === 'ENOENT') return out
    throw ioError('IO_ERROR', err, d, 'cannot list the claimed decisions', sessionId)
  }
  const bases = new Map<string, Set<number>>()
  for (const n of names) {
    const p = parseName(n)
    if (p === null) continue
    let gens = bases.get(p.base)
    if (gens === undefined) bases.set(p.base, (gens = new Set()))
    gens.add(p.gen)
  }
  for (const [base, gens] of [...bases].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    for (let gen = 0; gens.has(gen); gen++) {
      const file = join(d, gen === 0 ? `${base}.json` : `${base}~${gen}.json`)
      try {
        const rec = readDecisionFile(file, sessionId, fs, gen)
        out.set(claimId(rec), rec)
        break
      } catch (err) {
        onError?.(err)
        if (!TurnlogError.is(err, 'INVALID_EVENT')) break // unknown: the next generation may not count
      }
    }
  }
  return out
}

/** Writes `bytes` to a new temp file and makes them durable. */
function writeTemp(cfs: ClaimFs, tmp: string, bytes: Buffer, final: string, sessionId: string): void {
  let f
  try {
    f = cfs.create(tmp, 0o644)
  } catch (err) {
    throw ioError('IO_ERROR', err, final, 'cannot create the claim file', sessionId)
  }
  let closed = false
  try {
    try {
      for (let off = 0; off < bytes.length;) {
        const n = f.write(bytes, off, bytes.length - off, off)
        if (n <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' })
        off += n
      }
    } catch (err) {
      throw ioError('IO_ERROR', err, final, 'cannot write the claim file', sessionId)
    }
    try {
      f.sync()
    } catch (err) {
      throw ioError('FSYNC_FAILED', err, final, 'fsync of the claim file failed', sessionId)
    }
    closed = true
    try {
      f.close()
    } catch (err) {
      // a close that fails (NFS reports write errors there) leaves the bytes in doubt
      throw ioError('IO_ERROR', err, final, 'cannot close the claim file', sessionId)
    }
  } finally {
    if (!closed) {
      try {
        f.close()
      } catch {
        // the error that matters is already thrown
      }
    }
  }
}

/**
 * Claims `rec` (see the file comment). Returns null when this claim won (or the same decision had
 * been claimed before), else the record that won. Throws a coded error when the claim could not
 * be made durable: `IO_ERROR`/`FSYNC_FAILED` naming the claim file and `info.errno`. Before the
 * link nothing stands; after it (a failed directory fsync) the complete claim stands and may not
 * survive a crash: the caller reports the failure, and a retry of the same decision wins.
 */
export function claimDecision(dir: string, sessionId: string, rec: DecisionRecord, fs: StoreFs = nodeFs): DecisionRecord | null {
  const w = claimRecord(dir, sessionId, rec, fs)
  if (w !== null && isAnswerClaim(w)) throw new TurnlogError('INVALID_ARGUMENT', `${rec.approvalId} is an input request's id, not an approval's`, { sessionId, field: 'approvalId' })
  return w
}

/** Claims an answer of an input round (as `claimDecision`): null when this claim won, else the answer that won. */
export function claimAnswer(dir: string, sessionId: string, rec: AnswerRecord, fs: StoreFs = nodeFs): AnswerRecord | null {
  const w = claimRecord(dir, sessionId, rec, fs)
  if (w !== null && !isAnswerClaim(w)) throw new TurnlogError('INVALID_ARGUMENT', `${rec.requestId} is an approval's id, not an input request's`, { sessionId, field: 'requestId' })
  return w
}

function claimRecord(dir: string, sessionId: string, rec: ClaimRecord, fs: StoreFs): ClaimRecord | null {
  const cfs = fs.claims
  const d = decisionsDir(dir, sessionId)
  const r = Record.safeParse(rec)
  if (!r.success) throw new TurnlogError('INVALID_ARGUMENT', `a decision to claim is malformed: ${r.error.issues[0]!.message}`, { sessionId, field: r.error.issues[0]!.path.join('.') })
  const checked = r.data as ClaimRecord
  const id = claimId(checked)
  const bytes = Buffer.from(`${JSON.stringify(checked)}\n`, 'utf8')
  if (bytes.length > MAX_CLAIM_BYTES) {
    throw new TurnlogError('INVALID_ARGUMENT', `a decision to claim is ${bytes.length} bytes, more than ${MAX_CLAIM_BYTES}`, { sessionId, field: 'decision' })
  }
  try {
    cfs.mkdir(d, { recursive: true })
  } catch (err) {
    throw ioError('IO_ERROR', err, d, 'cannot create the decisions directory', sessionId)
  }
  const tmp = join(d, `.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  let final = join(d, decisionFileName(id))
  try {
    writeTemp(cfs, tmp, bytes, final, sessionId)
    for (let gen = 0; ; gen++) {
      if (gen >= MAX_GENERATIONS) {
        throw new TurnlogError('INVALID_EVENT', `${id}'s claim names hold ${MAX_GENERATIONS} files that are not claims: move them away to decide it`, { sessionId, file: final })
      }
      final = join(d, decisionFileName(id, gen))
      try {
        cfs.link(tmp, final)
        break // ours
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw ioError('IO_ERROR', err, final, 'cannot link the claim into place', sessionId)
      }
      let winner: ClaimRecord
      try {
        winner = readDecisionFile(final, sessionId, fs, gen)
      } catch (err) {
        if (TurnlogError.is(err, 'INVALID_EVENT')) continue // not a claim: the next generation
        throw err
      }
      if (claimId(winner) !== id || isAnswerClaim(winner) !== isAnswerClaim(checked) || !isDeepStrictEqual(winner.by, checked.by)) return winner
      if (isAnswerClaim(winner) ? !isDeepStrictEqual(winner.answer, (checked as AnswerRecord).answer) : !isDeepStrictEqual(winner.decision, (checked as DecisionRecord).decision)) return winner
      break // the same decision, claimed before: ours; made durable below
    }
    try {
      cfs.syncDir(d)
    } catch (err) {
      throw ioError('FSYNC_FAILED', err, final, 'fsync of the decisions directory failed (the claim is in place but may not survive a crash; retry the same decision)', sessionId)
    }
    return null
  } finally {
    try {
      cfs.unlink(tmp)
    } catch {
      // not created, or cannot be removed: a dot file, never read as a claim
    }
  }
}
