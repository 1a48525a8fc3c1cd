/**
 * What a recording holds, indexed once before a run: each step's chunks, end and tool results,
 * the turns' ends, the compaction brackets, the process boundaries (crashes and restarts), and
 * the turns a cancel left traces in. Pure reading of the log.
 */
import { deepEqual as isDeepStrictEqual } from '../../events/deep-equal.js'
import type { EventOf, LogEvent, StreamChunk } from '../../events/index.js'
import { isRunnableCall } from '../../events/index.js'
import { computeClosers } from '../closers.js'
import { isCancelEffect, key2, key3 } from './facts.js'

export interface StepRecord {
  turn: number
  step: number
  chunks: StreamChunk[]
  /** How the model stream ends after its chunks. */
  end: { kind: 'return' } | { kind: 'throw'; failure: EventOf<'step/end'>['data']['outcome'] & { kind: 'failed' } } | { kind: 'hang' }
  outcome: EventOf<'step/end'>['data']['outcome'] | null
  /** The step's non-interrupted message has tool calls. */
  hasTools: boolean
  /** callKey → recorded result (the appended one). */
  results: Map<string, EventOf<'tool/result'>>
  /** Real (not synthetic ABORTED_BEFORE_DISPATCH) calls, in order. */
  realCalls: string[]
  /** Calls whose approval was denied (their result is the denial's, no body ran). */
  denied: Set<string>
}

/** A recorded compaction bracket: how its summary call ended. */
export interface BracketRecord {
  id: string
  summary: EventOf<'compaction/summary'> | null
  end: EventOf<'compaction/end'> | null
}

/**
 * A process boundary: a crash (repair's closers `k..end-1`, served as recorded, then the next
 * process on `0..end`) or a clean restart (`k == end`).
 */
export interface Switch { k: number; end: number }

export class Recording {
  readonly start: number
  readonly steps = new Map<string, StepRecord>()
  readonly turnEnds = new Map<number, { seq: number; reason: EventOf<'turn/end'>['data']['reason'] }>()
  readonly brackets = new Map<string, BracketRecord>()
  /** Turns with a trace only a cancel leaves (an aborted step, an ABORTED result or summary, an
   * interrupted message the process wrote). */
  readonly cancelTraced = new Set<number>()
  /** The process boundaries, in log order. */
  readonly switches: Switch[] = []

  constructor(readonly rec: readonly LogEvent[]) {
    let seed = -1
    for (let i = 0; i < rec.length; i++) if (rec[i]!.type === 'session/end-seed') seed = i
    this.start = seed + 1
    this.#index()
    this.#findSwitches()
    this.#findCancelTraces()
  }

  /**
   * Fills `cancelTraced`: turns with an event only a cancel makes (an aborted step, an ABORTED
   * result or summary, an interrupted message the process wrote). Repair's closers also write
   * interrupted messages: those inside a process boundary's closers are not traces.
   */
  #findCancelTraces(): void {
    let turn: number | null = null
    let sw = 0
    for (let i = this.start; i < this.rec.length; i++) {
      const e = this.rec[i]!
      while (this.switches[sw] !== undefined && this.switches[sw]!.end <= i) sw++
      const inClosers = this.switches[sw] !== undefined && this.switches[sw]!.k <= i
      if (e.type === 'turn/start') turn = (e as EventOf<'turn/start'>).data.turn
      else if (e.type === 'turn/end') turn = null
      else if (turn !== null && !inClosers && e.type !== 'tool/call' && isCancelEffect(e, this.rec[i + 1])) this.cancelTraced.add(turn)
    }
  }

  /** Fills `#switches` (see there). */
  #findSwitches(): void {
    const ev = this.rec
    // a process created on a non-empty log logs `request/header {reason: 'resume'}` at its first request
    let resumeHeaderDue = this.start > 0
    let lastTurnEnd = this.start - 1
    let turnStart = -1
    let parked = -1
    for (let i = this.start; i < ev.length; i++) {
      const e = ev[i]!
      if (e.type === 'turn/start') turnStart = i
      else if (e.type === 'step/parked') parked = i
      else if (e.type === 'request/header') {
        if ((e as EventOf<'request/header'>).data.reason === 'resume' && !resumeHeaderDue) {
          // a clean restart: the new process took over when the last turn had ended (on a log that
          // is not empty: a process on an empty log logs `initial`), or, inside a turn, where it
          // last stood parked (docs/spec/lifecycle.md §9: the only quiet point inside a turn; the decisions
          // after it are re-issued to the new process, which restores the parked step)
          const b = parked > turnStart && parked > lastTurnEnd ? parked + 1 : Math.max(lastTurnEnd + 1, 1)
          if (b > (this.switches.at(-1)?.end ?? this.start)) this.switches.push({ k: b, end: b })
        }
        resumeHeaderDue = false
      } else if (e.type === 'turn/end') {
        lastTurnEnd = i
        if ((e as EventOf<'turn/end'>).data.reason.kind === 'interrupted' && turnStart >= this.start) {
          const k = this.#closersStart(turnStart, i)
          if (k !== null) {
            this.switches.push({ k, end: i + 1 })
            resumeHeaderDue = true
          }
        } else if (this.#retryLost(turnStart, i)) {
          // the process died between the turn's end and the retry turn it owed: the next process
          // starts on the log as it stood after the end (it does not retry; repair closes nothing)
          this.switches.push({ k: i + 1, end: i + 1 })
          resumeHeaderDue = true
        }
      }
    }
  }

  /**
   * The turn `turnStart..end` ended `error` after a retry was authorised in the log (the retry
   * policy's `llm/retry`, or an overflow recovery's compaction that succeeded, after the failed
   * step), but no retry turn of it follows (after only splices, the next event is something
   * else): the process that owed the retry turn died right after the `turn/end`. A retry a hook
   * authorised without logging anything cannot be told from a changed rule: not inferred.
   */
  #retryLost(turnStart: number, end: number): boolean {
    const ev = this.rec
    const d = (ev[end] as EventOf<'turn/end'>).data
    if (d.reason.kind !== 'error' || turnStart < this.start) return false
    let evidence = false
    for (let i = end - 1; i > turnStart && ev[i]!.type !== 'step/end'; i--) {
      const x = ev[i]!
      if (x.type === 'llm/retry' || (x.type === 'compaction/end' && (x as EventOf<'compaction/end'>).data.error === undefined)) evidence = true
    }
    if (!evidence) return false
    let j = end + 1
    while (ev[j]?.type === 'agent/inbox/spliced') j++
    const next = ev[j]
    if (next === undefined) return false // the recording's end: see `#endsBetweenTurns`
    const cause = next.type === 'turn/start' ? (next as EventOf<'turn/start'>).data.cause : undefined
    return !(cause?.kind === 'retry' && cause.of === d.turn)
  }

  /**
   * Where repair's closers that end with the `turn/end {interrupted}` at `end` begin: the smallest
   * `k` for which the closers of `rec[0..k)` are exactly `rec[k..end]`, or null when none is (the
   * closers were not repair's: the log diverges there). The smallest: a process cannot write what
   * only repair writes (an interrupted message without a cancel, a TOOL_OUTCOME_UNKNOWN result);
   * where a closer equals what the process would have written (a step's natural `step/end`), the
   * process dies just before it, which changes nothing in the log.
   */
  #closersStart(turnStart: number, end: number): number | null {
    const closerTypes = new Set(['turn/end', 'compaction/end', 'step/end', 'tool/result', 'tool/call', 'assistant/message', 'user/message'])
    let lo = end
    while (lo - 1 > turnStart && closerTypes.has(this.rec[lo - 1]!.type)) lo--
    const recorded = (k: number) => this.rec.slice(k, end + 1)
    for (let k = lo; k <= end; k++) {
      const prefix = this.rec.slice(0, k)
      if (isDeepStrictEqual(computeClosers(prefix, { reason: 'interrupted' }), recorded(k))) return k
    }
    return null
  }

  #index(): void {
    let cur: StepRecord | null = null
    const ev = this.rec
    for (let i = this.start; i < ev.length; i++) {
      const e = ev[i]!
      switch (e.type) {
        case 'step/start': {
          const d = (e as EventOf<'step/start'>).data
          cur = { turn: d.turn, step: d.step, chunks: [], end: { kind: 'hang' }, outcome: null, hasTools: false, results: new Map(), realCalls: [], denied: new Set() }
          this.steps.set(key2(d.turn, d.step), cur)
          break
        }
        case 'assistant/chunk':
          cur?.chunks.push((e as EventOf<'assistant/chunk'>).data.chunk)
          break
        case 'assistant/message': {
          const d = (e as EventOf<'assistant/message'>).data
          if (cur && e.surfaceOp === 'append' && !d.interrupted) {
            cur.end = { kind: 'return' }
            cur.hasTools = d.message.content.some(isRunnableCall)
          }
          break
        }
        case 'tool/call': {
          const d = (e as EventOf<'tool/call'>).data
          const next = ev[i + 1]
          const synthetic = next?.type === 'tool/result' && (next as EventOf<'tool/result'>).data.callId === d.callId &&
            (next as EventOf<'tool/result'>).data.error?.code === 'ABORTED_BEFORE_DISPATCH'
          if (cur && !synthetic) cur.realCalls.push(key3(d.turn, d.step, d.callId))
          break
        }
        case 'tool/approval-decided': {
          const d = (e as EventOf<'tool/approval-decided'>).data
          if (cur && d.decision.kind === 'deny') cur.denied.add(key3(d.turn, d.step, d.callId))
          break
        }
        case 'tool/result': {
          const d = (e as EventOf<'tool/result'>).data
          if (cur && e.surfaceOp === 'append') cur.results.set(key3(d.turn, d.step, d.callId), e as EventOf<'tool/result'>)
          break
        }
        case 'step/end': {
          const d = (e as EventOf<'step/end'>).data
          if (cur) {
            cur.outcome = d.outcome
            if (cur.end.kind !== 'return' && d.outcome.kind === 'failed') cur.end = { kind: 'throw', failure: d.outcome }
          }
          cur = null
          break
        }
        case 'turn/end': {
          const d = (e as EventOf<'turn/end'>).data
          this.turnEnds.set(d.turn, { seq: e.seq, reason: d.reason })
          break
        }
        case 'compaction/start': {
          const id = (e as EventOf<'compaction/start'>).data.compactionId
          this.brackets.set(id, { id, summary: null, end: null })
          break
        }
        case 'compaction/summary': {
          const b = this.brackets.get((e as EventOf<'compaction/summary'>).data.compactionId)
          if (b) b.summary = e as EventOf<'compaction/summary'>
          break
        }
        case 'compaction/end': {
          const b = this.brackets.get((e as EventOf<'compaction/end'>).data.compactionId)
          if (b) b.end = e as EventOf<'compaction/end'>
          break
        }
      }
    }
  }
}
