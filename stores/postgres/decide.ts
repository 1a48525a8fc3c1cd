/**
 * `postgresStore.decide` (docs/spec/lifecycle.md §9, decisions.ts): a decision from any machine, with or without
 * a worker running the session. Checked against the log (read; refusals log and record nothing:
 * `UNKNOWN_APPROVAL`, `APPROVAL_DECIDED`, `INVALID_ARGS`), then recorded by `turnlog_decide`
 * (the unique key makes the first decision win; durable at commit; `pending` makes the session
 * claimable; NOTIFY reaches a running owner at once). The owner logs it once.
 */
import { TurnlogError } from '../../events/errors.js'
import {
  checkBy, checkDecision, checkedDraft, decided, loggedDecision, readAll,
  type StoreDecided, type StoreDecideOptions, type StoreDecisionInput,
} from '../decide.js'
import type { LogStore } from '../types.js'

/** What the decision needs of its store (the PostgresStore; structural, so store.ts may import this file). */
export interface PgDecideHost extends LogStore {
  query(sql: string, params: unknown[], sessionId: string | undefined, what: string): Promise<{ rows: unknown[] }>
}

export async function decidePg(
  store: PgDecideHost, id: string, approvalId: string, input: StoreDecisionInput, opts: StoreDecideOptions = {},
): Promise<StoreDecided> {
  const decision = checkDecision(input)
  const by = checkBy(opts.by)
  const time = (opts.clock ?? Date.now)()
  const draft = checkedDraft(id, await readAll(store, id), approvalId, decision, by, time)
  const r = await store.query('SELECT turnlog_decide($1, $2, $3) AS ok', [id, approvalId, JSON.stringify({ approvalId, decision, by, time })], id, 'decide failed')
  if ((r.rows[0] as { ok: boolean }).ok !== true) {
    const w = await store.query('SELECT record::text AS record, logged_seq FROM turnlog_decisions WHERE session_id = $1 AND approval_id = $2', [id, approvalId], id, 'decide failed')
    const row = w.rows[0] as { record: string; logged_seq: number | null } | undefined
    let what = ''
    try {
      const rec = JSON.parse(row?.record ?? 'null') as { decision?: { kind?: string }; by?: { kind?: string } } | null
      what = rec ? ` (${rec.decision?.kind ?? '?'} by ${rec.by?.kind ?? '?'}${row?.logged_seq != null ? `, seq ${row.logged_seq}` : ', not logged yet'})` : ''
    } catch {
      // an unreadable row: the refusal stands without the detail
    }
    throw new TurnlogError('APPROVAL_DECIDED', `approval ${approvalId} was already decided${what}`, { sessionId: id, field: 'approvalId', info: { approvalId } })
  }
  // recorded: durable. Wait (if asked) to see the owner log it.
  const until = Date.now() + (opts.waitMs ?? 0)
  for (let delay = 20; ; delay = Math.min(delay * 2, 200)) {
    const logged = loggedDecision(await readAll(store, id), approvalId)
    if (logged !== undefined) return decided(id, logged, logged.seq)
    if (Date.now() + delay > until) return decided(id, draft, null)
    await new Promise((res) => setTimeout(res, delay))
  }
}
