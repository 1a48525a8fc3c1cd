/**
 * One-invariant mutators: take a valid log and break exactly one L invariant so that the first
 * violation a checker reports (the lowest seq; within one event, the lowest id) is that invariant
 * at a known seq. Each invariant has several mutations; one applies only where the log has the
 * needed shape (a mutator returns null when no mutation of that invariant applies).
 *
 * Events inserted or removed shift the seqs after them; every reference (`sourceEventSeqs`, a
 * replace range, `shadowedSeq`, `shadowedSeqs`) is renumbered, so nothing but the intended rule
 * breaks before the reported seq.
 */
import fc from 'fast-check'
import type { SurfaceOp, LogEvent } from '../../events/envelope.js'
import type { CheckerOptions, LogInvariant } from '../../events/invariants/types.js'
import { arbValidLog, checkerOptionsFor, type ValidLogOptions } from './valid-log.js'

export const LOG_INVARIANTS: readonly LogInvariant[] = [
  'L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7', 'L8', 'L9', 'L10', 'L11', 'L12', 'L13', 'L14', 'L15', 'L16',
]

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

// ---- editing a log -----------------------------------------------------------------------------

/** A mutable copy of an event. */
interface Ev {
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
interface Item {
  e: Ev
  old: number | null
}

class Edit {
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

// ---- reading a log ------------------------------------------------------------------------------

interface StepInfo {
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

interface TurnInfo {
  turn: number
  start: number
  end: number
  retry: boolean
  reason: string
  steps: StepInfo[]
}

function scan(log: readonly LogEvent[]): TurnInfo[] {
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

const seqsOf = (log: readonly LogEvent[], pred: (e: LogEvent) => boolean): number[] => log.filter(pred).map((e) => e.seq)
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const dataOf = (e: LogEvent): any => e.data

function freshSplice(id: string): Omit<Ev, 'seq' | 'time'> {
  return {
    type: 'agent/inbox/spliced',
    data: { target: 'next-turn', start: 0, inserted: [{ id, role: 'user', content: [{ type: 'text', text: 'mutant' }], source: { kind: 'user' } }] },
  }
}

/** A mutation of one kind (`variant`) at one site. */
interface Candidate {
  variant: string
  make: () => LogMutation
}

/** The candidate mutations of one invariant on one log. */
function candidates(log: readonly LogEvent[], inv: LogInvariant, opts: Required<CheckerOptions>): Candidate[] {
  const out: Candidate[] = []
  const turns = scan(log)
  const steps = turns.flatMap((t) => t.steps)
  const add = (description: string, f: (ed: Edit) => { seq: number; keepSeq?: number }): void => {
    // The variant: the description without its numbers and parenthesised details.
    const variant = description.replace(/\([^)]*\)/g, '').replace(/[\w/-]*\d[\w.-]*/g, '#')
    out.push({
      variant,
      make: () => {
        const ed = new Edit(log)
        const r = f(ed)
        return { log: ed.done(r.keepSeq !== undefined ? { keepSeq: r.keepSeq } : {}), invariant: inv, seq: r.seq, description }
      },
    })
  }
  switch (inv) {
    case 'L1':
      for (let k = 1; k < log.length; k++) {
        add(`a duplicate seq (seq ${k} written as ${k - 1})`, (ed) => {
          ed.ev(k).seq = k - 1
          return { seq: k, keepSeq: k }
        })
      }
      for (let k = 0; k < log.length; k++) {
        add(`a gap in the seqs (seq ${k} written as ${k + 1})`, (ed) => {
          ed.ev(k).seq = k + 1
          return { seq: k, keepSeq: k }
        })
      }
      break
    case 'L2':
      for (const t of turns) {
        add(`turn/start ${t.turn} renumbered ${t.turn + 1} (skips a turn)`, (ed) => {
          ed.ev(t.start).data.turn = t.turn + 1
          return { seq: t.start }
        })
        add(`session/end-seed inserted inside turn ${t.turn}`, (ed) => {
          ed.insertAfter(t.start, { type: 'session/end-seed', data: {} })
          return { seq: ed.at(t.start) + 1 }
        })
        const next = log[t.end + 1]
        if (next?.type === 'turn/start') {
          add(`turn/end ${t.turn} dropped before the next turn/start`, (ed) => {
            ed.remove(t.end)
            return { seq: ed.at(t.end + 1) }
          })
        }
        for (const s of t.steps) {
          add(`turn/end inserted while step ${t.turn}.${s.step} is open`, (ed) => {
            ed.insertAfter(s.start, { type: 'turn/end', data: { turn: t.turn, reason: { kind: 'completed' } } })
            return { seq: ed.at(s.start) + 1 }
          })
        }
      }
      break
    case 'L3':
      for (const t of turns) {
        for (const s of t.steps) {
          add(`step/start ${s.turn}.${s.step} renumbered ${s.step + 1}`, (ed) => {
            ed.ev(s.start).data.step = s.step + 1
            return { seq: s.start }
          })
          add(`step/end ${s.turn}.${s.step} written twice`, (ed) => {
            ed.insertAfter(s.end, { type: 'step/end', data: structuredClone(log[s.end]!.data) })
            return { seq: ed.at(s.end) + 1 }
          })
          if (log[s.end + 1]?.type === 'step/start') {
            add(`step/end ${s.turn}.${s.step} dropped before the next step/start`, (ed) => {
              ed.remove(s.end)
              return { seq: ed.at(s.end + 1) }
            })
          }
        }
      }
      break
    case 'L4':
      for (const s of steps) {
        for (const c of s.chunks) {
          add(`assistant/chunk ${c} names step ${s.step + 1}`, (ed) => {
            ed.ev(c).data.step = s.step + 1
            return { seq: c }
          })
        }
      }
      for (const h of seqsOf(log, (e) => e.type === 'request/header')) {
        const s = steps.find((x) => x.start < h && h < x.end)
        if (!s) continue
        add(`request/header ${h} moved before its step/start`, (ed) => {
          const e = ed.items.splice(ed.at(h), 1)[0]!
          ed.items.splice(ed.at(s.start), 0, e)
          return { seq: ed.at(h) }
        })
      }
      for (const r of seqsOf(log, (e) => e.type === 'llm/retry')) {
        const s = steps.find((x) => x.end === r - 1)
        if (!s) continue
        add(`llm/retry ${r} moved before its step/end`, (ed) => {
          ed.swap(r, s.end)
          return { seq: s.end }
        })
      }
      break
    case 'L5':
      for (const s of steps) {
        const last = s.results[s.results.length - 1]
        if (last !== undefined) {
          add(`tool/result ${last} dropped (its call is unanswered at step/end)`, (ed) => {
            ed.remove(last)
            return { seq: ed.at(s.end) }
          })
        }
        for (const r of s.results) {
          add(`tool/result ${r} written twice`, (ed) => {
            ed.insertAfter(r, structuredClone(log[r]!) as Ev)
            return { seq: ed.at(r) + 1 }
          })
        }
      }
      break
    case 'L6':
      for (const s of steps) {
        for (let i = 0; i + 1 < s.results.length; i++) {
          const a = s.results[i]!
          const b = s.results[i + 1]!
          const callB = log[b]!.sourceEventSeqs?.[0]
          if (callB === undefined || callB > a) continue
          add(`tool/results ${a} and ${b} swapped (out of call order)`, (ed) => {
            ed.swap(a, b)
            return { seq: a }
          })
        }
        if (s.message !== null && s.messageFinish !== 'max-tokens') {
          for (const c of s.calls) {
            add(`tool/call ${c} names no tool-call block`, (ed) => {
              ed.ev(c).data.callId = 'call_not_in_the_message'
              return { seq: c }
            })
          }
        }
      }
      break
    case 'L7':
      for (const m of seqsOf(log, (e) => e.type === 'assistant/message' && e.surfaceOp === 'append')) {
        const src = log[m]!.sourceEventSeqs ?? []
        src.forEach((_, i) => {
          add(`assistant/message ${m} cites its chunks without chunk ${src[i]}`, (ed) => {
            ed.ev(m).sourceEventSeqs!.splice(i, 1)
            return { seq: m }
          })
        })
        const lastChunk = src[src.length - 1]
        if (lastChunk !== undefined) {
          add(`assistant/chunk inserted after assistant/message ${m}`, (ed) => {
            ed.insertAfter(m, structuredClone(log[lastChunk]!) as Ev)
            return { seq: ed.at(m) + 1 }
          })
        }
      }
      break
    case 'L8':
      for (const e of log) {
        if (e.type === 'step/start' || e.type === 'turn/start' || e.type === 'agent/inbox/spliced') {
          add(`surfaceOp 'append' on ${e.type} ${e.seq}`, (ed) => {
            ed.ev(e.seq).surfaceOp = 'append'
            return { seq: e.seq }
          })
        }
        if (e.type === 'tool/result' && e.surfaceOp === 'append') {
          add(`tool/result ${e.seq} cites itself in sourceEventSeqs`, (ed) => {
            ed.ev(e.seq).sourceEventSeqs!.push(e.seq)
            return { seq: e.seq }
          })
        }
      }
      break
    case 'L9':
      for (const s of steps) {
        for (const c of s.chunks) {
          const chunk = dataOf(log[c]!).chunk
          if (chunk.type.endsWith('-delta') || chunk.type === 'block-end') {
            add(`assistant/chunk ${c} moved to a block that never started (${chunk.type})`, (ed) => {
              ed.ev(c).data.chunk.index = 1000
              return { seq: c }
            })
          }
          if (chunk.type === 'usage') {
            add(`a second usage chunk after ${c}`, (ed) => {
              ed.insertAfter(c, structuredClone(log[c]!) as Ev)
              return { seq: ed.at(c) + 1 }
            })
          }
        }
      }
      break
    case 'L10':
      for (const s of steps) {
        if (s.message !== null && s.messageFinish === 'tool-calls' && s.calls.length > 0) {
          const finish = s.chunks.find((c) => dataOf(log[c]!).chunk.type === 'finish')
          if (finish === undefined) continue
          add(`step ${s.turn}.${s.step} finished max-tokens but still calls tools`, (ed) => {
            ed.ev(finish).data.chunk.reason = 'max-tokens'
            ed.ev(s.message!).data.finish = 'max-tokens'
            return { seq: s.calls[0]! }
          })
        }
        if (s.outcome === 'stop') {
          add(`step ${s.turn}.${s.step} ends max-tokens with a stop message`, (ed) => {
            ed.ev(s.end).data.outcome = { kind: 'max-tokens' }
            return { seq: s.end }
          })
        }
      }
      break
    case 'L11':
      for (const e of log) {
        const d = dataOf(e)
        if (e.type === 'agent/inbox/spliced' && d.inserted.length > 0) {
          add(`message ${d.inserted[0].id} inserted again while pending`, (ed) => {
            ed.insertAfter(e.seq, { type: 'agent/inbox/spliced', data: { target: d.target, start: 0, inserted: [structuredClone(d.inserted[0])] } })
            return { seq: ed.at(e.seq) + 1 }
          })
        }
        if (e.type === 'user/message' && e.surfaceOp === 'append') {
          add(`user/message ${d.message.id} appended twice`, (ed) => {
            ed.insertAfter(e.seq, structuredClone(e) as Ev)
            return { seq: ed.at(e.seq) + 1 }
          })
        }
      }
      break
    case 'L12':
      for (const t of turns) {
        if (t.end < 0) continue
        const last = t.steps[t.steps.length - 1]
        if (t.steps.length !== opts.maxStepsPerTurn && t.reason !== 'step-limit') {
          add(`turn ${t.turn} (${t.steps.length} steps) ends step-limit`, (ed) => {
            ed.ev(t.end).data.reason = { kind: 'step-limit' }
            return { seq: t.end }
          })
        }
        if (t.reason === 'completed' && t.steps.length > 0 && !t.steps.some((s) => s.outcome === 'max-tokens')) {
          add(`turn ${t.turn} ends max-tokens without a max-tokens step`, (ed) => {
            ed.ev(t.end).data.reason = { kind: 'max-tokens' }
            return { seq: t.end }
          })
        }
        if (last && last.outcome === 'failed') {
          add(`turn ${t.turn}, whose last step failed, ends completed`, (ed) => {
            ed.ev(t.end).data.reason = { kind: 'completed' }
            return { seq: t.end }
          })
        }
      }
      break
    case 'L13':
      for (const t of turns) {
        const prev = log[t.start - 1]
        if (t.retry) {
          add(`a splice between turn/end and retry turn ${t.turn}`, (ed) => {
            ed.insertBefore(t.start, freshSplice('mutant-l13'))
            return { seq: ed.at(t.start) }
          })
          if (t.turn > 2) {
            add(`retry turn ${t.turn} says it retries turn ${t.turn - 2}`, (ed) => {
              ed.ev(t.start).data.cause.of = t.turn - 2
              return { seq: t.start }
            })
          }
        } else if (prev?.type === 'turn/end') {
          const pt = turns.find((x) => x.end === prev.seq)
          const lastFailed = pt?.steps[pt.steps.length - 1]?.outcome === 'failed'
          if (pt && !(pt.reason === 'error' && lastFailed)) {
            add(`turn ${t.turn} claims to retry turn ${pt.turn} (which ended ${pt.reason})`, (ed) => {
              ed.ev(t.start).data.cause = { kind: 'retry', of: pt.turn }
              return { seq: t.start }
            })
          }
        }
      }
      break
    case 'L14':
      for (let k = 0; k <= log.length; k++) {
        add(`compaction/end of no open bracket inserted at ${k}`, (ed) => {
          const e: Omit<Ev, 'seq' | 'time'> = { type: 'compaction/end', data: { compactionId: 'cmp-bogus' } }
          if (k === log.length) ed.items.push({ e: { seq: 0, time: 0, ...e }, old: null })
          else ed.insertBefore(k, e)
          return { seq: k }
        })
      }
      for (const c of seqsOf(log, (e) => e.type === 'compaction/start')) {
        add(`compaction/start ${c} nested in itself`, (ed) => {
          ed.insertAfter(c, structuredClone(log[c]!) as Ev)
          return { seq: ed.at(c) + 1 }
        })
      }
      for (const t of turns) {
        if (t.end < 0) continue
        add(`compaction left open at turn/end ${t.turn}`, (ed) => {
          ed.insertBefore(t.end, { type: 'compaction/start', data: { compactionId: 'cmp-open', turn: t.turn } })
          return { seq: ed.at(t.end) }
        })
      }
      break
    case 'L15':
      for (const p of seqsOf(log, (e) => e.type === 'compaction/prune')) {
        add(`a splice between compaction/prune ${p} and its tool/result`, (ed) => {
          ed.insertAfter(p, freshSplice('mutant-l15'))
          return { seq: ed.at(p) + 1 }
        })
        if (dataOf(log[p]!).shadowedSeq === p - 1) continue
        add(`compaction/prune ${p} names another seq than its tool/result replaces`, (ed) => {
          ed.ev(p).data.shadowedSeq = p - 1
          return { seq: p + 1 }
        })
      }
      for (let k = 1; k < log.length; k++) {
        const before = log[k - 1]!
        const e = log[k]!
        if (before.type === 'compaction/prune' || before.type === 'compaction/summary') continue
        if (e.type === 'turn/start' && dataOf(e).cause) continue
        if (e.type === 'tool/result' && e.surfaceOp !== 'append') continue
        add(`a compaction/prune with no replacing tool/result (before ${e.type} ${k})`, (ed) => {
          ed.insertBefore(k, { type: 'compaction/prune', data: { callId: 'call_bogus', shadowedSeq: 0, originalChars: 1 } })
          return { seq: ed.at(k) }
        })
      }
      break
    case 'L16':
      for (const r of seqsOf(log, (e) => e.type === 'llm/retry')) {
        const attempt = dataOf(log[r]!).attempt as number
        add(`llm/retry ${r} skips an attempt`, (ed) => {
          ed.ev(r).data.attempt += 1
          return { seq: r }
        })
        add(`llm/retry ${r} exceeds the retry maximum`, (ed) => {
          ed.ev(r).data.attempt = Math.max(opts.maxRetries + 1, attempt + 1)
          return { seq: r }
        })
        if (attempt > 1) {
          add(`llm/retry ${r} restarts its failure chain at attempt 1`, (ed) => {
            ed.ev(r).data.attempt = 1
            return { seq: r }
          })
        }
      }
      break
  }
  return out
}

/**
 * Breaks `invariant` in `log` (a valid log under `opts`). `pick` chooses among the applicable
 * mutations (a number, taken modulo their count, or a function returning a number in [0, 1)).
 * Returns null when the log has no shape this invariant's mutations need.
 */
export function mutateToBreak(
  log: readonly LogEvent[],
  invariant: LogInvariant,
  pick: number | (() => number) = 0,
  opts: CheckerOptions = {},
): LogMutation | null {
  const all = candidates(log, invariant, { ...checkerOptionsFor(), ...opts } as Required<CheckerOptions>)
  if (all.length === 0) return null
  // First the kind of mutation (each applicable kind equally likely), then the site.
  const groups = new Map<string, Candidate[]>()
  for (const c of all) {
    const g = groups.get(c.variant)
    if (g) g.push(c)
    else groups.set(c.variant, [c])
  }
  const kinds = [...groups.values()]
  const n = typeof pick === 'number' ? Math.abs(Math.floor(pick)) : Math.floor(pick() * 2 ** 31)
  const kind = kinds[n % kinds.length]!
  return kind[Math.floor(n / kinds.length) % kind.length]!.make()
}

/** Step-kind weights that make each invariant's mutable shapes frequent. */
const BIAS: Partial<Record<LogInvariant, ValidLogOptions['stepWeights']>> = {
  L5: { tools: 80, 'abort-tools': 10 },
  L6: { tools: 80 },
  L10: { tools: 60 },
  L13: { fail: 40 },
  L16: { fail: 60 },
}

/**
 * Arbitrary of `{log, invariant, seq}`: a valid log of `arbValidLog(opts)` with exactly `invariant`
 * broken, first at `seq`.
 */
export function arbLogMutation(invariant: LogInvariant, opts: ValidLogOptions = {}): fc.Arbitrary<LogMutation> {
  const check = checkerOptionsFor(opts)
  const logs = arbValidLog({ minTurns: 2, ...opts, stepWeights: { ...BIAS[invariant], ...opts.stepWeights } })
  return fc
    .tuple(logs, fc.nat())
    .map(([log, pick]) => mutateToBreak(log, invariant, pick, check))
    .filter((m): m is LogMutation => m !== null)
}

/** Like `arbLogMutation`, with the invariant drawn too. */
export function arbAnyLogMutation(opts: ValidLogOptions = {}): fc.Arbitrary<LogMutation> {
  return fc.constantFrom(...LOG_INVARIANTS).chain((inv) => arbLogMutation(inv, opts))
}
