/**
 * Lifecycle positions: where in the session a recorded input arrived, independent of seq.
 * A position is the last lifecycle event before the input, named by (turn, step, event type, how
 * many events of that type the step had logged by then): `turn 2 · step 1 · tool/result #2`. The
 * same counter runs over the golden and over the re-run, so "the same position" is found even when
 * the re-run logs a different number of events (another request header, other chunks). Sends,
 * edits and decisions from outside (a person's, an expiry) are never positions (they are the
 * inputs); the agent's own splices (claims, tool contexts) and decisions (superseded, canceled) are.
 */
import type { EventOf, LogEvent } from '../events/index.js'
import { isAgentSplice } from './agent-splice.js'

/** Counts lifecycle events as they are appended and names each one's position. */
export class PositionCounter {
  #turn = 0
  #step = 0
  readonly #counts = new Map<string, number>()

  /** The position key of `e`, or null for an input (a send or an edit: never a position). */
  next(e: LogEvent): string | null {
    if (e.type === 'agent/inbox/spliced' && !isAgentSplice((e as EventOf<'agent/inbox/spliced'>).data)) return null
    if (e.type === 'tool/approval-decided' && ['user', 'expired'].includes((e as EventOf<'tool/approval-decided'>).data.by.kind)) return null
    // likewise a person's answer to an input round, or its expiry (docs/spec/lifecycle.md §11)
    if (e.type === 'tool/input-provided' && ['user', 'expired'].includes((e as EventOf<'tool/input-provided'>).data.by.kind)) return null
    if (e.type === 'turn/start') {
      this.#turn = (e as EventOf<'turn/start'>).data.turn
      this.#step = 0
    } else if (e.type === 'step/start') this.#step = (e as EventOf<'step/start'>).data.step
    const base = `${this.#turn}|${this.#step}|${e.type}`
    const n = (this.#counts.get(base) ?? 0) + 1
    this.#counts.set(base, n)
    return `${base}|${n}`
  }

  /** The open turn number as counted (the last started). */
  get turn(): number {
    return this.#turn
  }
}

/** Readable form of a position key: `turn 2 · step 1 · tool/result #2`. */
export function describePosition(key: string): string {
  const [turn, step, type, n] = key.split('|')
  return `turn ${turn} · ${step === '0' ? 'before its first step' : `step ${step}`} · after ${type} #${n}`
}

/** The turn of a position key. */
export function turnOfPosition(key: string): number {
  return Number(key.split('|')[0])
}
