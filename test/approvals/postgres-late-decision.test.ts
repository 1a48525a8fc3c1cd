/**
 * A person's decision after the approval's `expiresAt` (docs/spec/lifecycle.md §9 "Expiry"): refused with
 * `APPROVAL_DECIDED` when no process runs the session, on JSONL and on PostgreSQL, and nothing of
 * it is logged or recorded; the session, when opened, logs the expiry (`by: expired`, the call's
 * `APPROVAL_EXPIRED` result) and the approved body never runs.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import { TurnlogError, type EventOf, type LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { resumeAgent } from '../../replay/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import type { LogStore } from '../../stores/types.js'
import { defineTool } from '../../tools/define.js'
import { postgresStore, type PostgresStore } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'

const dirs: string[] = []
const pgs: PostgresStore[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
  for (const s of pgs) await s.close()
  await dropAll()
})

function rmTool(runs: string[]) {
  return defineTool({
    name: 'rm', description: 'removes', parameters: z.object({ path: z.string() }), needsApproval: true,
    approval: { timeoutMs: 1000 }, execute: ({ path }) => {
      runs.push(path)
      return 'ok'
    },
  })
}

async function readAll(store: LogStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events()) out.push(e)
  await r.close?.()
  return out
}

const decidedOf = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')

async function lateDecisionThenOpen(store: LogStore & { decide(id: string, a: string, d: { kind: 'approve' }, o?: { clock?: () => number }): Promise<unknown> }) {
  const runs: string[] = []
  const agent = createAgent({
    model: scriptedModel([{ toolCalls: [{ name: 'rm', args: { path: 'x' }, id: 'k1' }] }, { text: 'done' }]),
    tools: [rmTool(runs)], store, sessionId: 's', clock: () => 5_000,
  })
  agent.followup('go')
  expect(await agent.whenSettled()).toBe('parked')
  const id = agent.approvals()[0]!.approvalId
  await agent.dispose()
  // expiresAt = 6 000: a person's approval at 9 000 is refused, nothing logged
  let caught: unknown
  try {
    await store.decide('s', id, { kind: 'approve' }, { clock: () => 9_000 })
  } catch (err) {
    caught = err
  }
  expect(TurnlogError.is(caught) && caught.code).toBe('APPROVAL_DECIDED')
  expect(decidedOf(await readAll(store, 's'))).toEqual([])
  // opened after the expiry: the session logs it, the call is APPROVAL_EXPIRED, the body never runs
  const opened = await resumeAgent({
    store, sessionId: 's', model: scriptedModel([{ text: 'it expired' }]), tools: [rmTool(runs)], clock: () => 9_500,
  })
  await opened.whenIdle()
  await opened.flush()
  await opened.dispose()
  const events = await readAll(store, 's')
  expect(decidedOf(events).map((e) => [e.data.approvalId, e.data.by.kind, e.data.decision.kind])).toEqual([[id, 'expired', 'deny']])
  const result = events.find((e): e is EventOf<'tool/result'> => e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.callId === 'k1')
  expect(result?.data.error?.code).toBe('APPROVAL_EXPIRED')
  expect(runs).toEqual([])
}

describe('a late decision is refused and the expiry logged when the session is opened (docs/spec/lifecycle.md §9)', () => {
  it('L17 R9: JSONL: decided after expiresAt while nothing runs is APPROVAL_DECIDED; opening the session logs the expiry', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-late-'))
    dirs.push(dir)
    await lateDecisionThenOpen(jsonlStore(dir))
  })

  it('L17 R9: PostgreSQL: decided after expiresAt while nothing runs is APPROVAL_DECIDED, nothing recorded; opening the session logs the expiry', async () => {
    const store = postgresStore({ connectionString: await freshDb('late') })
    pgs.push(store)
    await store.migrate()
    await lateDecisionThenOpen(store)
    const rows = await store.pool.query('SELECT count(*)::int AS n FROM turnlog_decisions WHERE session_id = $1 AND (record->\'by\'->>\'kind\') = \'user\'', ['s'])
    expect((rows.rows[0] as { n: number }).n).toBe(0)
  })
})
