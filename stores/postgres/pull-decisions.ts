/**
 * A worker's session run receives the decisions other machines recorded (decisions.ts): the
 * unlogged rows of `turnlog_decisions` are handed to the agent (`agent.decide`, which logs them;
 * the append marks each row logged in the same transaction). Read on every pull (NOTIFY, the poll,
 * the first pull after a claim), so a decision reaches a running owner at once and a claiming one
 * when it resumes. Answers of input rounds are rows of the same table (docs/spec/lifecycle.md §11): they are
 * handed over as `agent.answer`, which logs them and runs the body's next round.
 */
import type { Agent } from '../../agent/types.js'
import { TurnlogError } from '../../events/errors.js'
import { isAnswerRow } from '../answer-records.js'

/** Hands the session's unlogged decisions to its agent. Errors are reported, never thrown. */
export async function pullDecisions(
  read: () => Promise<Array<{ approval_id: string; record: string }>>, agent: Agent, report: (err: unknown) => void,
): Promise<number> {
  let rows: Array<{ approval_id: string; record: string }>
  try {
    rows = await read()
  } catch (err) {
    report(err)
    return 0
  }
  let n = 0
  for (const row of rows) {
    let rec: { decision: { kind: 'approve'; arguments?: string } | { kind: 'deny'; reason?: string }; by: { kind: 'user'; id?: string } }
    try {
      const parsed = JSON.parse(row.record) as unknown
      if (isAnswerRow(parsed)) {
        const a = parsed as { answer: unknown; by: { kind: 'user'; id?: string } }
        await agent.answer(row.approval_id, a.answer as never, { by: a.by })
        n++
        continue
      }
      rec = parsed as typeof rec
      const d = rec.decision
      const input = d.kind === 'approve'
        ? (d.arguments === undefined ? { kind: 'approve' as const } : { kind: 'approve' as const, arguments: JSON.parse(d.arguments) as unknown })
        : (d.reason === undefined ? { kind: 'deny' as const } : { kind: 'deny' as const, reason: d.reason })
      await agent.decide(row.approval_id, input, { by: rec.by })
      n++
    } catch (err) {
      // UNKNOWN_APPROVAL: no step waits for it yet (not restored, or the step is not at its barrier);
      // APPROVAL_DECIDED: this agent decided first in memory, and the append that logs it will be
      // refused (the row was first), so the next owner logs the row. Both are retried by the next pull.
      // The same for an answer: UNKNOWN_INPUT, INPUT_ANSWERED.
      if (TurnlogError.is(err, 'UNKNOWN_APPROVAL') || TurnlogError.is(err, 'APPROVAL_DECIDED') ||
        TurnlogError.is(err, 'UNKNOWN_INPUT') || TurnlogError.is(err, 'INPUT_ANSWERED')) continue
      report(err)
    }
  }
  return n
}
