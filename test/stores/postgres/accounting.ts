/**
 * The accounting of acknowledged messages after a fault run (issue 24 items 1 and 8, docs/spec/lifecycle.md §8):
 * each acknowledged message must be moved into its session's log exactly once (one splice),
 * logged once as a user message (itself or one §8 resume copy, copies of copies included), and
 * then either answered (a complete final answer follows) or named by a `resume/given-up` record.
 * Anything else is a problem, named with its session and id; every log must verify (L13 against
 * the limit each resume turn recorded).
 */
import type { LogStore } from '../../../stores/types.js'
import { answered, givenUpIds, moves, readAll, verifyOk } from './helpers.js'

export interface Accounting {
  acknowledged: number
  answered: number
  givenUp: number
  /** Moved more than once, or logged more than once (itself or as copies): answered twice. */
  duplicated: number
  /** Never moved into the log at all. */
  lost: number
  /** Logged, neither answered nor named as given up. */
  silent: number
  /** Every violation, one line each (`sid/id …` or `sid: verify …`). */
  problems: string[]
}

/** Reads every session of `sent` (session id → acknowledged message ids, in send order) back. */
export async function account(store: Pick<LogStore, 'open'>, sent: ReadonlyMap<string, readonly string[]>): Promise<Accounting> {
  const out: Accounting = { acknowledged: 0, answered: 0, givenUp: 0, duplicated: 0, lost: 0, silent: 0, problems: [] }
  for (const [sid, ids] of sent) {
    const events = await readAll(store, sid)
    const v = verifyOk(events)
    if (v.length) out.problems.push(`${sid}: ${v.slice(0, 3).join('; ')}`)
    const m = moves(events)
    const { count, unanswered } = answered(events)
    const open = new Set(unanswered)
    const named = givenUpIds(events)
    for (const id of ids) {
      out.acknowledged++
      const inserted = m.inserted.get(id) ?? 0
      if (inserted === 0) {
        out.lost++
        out.problems.push(`${sid}/${id} never moved into the log`)
        continue
      }
      // §8 copies, and copies of copies when a resume turn was itself interrupted
      const copies: string[] = []
      for (let q = [id]; q.length; ) for (const c of m.resumedFrom.get(q.shift()!) ?? []) copies.push(c), q.push(c)
      const logged = [id, ...copies].filter((x) => count.has(x))
      const twice = inserted > 1 || (m.messages.get(id) ?? 0) > 1 || logged.length > 1
      if (twice) {
        out.duplicated++
        out.problems.push(`${sid}/${id} inserted ${inserted} times, logged as ${logged.join(', ')} (${m.messages.get(id) ?? 0} times itself)`)
      } else if (logged.length === 1 && !open.has(logged[0]!)) out.answered++
      else if (named.has(id)) out.givenUp++
      else {
        out.silent++
        out.problems.push(`${sid}/${id} silent: neither answered nor named as given up (logged as ${logged.join(', ') || 'nothing'})`)
      }
    }
  }
  return out
}

/** One line for the test's output and the closing note. */
export function accountingLine(a: Accounting): string {
  return `${a.acknowledged} acknowledged, ${a.answered} answered, ${a.givenUp} given up, ${a.duplicated} duplicated, ${a.lost} lost, ${a.silent} silent`
}
