/**
 * The candidate mutations of each L invariant on one log (mutations.ts picks one): each names
 * what it changes and the seq where the first violation must be reported.
 */
import type { LogEvent } from '../../events/envelope.js'
import type { CheckerOptions, LogInvariant } from '../../events/invariants/types.js'
import { Edit, type Ev, type LogMutation } from './mutation-edit.js'
import { dataOf, freshSplice, scan, seqsOf } from './mutation-scan.js'

/** A mutation of one kind (`variant`) at one site. */
export interface Candidate {
  variant: string
  make: () => LogMutation
}

/** The candidate mutations of one invariant on one log. */
export function candidates(log: readonly LogEvent[], inv: LogInvariant, opts: Required<CheckerOptions>): Candidate[] {
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
