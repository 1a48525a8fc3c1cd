/**
 * Wakeups on PostgreSQL with real worker processes (docs/spec/lifecycle.md §10, issue 25): a wakeup that
 * came due while no process ran is claimed through `due_at` (the one due column) (kept on append from the
 * schedules reducer), fired exactly once by the worker that resumes the session, and answered;
 * a later resume (another worker, woken by a sent message) fires nothing again. Waits for events
 * and table state only: no timing assertion.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../../agent/agent.js'
import type { EventOf, LogEvent } from '../../../events/index.js'
import { scriptedModel } from '../../../models/index.js'
import { postgresStore, type PostgresStore } from '../../../stores/postgres/index.js'
import { childLib, ROOT } from '../child-lib.js'
import { dropAll, freshDb } from './db.js'
import { killAll } from '../../support/line-child.js'
import { answered, LineChild, readAll, until, verifyOk } from './helpers.js'

const WORKER = fileURLToPath(new URL('./children/worker-child.mjs', import.meta.url))
const stores: PostgresStore[] = []
const children: LineChild[] = []
let lib = ''
beforeAll(() => {
  lib = childLib()
}, 180_000)
afterAll(async () => {
  killAll(children)
  for (const s of stores) await s.close().catch(() => {})
  await dropAll()
})

const fired = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'schedule/fired') as Array<EventOf<'schedule/fired'>>

async function row(store: PostgresStore, id: string): Promise<{ due: boolean; future: boolean; owner: string | null }> {
  const r = await store.pool.query(
    `SELECT due_at <= clock_timestamp() AS due, due_at > clock_timestamp() AS future, lease_owner AS owner
     FROM turnlog_sessions WHERE id = $1`, [id])
  return r.rows[0] as { due: boolean; future: boolean; owner: string | null }
}

function worker(url: string, name: string): LineChild {
  const c = new LineChild(spawn, WORKER, [lib, url, '3', name, '2000', '0'], ROOT)
  children.push(c)
  return c
}

describe('wakeups with PostgreSQL workers (docs/spec/lifecycle.md §10)', () => {
  it('W2: a wakeup due while no process runs is claimed by a worker process and fires exactly once; a later resume fires nothing again', async () => {
    const url = await freshDb('wk')
    const store = postgresStore({ connectionString: url })
    stores.push(store)
    await store.migrate()
    // schedule without any timer (this process never fires), then leave: nothing runs the session
    const a = createAgent({ model: scriptedModel(() => ({ text: 'ok' })), store, sessionId: 'w1', wakeups: { timer: false } })
    const due = a.schedule({ at: Date.now() - 1, message: 'Check the build again.', id: 'due' })
    a.schedule({ in: 3_600_000, message: 'much later', id: 'later' })
    await a.flush()
    await a.dispose()
    expect(await row(store, 'w1')).toEqual({ due: true, future: false, owner: null })

    const w1 = worker(url, 'wk1')
    expect(await w1.waitFor((l) => l === 'READY', 0, 60_000)).toBe('READY')
    await until(async () => {
      const r = await row(store, 'w1')
      return r.owner === null && r.future && fired(await readAll(store, 'w1')).length > 0
    }, 'the due wakeup fired and the session handed back')
    let events = await readAll(store, 'w1')
    expect(fired(events).map((e) => e.data.scheduleId)).toEqual([due])
    expect(answered(events).unanswered).toEqual([])
    expect(verifyOk(events)).toEqual([])

    // another worker process, woken by a sent message: it resumes the session, answers, fires nothing
    w1.proc.kill('SIGTERM')
    await w1.exited
    const w2 = worker(url, 'wk2')
    expect(await w2.waitFor((l) => l === 'READY', 0, 60_000)).toBe('READY')
    const sent = await store.send('w1', 'are you there?')
    await until(async () => {
      const r = await row(store, 'w1')
      const ev = await readAll(store, 'w1')
      return r.owner === null && ev.some((e) => e.type === 'user/message' && (e.data as EventOf<'user/message'>['data']).message.id === sent) &&
        answered(ev).unanswered.length === 0
    }, 'the sent message answered and the session handed back')
    events = await readAll(store, 'w1')
    expect(fired(events)).toHaveLength(1)
    expect(verifyOk(events)).toEqual([])
    w2.proc.kill('SIGTERM')
    await w2.exited
  }, 120_000)
})
