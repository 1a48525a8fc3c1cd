/**
 * `postgresStore.answer` (docs/spec/lifecycle.md §11): an answer to an open input round from any machine, with
 * or without a worker running the session, through the decisions' channel (decisions.ts): checked
 * against the log (refusals log and record nothing: `UNKNOWN_INPUT`, `INPUT_ANSWERED` (answered,
 * or expired), `INVALID_INPUT` naming the field), then recorded by `turnlog_decide` as a row keyed
 * by the request id (the unique key makes the first answer win; durable at commit; `pending`
 * makes the session claimable; NOTIFY reaches a running owner at once). The owner logs it once.
 */
import { TurnlogError } from '../../events/errors.js'
import { answered, answerEvent, loggedAnswer, type StoreAnswered, type StoreAnswerOptions } from '../answer.js'
import { checkBy, readAll } from '../decide.js'
import type { PgDecideHost } from './decide.js'

export async function answerPg(store: PgDecideHost, id: string, requestId: string, input: unknown, opts: StoreAnswerOptions = {}): Promise<StoreAnswered> {
  const by = checkBy(opts.by)
  const time = (opts.clock ?? Date.now)()
  const draft = await answerEvent(id, await readAll(store, id), requestId, input, by, time)
  const record = JSON.stringify({ requestId, answer: draft.data.answer, by, time })
  const r = await store.query('SELECT turnlog_decide($1, $2, $3) AS ok', [id, requestId, record], id, 'answer failed')
  if ((r.rows[0] as { ok: boolean }).ok !== true) {
    const w = await store.query('SELECT record::text AS record, logged_seq FROM turnlog_decisions WHERE session_id = $1 AND approval_id = $2', [id, requestId], id, 'answer failed')
    throw refusal(id, requestId, w.rows[0] as { record: string; logged_seq: number | null } | undefined)
  }
  // recorded: durable. Wait (if asked) to see the owner log it.
  const until = Date.now() + (opts.waitMs ?? 0)
  for (let delay = 20; ; delay = Math.min(delay * 2, 200)) {
    const logged = loggedAnswer(await readAll(store, id), requestId)
    if (logged !== undefined) return answered(id, logged, logged.seq)
    if (Date.now() + delay > until) return answered(id, draft, null)
    await new Promise((res) => setTimeout(res, delay))
  }
}

/** `INPUT_ANSWERED` for a request whose row was recorded first (with what won, when readable). @internal */
export function refusal(sessionId: string, requestId: string, row: { record: string; logged_seq: number | null } | undefined): TurnlogError {
  let what = ''
  try {
    const rec = JSON.parse(row?.record ?? 'null') as { answer?: { action?: string }; by?: { kind?: string } } | null
    what = rec ? ` (${rec.answer?.action ?? '?'} by ${rec.by?.kind ?? '?'}${row?.logged_seq != null ? `, seq ${row.logged_seq}` : ', not logged yet'})` : ''
  } catch {
    // an unreadable row: the refusal stands without the detail
  }
  return new TurnlogError('INPUT_ANSWERED', `input request ${requestId} was already answered${what}`, { sessionId, field: 'requestId', info: { requestId } })
}
