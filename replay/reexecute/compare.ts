/**
 * The comparison: every event the agent appends is compared with the recorded one at its seq;
 * the first difference ends the run as a divergence (mismatch, missing, extra) with a readable diff.
 */
import { deepEqual as isDeepStrictEqual } from '../../events/deep-equal.js'
import type { LogEvent } from '../../events/index.js'
import { diffLines } from '../diff.js'
import type { Divergence } from './options.js'
import type { Host } from './state.js'

export function onAppend(rx: Host, e: LogEvent): void {
  if (rx.done) return
  const expected = rx.rec[e.seq] ?? null
  if (expected === null) {
    // The recording ends between turns and the agent opens the next one (queued work, a retry):
    // the recorded process stopped there (a crash after the turn's end leaves nothing to close).
    if (e.type === 'turn/start' && e.seq === rx.rec.length && endsBetweenTurns(rx)) {
      rx.opts.trace?.(`the recording ends at seq ${e.seq - 1} between turns: its process stopped there`)
      rx.agent.session.close()
      rx.end()
      return
    }
    diverge(rx, { seq: e.seq, expected: null, actual: e, kind: 'extra' })
    return
  }
  if (!same(rx, expected, e)) {
    diverge(rx, { seq: e.seq, expected, actual: e, kind: 'mismatch' })
    return
  }
  // the last event rx process wrote before it died: it appends nothing more
  if (rx.switches[rx.switchAt]?.k === e.seq + 1) rx.agent.session.close()
  rx.schedule()
}

/** The recording's last core event is a `turn/end` (nothing is open at its end). */
export function endsBetweenTurns(rx: Host): boolean {
  for (let i = rx.rec.length - 1; i >= rx.start; i--) {
    const t = rx.rec[i]!.type
    if (t === 'turn/end') return true
    if (t !== 'agent/inbox/spliced') return false
  }
  return false
}

export function same(rx: Host, a: LogEvent, b: LogEvent): boolean {
  if (rx.opts.compareTime === false) return isDeepStrictEqual({ ...a, time: 0 }, { ...b, time: 0 })
  return isDeepStrictEqual(a, b)
}

export function diverge(rx: Host, d: Omit<Divergence, 'diff'>): void {
  if (rx.done) return
  const head = d.kind === 'extra'
    ? `seq ${d.seq}: the recorded log ends at seq ${rx.rec.length - 1}, but the agent ${d.actual ? `appended ${d.actual.type}` : d.waiting ?? 'did not stop'}`
    : d.kind === 'missing'
      ? `seq ${d.seq}: expected ${d.expected!.type}, but the agent ${d.waiting ?? 'appended nothing'}`
      : `seq ${d.seq}: expected ${d.expected!.type}, got ${d.actual!.type}`
  const lines = d.kind === 'mismatch' ? diffLines(d.expected, d.actual) : []
  rx.divergence = { ...d, diff: [head, ...lines].join('\n') }
  rx.end()
}
