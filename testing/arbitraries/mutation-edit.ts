/**
 * Editing a log for the one-invariant mutators (mutations.ts): a mutable copy of the events
 * where events can be changed, inserted and removed, and every seq reference (`sourceEventSeqs`, a
 * replace range, `shadowedSeq`, `shadowedSeqs`) renumbered when the log is done.
 */
import type { SurfaceOp, LogEvent } from '../../events/envelope.js'
import type { LogInvariant } from '../../events/invariants/types.js'

/** A mutable copy of an event. */
export interface Ev {
  seq: number
  time: number
  type: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any
  surfaceOp?: SurfaceOp
  sourceEventSeqs?: number[]
  ignorable?: true
}

/** An event of the new log and the seq it had in the original (null: inserted). */
export interface Item {
  e: Ev
  old: number | null
}

export class Edit {
  items: Item[]
  constructor(log: readonly LogEvent[]) {
    this.items = (structuredClone(log) as Ev[]).map((e, i) => ({ e, old: i }))
  }

  /** Position in the new log of the event that had seq `old`. */
  at(old: number): number {
    return this.items.findIndex((it) => it.old === old)
  }

  ev(old: number): Ev {
    return this.items[this.at(old)]!.e
  }

  insertBefore(old: number, e: Omit<Ev, 'seq' | 'time'>): void {
    this.items.splice(this.at(old), 0, { e: { seq: 0, time: 0, ...e }, old: null })
  }

  insertAfter(old: number, e: Omit<Ev, 'seq' | 'time'>): void {
    this.items.splice(this.at(old) + 1, 0, { e: { seq: 0, time: 0, ...e }, old: null })
  }

  remove(old: number): void {
    this.items.splice(this.at(old), 1)
  }

  swap(oldA: number, oldB: number): void {
    const a = this.at(oldA)
    const b = this.at(oldB)
    const t = this.items[a]!
    this.items[a] = this.items[b]!
    this.items[b] = t
  }

  /** The new log: seq = position, references renumbered, inserted events timed like their predecessor. */
  done(opts: { keepSeq?: number } = {}): LogEvent[] {
    const map = new Map<number, number>()
    this.items.forEach((it, i) => {
      if (it.old !== null) map.set(it.old, i)
    })
    const m = (s: number): number => map.get(s) ?? s
    let prevTime = this.items.find((it) => it.old !== null)?.e.time ?? 0
    return this.items.map((it, i) => {
      const e = it.e
      if (i !== opts.keepSeq) e.seq = i
      if (it.old === null) e.time = prevTime
      prevTime = e.time
      if (e.sourceEventSeqs) e.sourceEventSeqs = e.sourceEventSeqs.map(m)
      if (e.surfaceOp !== undefined && e.surfaceOp !== 'append') {
        e.surfaceOp = { op: 'replace', start: m(e.surfaceOp.start), end: m(e.surfaceOp.end) }
      }
      if (e.type === 'compaction/prune') e.data.shadowedSeq = m(e.data.shadowedSeq)
      if (e.type === 'compaction/summary') e.data.shadowedSeqs = e.data.shadowedSeqs.map(m)
      return e as unknown as LogEvent
    })
  }
}

/** A log broken on purpose: what `arbLogMutation` gives (here, beside the edits that make it, so
 * the candidates and the arbitrary import it from a leaf and not from each other). */
export interface LogMutation {
  /** The mutated log. */
  log: LogEvent[]
  /** The invariant the first violation names. */
  invariant: LogInvariant
  /** The seq (position) of the first violation. */
  seq: number
  /** What was changed, for failure messages. */
  description: string
}
