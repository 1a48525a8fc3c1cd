/**
 * The approval shapes a run reached, for the census (`other`, one count per run that reached
 * each): the shapes two earlier agent defects lived in (decision record "fuzzer" (docs/decisions/ in the repository)), which
 * the generator (approval-plan.ts) must keep reaching. Read from the run's log and recorders, so
 * they count with any tools and hooks; test/testing/fuzz-approval-reach.test.ts asserts them.
 */
import type { LogEvent } from '../../events/index.js'

/** The shapes, in the census as `approval: <shape>`. */
export const APPROVAL_SHAPES = [
  // an `ask` verdict that arrived after its turn's cancel (defect 2: the call never got its result)
  'ask after cancel',
  // an asked call open while a call before it had started and not committed (not parked: the step runs)
  'ask open while a sibling runs',
  // an asked call denied by a cancel or a steer (its result is the decision's: L17)
  'ask denied by cancel or steer',
  // after such a denial, user code outlived the turn's grace period (defect 1: the denied call's
  // post-execute was abandoned then and its result turned ABORTED)
  'grace ran out after an ask was denied',
] as const

export type ApprovalShape = (typeof APPROVAL_SHAPES)[number]

type Rec = Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Which shapes one run reached. `cancels` are the run's recorded cancels (turn, and the log length
 * when it was called); `errors` the contained `agent/error`s with the log length when reported.
 */
export function approvalShapes(
  events: readonly LogEvent[],
  cancels: ReadonlyArray<{ turn: number; at: number }>,
  errors: ReadonlyArray<{ error: unknown; at?: number }>,
): Set<ApprovalShape> {
  const seen = new Set<ApprovalShape>()
  const key = (d: Rec) => `${d.turn}.${d.step}.${d.callId}`
  const calls = new Map<string, number>()
  const results = new Map<string, number>()
  const turnEnds = new Map<number, number>()
  const asked = new Map<string, { seq: number; turn: number; step: number }>()
  for (const e of events) {
    const d = e.data as Rec
    if (e.type === 'tool/call') calls.set(key(d), e.seq)
    else if (e.type === 'tool/result') results.set(key(d), e.seq)
    else if (e.type === 'turn/end') turnEnds.set(Number(d.turn), e.seq)
    // asked: the request right after its own call's tool/call (a needsApproval request comes before any tool/call)
    else if (e.type === 'tool/approval-requested' && calls.get(key(d)) === e.seq - 1) asked.set(key(d), { seq: e.seq, turn: Number(d.turn), step: Number(d.step) })
  }
  for (const [k, a] of asked) {
    if (cancels.some((c) => c.turn === a.turn && c.at <= a.seq)) seen.add('ask after cancel')
    for (const [other, at] of calls) {
      if (other === k || !other.startsWith(`${a.turn}.${a.step}.`) || at >= a.seq) continue
      if ((results.get(other) ?? Infinity) > a.seq) seen.add('ask open while a sibling runs')
    }
  }
  for (const e of events) {
    if (e.type !== 'tool/approval-decided') continue
    const d = e.data as Rec
    if (!asked.has(key(d)) || (d.by?.kind !== 'canceled' && d.by?.kind !== 'superseded')) continue
    seen.add('ask denied by cancel or steer')
    const end = turnEnds.get(Number(d.turn)) ?? Infinity
    if (errors.some((x) => x.at !== undefined && x.at > e.seq && x.at <= end && codeOf(x.error) === 'ABANDONED')) seen.add('grace ran out after an ask was denied')
  }
  return seen
}

function codeOf(err: unknown): string | undefined {
  try {
    const c = (err as { code?: unknown } | null)?.code
    return typeof c === 'string' ? c : undefined
  } catch {
    return undefined
  }
}
