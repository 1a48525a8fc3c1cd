/**
 * Reading a valid log for the one-invariant mutators (mutations.ts): its turns and steps with the
 * seqs of the events a mutation targets.
 */
import type { Ev } from './mutation-edit.js'
import type { LogEvent } from '../../events/envelope.js'

export interface StepInfo {
  turn: number
  step: number
  start: number
  end: number
  outcome: string
  /** The non-interrupted assistant/message, if any. */
  message: number | null
  messageFinish: string | null
  /** Appended tool/calls and tool/results, in log order. */
  calls: number[]
  results: number[]
  chunks: number[]
}

export interface TurnInfo {
  turn: number
  start: number
  end: number
  retry: boolean
  reason: string
  steps: StepInfo[]
}

export function scan(log: readonly LogEvent[]): TurnInfo[] {
  const turns: TurnInfo[] = []
  let t: TurnInfo | null = null
  let s: StepInfo | null = null
  for (const e of log) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const d = e.data as any
    switch (e.type) {
      case 'turn/start':
        t = { turn: d.turn, start: e.seq, end: -1, retry: d.cause !== undefined, reason: '', steps: [] }
        turns.push(t)
        break
      case 'turn/end':
        if (t) {
          t.end = e.seq
          t.reason = d.reason.kind
        }
        t = null
        break
      case 'step/start':
        s = { turn: d.turn, step: d.step, start: e.seq, end: -1, outcome: '', message: null, messageFinish: null, calls: [], results: [], chunks: [] }
        t?.steps.push(s)
        break
      case 'step/end':
        if (s) {
          s.end = e.seq
          s.outcome = d.outcome.kind
        }
        s = null
        break
      case 'assistant/chunk':
        s?.chunks.push(e.seq)
        break
      case 'assistant/message':
        if (s && e.surfaceOp === 'append' && !d.interrupted) {
          s.message = e.seq
          s.messageFinish = d.finish
        }
        break
      case 'tool/call':
        s?.calls.push(e.seq)
        break
      case 'tool/result':
        if (s && e.surfaceOp === 'append') s.results.push(e.seq)
        break
      default:
        break
    }
  }
  return turns
}

export const seqsOf = (log: readonly LogEvent[], pred: (e: LogEvent) => boolean): number[] => log.filter(pred).map((e) => e.seq)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const dataOf = (e: LogEvent): any => e.data

export function freshSplice(id: string): Omit<Ev, 'seq' | 'time'> {
  return {
    type: 'agent/inbox/spliced',
    data: { target: 'next-turn', start: 0, inserted: [{ id, role: 'user', content: [{ type: 'text', text: 'mutant' }], source: { kind: 'user' } }] },
  }
}
