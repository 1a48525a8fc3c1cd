/**
 * What a re-run changed against its golden: the first differing event (`time` ignored), the
 * tool-call sequence diff (longest common subsequence over name + canonical arguments) and the
 * usage delta. Pure.
 */
import { deepEqual } from '../events/deep-equal.js'
import type { EventOf, LogEvent } from '../events/index.js'
import { emptyTotals, type UsageTotals } from '../reducers/usage.js'
import { diffLines } from '../replay/diff.js'
import { replay } from '../replay/replay.js'
import { canonicalArguments } from './canonical.js'
import type { RerunDivergence, ToolSequenceEntry, UsageDelta } from './types.js'

/**
 * The event with its clock readings aside: `time`, and a request's `expiresAt` (the log says
 * `expiresAt = time + timeoutMs`, docs/spec/lifecycle.md §9) compared as the time after the request, so a re-run
 * on another clock matches while a changed approval timeout still differs.
 */
function untimed(e: LogEvent): unknown {
  if (e.type === 'tool/approval-requested') {
    const d = (e as EventOf<'tool/approval-requested'>).data
    if (d.expiresAt !== undefined) return { ...e, time: 0, data: { ...d, expiresAt: `time + ${d.expiresAt - e.time}` } }
  }
  if (e.type === 'tool/input-requested') {
    // a round's expiry likewise (docs/spec/lifecycle.md §11)
    const d = (e as EventOf<'tool/input-requested'>).data
    if (d.expiresAt !== undefined) return { ...e, time: 0, data: { ...d, expiresAt: `time + ${d.expiresAt - e.time}` } }
  }
  return { ...e, time: 0 }
}

/** The (turn, step) an event belongs to, as the log's order says (events before `seq`). */
function positionAt(events: readonly LogEvent[], seq: number): { turn: number | null; step: number | null } {
  let turn: number | null = null
  let step: number | null = null
  for (let i = 0; i <= Math.min(seq, events.length - 1); i++) {
    const e = events[i]!
    if (e.type === 'turn/start') {
      turn = (e as EventOf<'turn/start'>).data.turn
      step = null
    } else if (e.type === 'step/start') step = (e as EventOf<'step/start'>).data.step
  }
  return { turn, step }
}

/** The first seq at or after `from` where the two logs differ (`time` ignored), or null. */
export function firstDivergence(golden: readonly LogEvent[], rerun: readonly LogEvent[], from: number): RerunDivergence | null {
  const n = Math.max(golden.length, rerun.length)
  for (let seq = from; seq < n; seq++) {
    const expected = golden[seq] ?? null
    const actual = rerun[seq] ?? null
    if (expected !== null && actual !== null && deepEqual(untimed(expected), untimed(actual))) continue
    const kind = expected === null ? 'extra' : actual === null ? 'missing' : 'mismatch'
    const pos = positionAt(expected !== null ? golden : rerun, seq)
    const where = pos.turn === null ? '' : ` (turn ${pos.turn}${pos.step === null ? '' : `, step ${pos.step}`})`
    const head = kind === 'extra'
      ? `seq ${seq}${where}: the golden ends at seq ${golden.length - 1}, the re-run went on with ${actual!.type}`
      : kind === 'missing'
        ? `seq ${seq}${where}: the golden has ${expected!.type}, the re-run ended at seq ${rerun.length - 1}`
        : `seq ${seq}${where}: the golden has ${expected!.type}, the re-run ${actual!.type}`
    const lines = kind === 'mismatch' ? diffLines(untimed(expected!), untimed(actual!)) : []
    return { seq, ...pos, expected, actual, kind, diff: [head, ...lines].join('\n') }
  }
  return null
}

interface Call { name: string; arguments: string; turn: number }

function calls(events: readonly LogEvent[], from: number): Call[] {
  const out: Call[] = []
  for (let i = from; i < events.length; i++) {
    const e = events[i]!
    if (e.type !== 'tool/call') continue
    const d = (e as EventOf<'tool/call'>).data
    out.push({ name: d.name, arguments: canonicalArguments(d.arguments), turn: d.turn })
  }
  return out
}

/** The golden's and the re-run's tool calls from `from` on, aligned by longest common subsequence. */
export function toolSequenceDiff(golden: readonly LogEvent[], rerun: readonly LogEvent[], from: number): ToolSequenceEntry[] {
  const a = calls(golden, from)
  const b = calls(rerun, from)
  const same = (x: Call, y: Call) => x.name === y.name && x.arguments === y.arguments
  // lcs[i][j]: the LCS length of a[i..] and b[j..]
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = same(a[i]!, b[j]!) ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!)
    }
  }
  const out: ToolSequenceEntry[] = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && same(a[i]!, b[j]!)) {
      out.push({ op: 'same', ...a[i]! })
      i++
      j++
    } else if (j >= b.length || (i < a.length && lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) out.push({ op: 'removed', ...a[i++]! })
    else out.push({ op: 'added', ...b[j++]! })
  }
  return out
}

/** Usage totals of both logs and the re-run's minus the golden's. */
export function usageDelta(golden: readonly LogEvent[], rerun: readonly LogEvent[]): UsageDelta {
  const g = replay(golden).usage.total
  const r = replay(rerun).usage.total
  const delta = emptyTotals()
  for (const k of Object.keys(delta) as (keyof UsageTotals)[]) delta[k] = r[k] - g[k]
  return { golden: g, rerun: r, delta }
}
