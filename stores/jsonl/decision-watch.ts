/**
 * How the owner of a JSONL session hears the decisions claimed in `<id>.decisions/` (decisions.ts):
 * a file-system watch of the directory as a hint (`StoreFs.claims.watch`, when the file system
 * has one) and a poll every `pollMs` as the source of truth (a watch may miss events, fail, or be
 * unsupported). Each claimed decision is handed to the listener once; a file that is not a claim,
 * or cannot be read, is reported once per file and problem (not at every poll) and skipped, so a
 * torn or foreign file never stops the watch nor reaches the agent as a decision.
 */
import type { AnswerRecord, DecisionChannel, DecisionRecord, DecisionWatch } from '../types.js'
import { TurnlogError } from '../../events/errors.js'
import { claimAnswer, claimDecision, decisionsDir, isAnswerClaim, readClaims, type ClaimRecord } from './decisions.js'
import { nodeFs, type StoreFs } from './fs.js'

/** Default interval of the poll that backs up the file-system watch. */
export const DECISION_POLL_MS = 500

/** The channel of one session (a JSONL write handle holds one; `store.decide` makes one). */
export class JsonlDecisionChannel implements DecisionChannel {
  readonly #stops = new Set<() => void>()
  readonly fs: StoreFs
  readonly pollMs: number

  constructor(readonly dir: string, readonly sessionId: string, opts: { fs?: StoreFs; pollMs?: number } = {}) {
    this.fs = opts.fs ?? nodeFs
    this.pollMs = opts.pollMs ?? DECISION_POLL_MS
  }

  claim(rec: DecisionRecord): DecisionRecord | null {
    return claimDecision(this.dir, this.sessionId, rec, this.fs)
  }

  /** Claims an answer of an input round (docs/spec/lifecycle.md §11), in the same directory. */
  claimAnswer(rec: AnswerRecord): AnswerRecord | null {
    return claimAnswer(this.dir, this.sessionId, rec, this.fs)
  }

  watch(listener: (rec: DecisionRecord) => void, onError?: (err: unknown) => void, onAnswer?: (rec: AnswerRecord) => void): DecisionWatch {
    const d = decisionsDir(this.dir, this.sessionId)
    const seen = new Set<string>()
    /** Problems reported already (file and message): a file that stays bad is reported once. */
    const reported = new Set<string>()
    let stopped = false
    const report = (err: unknown) => {
      const key = TurnlogError.is(err) ? `${err.code}\u0000${err.message}` : String(err)
      if (reported.has(key)) return
      reported.add(key)
      try {
        onError?.(err)
      } catch {
        // a listener's throw stays with the listener
      }
    }
    const scan = () => {
      if (stopped) return
      let recs: Map<string, ClaimRecord>
      try {
        recs = readClaims(this.dir, this.sessionId, report, this.fs)
      } catch (err) {
        report(err)
        return
      }
      for (const [id, rec] of recs) {
        if (seen.has(id) || stopped) continue
        seen.add(id)
        try {
          if (!isAnswerClaim(rec)) listener(rec)
          else onAnswer?.(rec)
        } catch (err) {
          report(err)
        }
      }
    }
    let watcher: { close(): void } | null = null
    const claims = this.fs.claims
    if (claims.watch !== undefined) {
      try {
        claims.mkdir(d, { recursive: true })
        watcher = claims.watch(d, () => scan())
      } catch {
        watcher = null // no watch here: the poll alone
      }
    }
    const poll = setInterval(scan, this.pollMs)
    poll.unref()
    const stop = () => {
      if (stopped) return
      stopped = true
      clearInterval(poll)
      try {
        watcher?.close()
      } catch {
        // closing a hint
      }
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
