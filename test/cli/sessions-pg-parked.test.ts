/**
 * `turnlog sessions postgres://…` shows parked sessions (docs/spec/lifecycle.md §9) and their oldest open
 * approval request with its age; a decision recorded in the store but not logged yet (no worker
 * ran) no longer counts as open; a session that parked earlier and went on is not parked.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { postgresStore, type PostgresStore } from '../../stores/postgres/store.js'
import type { LogEvent } from '../../events/index.js'
import { cli } from './helpers.js'
import { approvalSession, budgetSession } from '../fixtures/view-logs.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

async function put(store: PostgresStore, id: string, events: readonly LogEvent[]): Promise<void> {
  await store.create(id, { createdAt: 0 })
  const w = await store.open(id, 'write')
  await w.append(events, { expectedSeq: 0 })
  await w.close()
}

describe('turnlog sessions: parked sessions (docs/spec/lifecycle.md §9)', () => {
  it('L18: STATUS parked and the oldest open request with its age; a recorded, unlogged decision is not open; --json has the same', async () => {
    const url = await freshDb('parked')
    const store = postgresStore({ connectionString: url })
    stores.push(store)
    await store.migrate()
    const { events } = await approvalSession()
    await put(store, 'a-parked', events)
    // the same session cut right after turn 1's decisions: it parked and went on, so it is not parked
    const wentOn = events.slice(0, events.findIndex((e) => e.type === 'turn/end') + 1)
    await put(store, 'b-went-on', wentOn)
    await put(store, 'c-budget', await budgetSession())
    await put(store, 'd-decided', events)
    await store.decide('d-decided', 'm6', { kind: 'approve' }, { by: { kind: 'user', id: 'ann' }, waitMs: 0 })

    const r = await cli(['sessions', url])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.split('\n')
    expect(lines[0]).toContain('OLDEST OPEN APPROVAL')
    const row = (id: string) => lines.find((l) => l.startsWith(id))!
    expect(row('a-parked')).toMatch(/^a-parked\s+parked\s+58\s+0\s.*\sm6 rm, \d+ d( \d+ h)? ago\s+-$/)
    expect(row('b-went-on')).toMatch(/^b-went-on\s+idle\s.*\s-\s+-$/)
    expect(row('c-budget')).toMatch(/^c-budget\s+idle\s/)
    expect(row('d-decided')).toMatch(/^d-decided\s+waiting\s+58\s+1\s.*none open, 1 decided, not logged yet/)

    const json = JSON.parse((await cli(['sessions', url, '--json'])).stdout) as Array<Record<string, any>>
    const a = json.find((x) => x.id === 'a-parked')!
    expect(a.status).toBe('parked')
    expect(a.parked).toMatchObject({
      seq: events.length - 1, open: 1, decidedNotLogged: 0,
      oldest: { approvalId: 'm6', callId: 'c4', name: 'rm', requestedAt: new Date(events.find((e) => e.type === 'tool/approval-requested' && (e.data as any).approvalId === 'm6')!.time).toISOString() },
    })
    expect(a.parked.oldest.ageMs).toBeGreaterThan(0)
    expect(json.find((x) => x.id === 'b-went-on')!.parked).toBeNull()

    // W1 (docs/spec/lifecycle.md §10): turnlog schedules lists and cancels a parked session's wakeup in the store, no agent needed
    const log = `${url}#a-parked`
    expect((await cli(['schedules', log])).stdout.split('\n')[1]).toMatch(/^ {2}w-pending due /)
    const c = await cli(['schedules', log, '--cancel', 'w-pending'])
    expect(c.code, c.stderr).toBe(0)
    expect((await cli(['schedules', log])).stdout.split('\n')[0]).toMatch(/: 0 pending wakeups$/)
    const v = await cli(['verify', log])
    expect(v.code, v.stdout + v.stderr).toBe(0)
    // still parked: a cancel of a wakeup does not end the wait
    const after = JSON.parse((await cli(['sessions', url, '--json'])).stdout) as Array<Record<string, any>>
    expect(after.find((x) => x.id === 'a-parked')!.status).toBe('parked')
  })
})
