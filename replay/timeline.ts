/**
 * The timeline of a session (the inspector page and `turnlog export --format chrome-trace`). Its shapes, read from the log in one pass: turns, steps, model streams, tool calls
 * (with the pool's lanes), compaction brackets, parked times (docs/spec/lifecycle.md §9) and point marks
 * (retries, cancels, repairs, prunes, failures, verify violations; approval requests and
 * decisions, wakeups set / fired / canceled, child sessions). Positions only: every number about the session's *state* (history,
 * inbox, pending calls, usage) comes from the project's reducers (`stateAt`): inspector/src/cursor.ts.
 *
 * Time axis: x is the event's time with idle gaps compressed (a gap longer than `GAP_CAP_MS` takes
 * `GAP_CAP_MS` of axis and is marked with its real length). Logs written faster than the clock
 * ticks (all events within a few ms) read better by seq, so `axis: 'seq'` is offered too.
 */
import type { LogEvent } from '../events/envelope.js'
import type { Violation } from '../events/invariants/types.js'
import { endsWait } from '../reducers/transcript-waits.js'
import { budgetText, decidedByText, durationText } from './labels.js'

export const GAP_CAP_MS = 1500

export type Row = 'turn' | 'step' | 'model' | 'compaction' | 'parked' | 'marks' | `tool${number}`

export interface Bar {
  row: Row
  /** The seq the bar starts at (a click selects it). */
  seq: number
  endSeq: number
  t0: number
  t1: number
  label: string
  kind: 'turn' | 'step' | 'model' | 'tool' | 'compaction' | 'parked'
  /** ok | failed | aborted | interrupted | open | retry | error */
  status: string
  lane?: number
}

export interface Mark {
  seq: number
  t: number
  kind: 'retry' | 'cancel' | 'repair' | 'prune' | 'failure' | 'violation' | 'steer' | 'resume' | 'gap'
    /** docs/spec/lifecycle.md §9, §10: an approval request, its decision, a wakeup set / fired / canceled, a child session */
    | 'approval' | 'decision' | 'schedule' | 'child'
  label: string
}

export interface TokenPoint {
  seq: number
  input: number
  output: number
  compaction: boolean
}

export interface Timeline {
  bars: Bar[]
  marks: Mark[]
  lanes: number
  tokens: TokenPoint[]
  /** seqs of compaction ends (and summaries): the points where the request size drops. */
  compactionSeqs: number[]
  /** axis position of each seq (compressed time, ms). */
  tx: Float64Array
  gaps: Array<{ seq: number; realMs: number }>
  turnStarts: number[]
}

/** Builds the timeline of `events` (all of them; a live tail rebuilds it, O(n)). */
export function buildTimeline(events: readonly LogEvent[], violations: readonly Violation[]): Timeline {
  const bars: Bar[] = []
  const marks: Mark[] = []
  const tokens: TokenPoint[] = []
  const compactionSeqs: number[] = []
  const turnStarts: number[] = []
  const gaps: Array<{ seq: number; realMs: number }> = []
  const tx = new Float64Array(events.length)
  let x = 0
  for (let i = 0; i < events.length; i++) {
    if (i > 0) {
      const dt = Math.max(0, num(events[i]!.time) - num(events[i - 1]!.time))
      if (dt > GAP_CAP_MS) gaps.push({ seq: i, realMs: dt })
      x += Math.min(dt, GAP_CAP_MS)
    }
    tx[i] = x
  }
  let turn: Bar | null = null
  let step: Bar | null = null
  let model: Bar | null = null
  let compaction: Bar | null = null
  // docs/spec/lifecycle.md §9: the open parked time (a step/parked to the first event that ends the wait)
  let parked: Bar | null = null
  const calls = new Map<string, Bar>()
  const laneEnds: number[] = [] // per lane, the axis x where its last bar ends
  const openCalls: Bar[] = []
  const last = events.length - 1
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    const d = (e.data ?? {}) as Record<string, unknown>
    const t = tx[i]!
    if (parked && endsWait(e.type)) {
      close(parked, i, t, 'ok', `${parked.label} · ${durationText(num(e.time) - num(events[parked.seq]!.time))}`)
      parked = null
    }
    switch (e.type) {
      case 'turn/start': {
        const cause = d.cause as { kind?: string } | undefined
        turn = { row: 'turn', seq: i, endSeq: last, t0: t, t1: tx[last]!, label: `turn ${str(d.turn)}`, kind: 'turn', status: 'open' }
        bars.push(turn)
        turnStarts.push(i)
        if (cause) marks.push({ seq: i, t, kind: 'retry', label: `turn ${str(d.turn)} retries (${str(cause.kind)})` })
        break
      }
      case 'turn/end': {
        const reason = (d.reason ?? {}) as { kind?: string }
        const k = str(reason.kind)
        if (turn) close(turn, i, t, statusOfEnd(k), `turn ${str(d.turn)} · ${k === 'budget' ? budgetText(reason as Record<string, unknown>) : k}`)
        if (k === 'aborted') marks.push({ seq: i, t, kind: 'cancel', label: `turn ${str(d.turn)} cancelled` })
        if (k === 'interrupted' || k === 'forked') marks.push({ seq: i, t, kind: 'repair', label: `turn ${str(d.turn)} closed by repair (${k})` })
        if (k === 'error') marks.push({ seq: i, t, kind: 'failure', label: `turn ${str(d.turn)} ended in error` })
        turn = null
        break
      }
      case 'step/start':
        step = { row: 'step', seq: i, endSeq: last, t0: t, t1: tx[last]!, label: `step ${str(d.turn)}.${str(d.step)}`, kind: 'step', status: 'open' }
        bars.push(step)
        break
      case 'step/end': {
        const k = str(((d.outcome ?? {}) as { kind?: string }).kind)
        if (step) close(step, i, t, k === 'failed' ? 'failed' : k === 'aborted' ? 'aborted' : 'ok', `step ${str(d.turn)}.${str(d.step)} · ${k}`)
        if (model) close(model, i, t, k === 'failed' ? 'failed' : 'aborted', model.label)
        if (k === 'failed') marks.push({ seq: i, t, kind: 'failure', label: `step ${str(d.turn)}.${str(d.step)} failed` })
        if (k === 'aborted') marks.push({ seq: i, t, kind: 'cancel', label: `step ${str(d.turn)}.${str(d.step)} aborted` })
        for (const c of openCalls) close(c, i, t, 'aborted', c.label)
        openCalls.length = 0
        step = null
        model = null
        break
      }
      case 'request/header':
        if (d.reason === 'resume') marks.push({ seq: i, t, kind: 'resume', label: 'resumed (request header)' })
        break
      case 'assistant/chunk':
        if (!model) {
          model = { row: 'model', seq: i, endSeq: last, t0: t, t1: tx[last]!, label: `model ${str(d.turn)}.${str(d.step)}`, kind: 'model', status: 'open' }
          bars.push(model)
        }
        break
      case 'assistant/message': {
        const m = d.message as { content?: Array<{ type?: string }> } | undefined
        const u = (d.usage ?? null) as { inputTokens?: number; outputTokens?: number } | null
        if (!model) {
          model = { row: 'model', seq: i, endSeq: i, t0: t, t1: t, label: `model ${str(d.turn)}.${str(d.step)}`, kind: 'model', status: 'ok' }
          bars.push(model)
        }
        close(model, i, t, 'ok', `model ${str(d.turn)}.${str(d.step)} · ${str(d.finish)}${u ? ` · ${num(u.inputTokens)} in / ${num(u.outputTokens)} out` : ''}`)
        model = null
        tokens.push({ seq: i, input: num(u?.inputTokens), output: num(u?.outputTokens), compaction: false })
        void m
        break
      }
      case 'tool/call': {
        const lane = laneFree(laneEnds, openCalls, t)
        const b: Bar = { row: `tool${lane}`, seq: i, endSeq: last, t0: t, t1: tx[last]!, label: `${str(d.name)} ${str(d.callId)}`, kind: 'tool', status: 'open', lane }
        laneEnds[lane] = Number.POSITIVE_INFINITY
        bars.push(b)
        calls.set(str(d.callId), b)
        openCalls.push(b)
        break
      }
      case 'tool/result': {
        const b = calls.get(str(d.callId))
        const err = d.error as { message?: string } | undefined
        if (b && b.status === 'open') {
          close(b, i, t, err ? 'error' : 'ok', `${b.label}${err ? ' · error' : ''}`)
          laneEnds[b.lane!] = t
          openCalls.splice(openCalls.indexOf(b), 1)
        }
        if (err) marks.push({ seq: i, t, kind: 'failure', label: `tool ${b?.label ?? str(d.callId)} error: ${str(err.message)}` })
        break
      }
      case 'step/parked':
        if (!parked) {
          const ids = Array.isArray(d.approvals) ? d.approvals.map(str) : []
          parked = { row: 'parked', seq: i, endSeq: last, t0: t, t1: tx[last]!, label: `parked for ${ids.join(', ')}`, kind: 'parked', status: 'open' }
          bars.push(parked)
        }
        break
      case 'tool/approval-requested':
        marks.push({ seq: i, t, kind: 'approval', label: `approval ${str(d.approvalId)} asked for call ${str(d.callId)}${typeof d.question === 'string' ? `: ${d.question}` : ''}` })
        break
      case 'tool/approval-decided': {
        const dec = (d.decision ?? {}) as { kind?: unknown; reason?: unknown; arguments?: unknown }
        const how = dec.kind === 'approve' ? `approved${typeof dec.arguments === 'string' ? ' with edited arguments' : ''}` : `denied${typeof dec.reason === 'string' ? `: ${dec.reason}` : ''}`
        marks.push({ seq: i, t, kind: 'decision', label: `approval ${str(d.approvalId)} ${how} by ${decidedByText(d.by)}` })
        break
      }
      case 'schedule/created':
        marks.push({ seq: i, t, kind: 'schedule', label: `wakeup ${str(d.scheduleId)} set for ${typeof d.due === 'number' ? new Date(d.due).toISOString() : '?'}${typeof d.every === 'number' ? `, every ${durationText(d.every)}` : ''}` })
        break
      case 'schedule/fired':
        marks.push({ seq: i, t, kind: 'schedule', label: `wakeup ${str(d.scheduleId)} fired${d.dropped === true ? ' (dropped: busy)' : ''}${typeof d.missed === 'number' && d.missed > 0 ? `, ${d.missed} missed` : ''}` })
        break
      case 'schedule/canceled':
        marks.push({ seq: i, t, kind: 'schedule', label: `wakeup ${str(d.scheduleId)} canceled` })
        break
      case 'child/spawned':
        marks.push({ seq: i, t, kind: 'child', label: `child session ${str(d.child)} (call ${str(d.callId)})` })
        break
      case 'llm/retry':
        marks.push({ seq: i, t, kind: 'retry', label: `request retry, attempt ${str(d.attempt)} after ${str(d.delayMs)} ms` })
        break
      case 'compaction/start':
        compaction = { row: 'compaction', seq: i, endSeq: last, t0: t, t1: tx[last]!, label: `compaction ${str(d.compactionId)}`, kind: 'compaction', status: 'open' }
        bars.push(compaction)
        break
      case 'compaction/summary': {
        const u = (d.usage ?? null) as { inputTokens?: number; outputTokens?: number } | null
        if (u) tokens.push({ seq: i, input: num(u.inputTokens), output: num(u.outputTokens), compaction: true })
        break
      }
      case 'compaction/end': {
        const err = d.error as { message?: string } | undefined
        if (compaction) close(compaction, i, t, err ? 'failed' : 'ok', `${compaction.label}${err ? ` · ${str(err.message)}` : ''}`)
        compaction = null
        if (!err) compactionSeqs.push(i)
        break
      }
      case 'compaction/prune':
        marks.push({ seq: i, t, kind: 'prune', label: `pruned result of ${str(d.callId)} (${str(d.originalChars)} chars)` })
        break
      case 'resume/given-up': {
        // docs/spec/lifecycle.md §8: resume stopped re-running the turn; the messages it names stay unanswered
        const msgs = Array.isArray(d.messages) ? d.messages : []
        marks.push({ seq: i, t, kind: 'failure', label: `${givenUpText(d)}: ${msgs.length} message(s) unanswered (${msgs.slice(0, 3).map(str).join(', ')}${msgs.length > 3 ? ', …' : ''})` })
        break
      }
      case 'user/message': {
        const src = ((d.message as { source?: { kind?: string } } | undefined)?.source?.kind)
        if (src === 'steer') marks.push({ seq: i, t, kind: 'steer', label: 'steering message entered' })
        break
      }
      default:
        break
    }
  }
  for (const g of gaps) marks.push({ seq: g.seq, t: tx[g.seq]!, kind: 'gap', label: `idle ${g.realMs} ms compressed` })
  for (const v of violations) {
    const seq = Math.min(Math.max(0, v.seq), last)
    if (last >= 0) marks.push({ seq, t: tx[seq]!, kind: 'violation', label: `${v.invariant}: ${v.message}` })
  }
  marks.sort((a, b) => a.seq - b.seq)
  const lanes = Math.max(1, laneEnds.length)
  return { bars, marks, lanes, tokens, compactionSeqs, tx, gaps, turnStarts }
}

function laneFree(laneEnds: number[], open: Bar[], t: number): number {
  for (let l = 0; l < laneEnds.length; l++) {
    if (laneEnds[l]! <= t && !open.some((c) => c.lane === l)) return l
  }
  laneEnds.push(0)
  return laneEnds.length - 1
}

function close(b: Bar, seq: number, t: number, status: string, label: string): void {
  b.endSeq = seq
  b.t1 = t
  b.status = status
  b.label = label
}

function statusOfEnd(kind: string): string {
  if (kind === 'completed') return 'ok'
  if (kind === 'error' || kind === 'blocked') return 'failed'
  if (kind === 'aborted') return 'aborted'
  if (kind === 'interrupted' || kind === 'forked') return 'interrupted'
  return 'warn'
}

/**
 * "turn 4 given up after 3 runs" for a `resume/given-up` event's data (docs/spec/lifecycle.md §8), read as
 * untrusted log content: the CLI's replay summary, `turnlog sessions` and the inspector use it.
 */
export function givenUpText(d: Record<string, unknown>): string {
  const runs = num(d.runs) + num(d.unreachedRuns)
  const why = d.reason === 're-insertions' ? `${num(d.maxResumeRuns) * 3} re-insertions`
    : `${runs} run${runs === 1 ? '' : 's'}${num(d.unreachedRuns) > 0 ? ` (${num(d.unreachedRuns)} before their request)` : ''}`
  return `turn ${str(d.turn)} given up after ${why}, maxResumeRuns ${str(d.maxResumeRuns)}`
}

/** A log value as text for a label (never HTML: labels are drawn on canvas or set as text). */
export function str(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (v === undefined || v === null) return '?'
  try {
    return JSON.stringify(v)
  } catch {
    return '?'
  }
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0
}
