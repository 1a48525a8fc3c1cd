/**
 * A decision for a child parked under a PostgreSQL worker (docs/spec/lifecycle.md §9, §10; L19), real server:
 * the child runs inside the worker that serves its parent (its own lease, never claimed on its
 * own), so a decision recorded elsewhere with `store.decide(childId, …)` must reach the child
 * through that worker. The child's body runs once, the parent's call gets exactly one result, and
 * every log verifies.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { verifyChild } from '../../replay/verify-child.js'
import { defineTool } from '../../tools/index.js'
import { postgresStore, runWorkers, type PostgresStore } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll, until, verifyOk } from '../stores/postgres/helpers.js'
import { checkSessions } from '../../workers/checks.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

const CHILD = 'p.c1-1-c1'

/** A parent whose one call runs a child that asks to run `rm` (needsApproval), then answers. */
function family(ran: string[]) {
  const rm = defineTool({
    name: 'rm', description: 'rm', parameters: z.object({ path: z.string() }), needsApproval: true,
    execute: ({ path }) => {
      ran.push(path)
      return 'removed'
    },
  })
  const research = defineSubagent({
    name: 'research', description: 'Cleans up', parameters: z.object({ question: z.string() }),
    agent: () => ({
      model: scriptedModel((request) => {
        const last = request.messages[request.messages.length - 1]
        return last?.role === 'tool' ? { text: 'cleaned' } : { toolCalls: [{ name: 'rm', args: { path: 'x' }, id: 'k1' }] }
      }),
      tools: [rm], system: 'child',
    }),
  })
  return {
    model: scriptedModel((request) => {
      const last = request.messages[request.messages.length - 1]
      return last?.role === 'tool' ? { text: 'parent done' } : { toolCalls: [{ name: 'research', args: { question: 'clean up' }, id: 'c1' }] }
    }),
    tools: [research], system: 'parent',
  }
}

const results = (ev: readonly LogEvent[]) => ev.filter((e) => e.type === 'tool/result') as EventOf<'tool/result'>[]
const text = (r: EventOf<'tool/result'>) => r.data.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')

async function leaseOwner(store: PostgresStore, id: string): Promise<string | null> {
  const r = await store.pool.query('SELECT lease_owner FROM turnlog_sessions WHERE id = $1', [id])
  return (r.rows[0] as { lease_owner: string | null } | undefined)?.lease_owner ?? null
}

describe('a decision for a child parked under a PostgreSQL worker (docs/spec/lifecycle.md §9, §10)', () => {
  // `decisionPollMs` is the child's own parked-owner poll (its write handle is the store's, not the
  // worker's): at 1 h only the worker's NOTIFY can bring the decision within the test's time
  // `through`: the session id given to store.decide — the child's own, or the parent's (the parent
  // lists its running child's requests, docs/spec/lifecycle.md §10: the store routes the id to the child)
  it.each([
    ['the child\'s own poll', 500, CHILD],
    ['the worker: its NOTIFY or its fallback check, the child\'s poll off', 3_600_000, CHILD],
    ['decided through the parent\'s id, the child\'s poll off', 3_600_000, 'p'],
  ])('L19: store.decide from another store handle reaches the child (%s): its body runs once, the parent\'s call gets one result, every log verifies', async (_how, decisionPollMs, through) => {
    const url = await freshDb('subdec')
    const store = postgresStore({ connectionString: url, leaseMs: 2000, decisionPollMs })
    const other = postgresStore({ connectionString: url, leaseMs: 2000 })
    stores.push(store, other)
    await store.migrate()
    const ran: string[] = []
    const served: string[] = []
    const w = runWorkers({
      store, concurrency: 4, leaseMs: 2000, pollMs: 50, lingerMs: 0,
      agent: (id) => {
        served.push(id)
        return family(ran)
      },
    })
    try {
      await store.send('p', 'clean up')
      // another store handle sees what is durable: the parent's child/spawned and the child's park
      await until(async () => (await readAll(store, CHILD).catch(() => [])).some((e) => e.type === 'step/parked') &&
        (await readAll(store, 'p')).some((e) => e.type === 'child/spawned'), 'the child parks', 20_000)
      const requested = (await readAll(other, CHILD)).find((e) => e.type === 'tool/approval-requested') as EventOf<'tool/approval-requested'>
      const d = await other.decide(through, requested.data.approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } })
      expect([d.sessionId, d.callId, d.decision]).toEqual([CHILD, 'k1', { kind: 'approve' }])
      await until(async () => (await readAll(store, 'p')).some((e) => e.type === 'turn/end') && (await leaseOwner(store, 'p')) === null,
        'the parent ends', 20_000, async () => JSON.stringify((await readAll(store, CHILD)).map((e) => e.type)))
      expect(ran).toEqual(['x'])
      const parent = await readAll(store, 'p')
      expect(results(parent).map(text)).toEqual(['cleaned'])
      expect(parent.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['completed'])
      expect(verifyOk(parent)).toEqual([])
      const child = await readAll(store, CHILD)
      const decided = child.filter((e) => e.type === 'tool/approval-decided') as EventOf<'tool/approval-decided'>[]
      expect(decided.map((e) => [e.data.decision.kind, e.data.by])).toEqual([['approve', { kind: 'user', id: 'ann' }]])
      expect(results(child).map(text)).toEqual(['removed'])
      expect(verifyOk(child)).toEqual([])
      expect(verifyChild('p', parent, (await store.open(CHILD, 'read')).header)).toEqual([])
      expect(await leaseOwner(store, CHILD)).toBeNull()
      expect(served).toEqual(['p'])
    } finally {
      await w.stop()
    }
  }, 60_000)

  it('L19: the worker\'s fallback check finds an unlogged decision of a child it serves and hands it to that child, not to a run', async () => {
    const store = postgresStore({ connectionString: await freshDb('subchk'), leaseMs: 2000 })
    stores.push(store)
    await store.migrate()
    await store.pool.query(`INSERT INTO turnlog_decisions (session_id, approval_id, record) VALUES ('p.c1-1-c1', 'a1', '{}'), ('q', 'a2', '{}')`)
    const pulled: string[] = []
    const poked: string[] = []
    const errors: unknown[] = []
    const run = { id: 'p', exclusive: <T>(fn: () => Promise<T>) => fn(), pull: async () => void pulled.push('p') }
    await checkSessions((sql, params) => store.pool.query(sql, params), new Map([['p', run as never]]), (e) => errors.push(e),
      [CHILD], (id) => poked.push(id))
    expect(errors).toEqual([])
    expect(poked).toEqual([CHILD])
    expect(pulled).toEqual([])
  }, 30_000)
})
