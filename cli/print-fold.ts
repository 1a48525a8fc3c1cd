/**
 * What `turnlog replay` folds while a log streams past: the replay state (the reducers, applied one
 * event at a time) plus the few facts the printer needs that the state does not hold (tool names by
 * call id, the prompts each turn claimed, event counts). The events themselves are not kept, so
 * memory follows the folded state, not the file (benchmarks B1, B6).
 */
import type { LogEvent, UserMessage } from '../events/index.js'
import { spliceAll } from '../events/splice.js'
import type { ReplayState } from '../reducers/index.js'
import { applyEvent, initialReplayState } from '../reducers/projection.js'

export interface LogCounts {
  events: number
  turns: number
  turnsByEnd: Record<string, number>
  steps: number
  toolCalls: number
  toolErrors: number
  failures: number
  retries: number
  compactions: number
  replaced: number
  /** Child sessions spawned (`child/spawned`), in log order. */
  children: string[]
  /** Wakeups (docs/spec/lifecycle.md §10): `schedule/created`, `schedule/fired` (dropped included), `schedule/canceled`. */
  schedules: { created: number; fired: number; canceled: number }
}

export class PrintFold {
  /** The replay state (live, mutable: read it only). */
  readonly state: ReplayState = initialReplayState()
  /** Tool names by call id (from the `tool/call` events). */
  readonly toolNames = new Map<string, string>()
  /** The prompt(s) each turn claimed from next-turn, by the turn's `turn/start` seq. */
  readonly claimed = new Map<number, UserMessage[]>()
  readonly counts: LogCounts = {
    events: 0, turns: 0, turnsByEnd: Object.create(null) as Record<string, number>, steps: 0, toolCalls: 0, toolErrors: 0,
    failures: 0, retries: 0, compactions: 0, replaced: 0, children: [], schedules: { created: 0, fired: 0, canceled: 0 },
  }
  /** Resume's give-up records (docs/spec/lifecycle.md §8): the data of each `resume/given-up`, with its seq. */
  readonly givenUp: Array<{ seq: number; data: Record<string, unknown> }> = []
  /** The last event folded. */
  last: LogEvent | null = null
  readonly #lists: Record<string, UserMessage[]> = { 'next-turn': [], 'next-step': [] }
  #turnSeq: number | null = null

  /** Folds `events` in order. */
  static of(events: readonly LogEvent[]): PrintFold {
    const f = new PrintFold()
    for (let i = 0; i < events.length; i++) f.apply(events[i]!)
    return f
  }

  apply(e: LogEvent): void {
    applyEvent(this.state, e)
    this.last = e
    const d = e.data as Record<string, any>
    const n = this.counts
    n.events++
    switch (e.type) {
      case 'turn/start':
        n.turns++
        this.#turnSeq = e.seq
        break
      case 'turn/end':
        n.turnsByEnd[d.reason.kind] = (n.turnsByEnd[d.reason.kind] ?? 0) + 1
        this.#turnSeq = null
        break
      case 'step/start': n.steps++; break
      case 'step/end': if (d.outcome.kind === 'failed') n.failures++; break
      case 'tool/call':
        n.toolCalls++
        this.toolNames.set(d.callId as string, d.name as string)
        break
      case 'tool/result': if (e.surfaceOp === 'append' && d.error) n.toolErrors++; break
      case 'llm/retry': n.retries++; break
      case 'resume/given-up': this.givenUp.push({ seq: e.seq, data: d }); break
      case 'compaction/start': n.compactions++; break
      case 'child/spawned': n.children.push(String(d.child)); break
      case 'schedule/created': n.schedules.created++; break
      case 'schedule/fired': n.schedules.fired++; break
      case 'schedule/canceled': n.schedules.canceled++; break
      case 'agent/inbox/spliced': {
        const list = this.#lists[d.target as string]
        if (!list) break
        const removed = spliceAll(list, d.start as number, (d.removedCount as number | undefined) ?? 0, d.inserted as UserMessage[])
        // a claim: no outcome, removes from next-turn inside a turn
        if (d.outcome === undefined && removed.length > 0 && d.target === 'next-turn' && this.#turnSeq !== null) {
          let got = this.claimed.get(this.#turnSeq)
          if (!got) this.claimed.set(this.#turnSeq, (got = []))
          for (let i = 0; i < removed.length; i++) got.push(removed[i]!)
        }
        break
      }
    }
    if (typeof e.surfaceOp === 'object') n.replaced++
  }
}
