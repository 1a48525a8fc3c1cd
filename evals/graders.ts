/**
 * The built-in graders. Each is a `Grader` ({ name, grade }) reading the re-run's log, the golden
 * and the re-run's comparison (`ctx.run`). "Asked for approval before tool T" waits for the
 * approval events ("Wait for a person" is not merged): it will read the approvals reducer.
 */
import type { EventOf, LogEvent } from '../events/index.js'
import type { Grader } from './evaluate-types.js'

/** The text of the last complete (not interrupted) assistant message from `from` on, or null. */
export function finalAnswer(events: readonly LogEvent[], from = 0): string | null {
  for (let i = events.length - 1; i >= from; i--) {
    const e = events[i]!
    if (e.type !== 'assistant/message') continue
    const d = (e as EventOf<'assistant/message'>).data
    if (d.interrupted === true) continue
    const text = d.message.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('')
    if (text !== '') return text
  }
  return null
}

/**
 * The re-run's final answer equals the golden's (by default after trimming and collapsing
 * whitespace; `normalize` to compare otherwise, e.g. case-insensitively).
 */
export function sameFinalAnswer(opts: { normalize?: (text: string) => string } = {}): Grader {
  const norm = opts.normalize ?? ((t: string) => t.trim().replace(/\s+/g, ' '))
  return {
    name: 'same final answer',
    grade: (log, golden, ctx) => {
      const a = finalAnswer(log.events, ctx.run.liveFrom)
      const b = finalAnswer(golden.events, ctx.run.liveFrom)
      if (a !== null && b !== null && norm(a) === norm(b)) return true
      return { pass: false, reason: `final answer ${JSON.stringify(clip(a))}, the golden's ${JSON.stringify(clip(b))}` }
    },
  }
}

/** The last complete assistant text of each turn from `from` on, by turn number. */
export function answersByTurn(events: readonly LogEvent[], from = 0): Map<number, string> {
  const out = new Map<number, string>()
  for (let i = from; i < events.length; i++) {
    const e = events[i]!
    if (e.type !== 'assistant/message') continue
    const d = (e as EventOf<'assistant/message'>).data
    if (d.interrupted === true) continue
    const text = d.message.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text).join('')
    if (text !== '') out.set(d.turn, text)
  }
  return out
}

/** Every turn's answer (its last complete assistant text) equals the golden's; the first differing turn is named. */
export function sameAnswers(opts: { normalize?: (text: string) => string } = {}): Grader {
  const norm = opts.normalize ?? ((t: string) => t.trim().replace(/\s+/g, ' '))
  return {
    name: 'same answer in every turn',
    grade: (log, golden, ctx) => {
      const a = answersByTurn(log.events, ctx.run.liveFrom)
      const b = answersByTurn(golden.events, ctx.run.liveFrom)
      const turns = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => x - y)
      for (const t of turns) {
        const x = a.get(t)
        const y = b.get(t)
        if (x === undefined || y === undefined || norm(x) !== norm(y)) {
          return { pass: false, reason: `turn ${t}: answer ${JSON.stringify(clip(x ?? null))}, the golden's ${JSON.stringify(clip(y ?? null))}` }
        }
      }
      return true
    },
  }
}

/** The tool results, call by call in order (name, canonical arguments, content, error code), equal the golden's. */
export function sameToolResults(): Grader {
  const results = (events: readonly LogEvent[], from: number) => {
    const calls = new Map<string, EventOf<'tool/call'>>()
    const out: Array<{ turn: number; callId: string; name: string; content: string; code: string | null }> = []
    for (let i = from; i < events.length; i++) {
      const e = events[i]!
      if (e.type === 'tool/call') calls.set((e as EventOf<'tool/call'>).data.callId, e as EventOf<'tool/call'>)
      if (e.type !== 'tool/result' || e.surfaceOp !== 'append') continue
      const d = (e as EventOf<'tool/result'>).data
      out.push({ turn: d.turn, callId: d.callId, name: calls.get(d.callId)?.data.name ?? '?', content: JSON.stringify(d.message.content), code: d.error?.code ?? null })
    }
    return out
  }
  return {
    name: 'same tool results',
    grade: (log, golden, ctx) => {
      const a = results(log.events, ctx.run.liveFrom)
      const b = results(golden.events, ctx.run.liveFrom)
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        const x = a[i]
        const y = b[i]
        if (x && y && x.name === y.name && x.content === y.content && x.code === y.code) continue
        const at = y ?? x!
        return { pass: false, reason: `turn ${at.turn}: result ${i + 1} (${at.name} ${at.callId}) is ${x ? clip(x.content) : '(none)'}, the golden's ${y ? clip(y.content) : '(none)'}` }
      }
      return true
    },
  }
}

/** The re-run called the same tools with the same (canonical) arguments in the same order. */
export function sameToolSequence(): Grader {
  return {
    name: 'same tool sequence',
    grade: (_log, _golden, ctx) => {
      const diff = ctx.run.toolSequenceDiff.filter((e) => e.op !== 'same')
      if (diff.length === 0) return true
      const first = diff[0]!
      return {
        pass: false,
        reason: `${diff.length} call(s) differ; first: ${first.op} ${first.name}(${clip(first.arguments)}) in turn ${first.turn}`,
      }
    },
  }
}

/** `verify` of the re-run's log holds (every L invariant). */
export function noInvariantBroken(): Grader {
  return {
    name: 'no invariant broken',
    grade: (_log, _golden, ctx) => {
      const v = ctx.run.verify
      if (v.ok) return true
      const f = v.violations[0]!
      return { pass: false, reason: `${f.invariant} at seq ${f.seq}: ${f.message}` }
    },
  }
}

/** The re-run's live part cost at most `percent` % more than the golden's (USD with `price`, else tokens). */
export function costWithin(percent: number): Grader {
  return {
    name: `cost within ${percent}%`,
    grade: (_log, _golden, ctx) => {
      const { golden, rerun, unit } = ctx.cost
      const limit = golden * (1 + percent / 100)
      if (rerun <= limit) return true
      const more = golden === 0 ? Infinity : Math.round(((rerun - golden) / golden) * 1000) / 10
      return { pass: false, reason: `cost ${fmt(rerun, unit)} is ${more}% above the golden's ${fmt(golden, unit)}` }
    },
  }
}

/** The re-run reproduced the golden exactly (`time` aside): no divergence at all. */
export function noDivergence(): Grader {
  return {
    name: 'no divergence',
    grade: (_log, _golden, ctx) => (ctx.run.divergence === null ? true : { pass: false, reason: ctx.run.divergence.diff.split('\n').slice(0, 3).join('; ') }),
  }
}

/** Every tool call the re-run made had a recorded result (with `toolResults: 'recorded'`). */
export function noUnrecordedCalls(): Grader {
  return {
    name: 'no unrecorded tool calls',
    grade: (_log, _golden, ctx) => {
      const u = ctx.run.unrecorded
      return u.length === 0 ? true : { pass: false, reason: `${u.length} call(s) without a recorded result; first: ${u[0]!.canonical} in turn ${u[0]!.turn}` }
    },
  }
}

export function defaultGraders(): Grader[] {
  return [noInvariantBroken(), sameToolSequence(), sameFinalAnswer()]
}

function clip(s: string | null): string | null {
  return s === null || s.length <= 120 ? s : `${s.slice(0, 120)}…`
}

function fmt(v: number, unit: 'usd' | 'tokens'): string {
  return unit === 'usd' ? `$${v.toFixed(4)}` : `${v} tokens`
}
