/**
 * Round 14 (issue 24 item 6, B8 per CPU): what a worker sends to PostgreSQL for one session, and
 * that the statements it no longer sends lose nothing.
 * - A session with one message and no stop request or decision starts without a read of its own:
 *   the claim returned its message and said there is no stop request or decision, and there is
 *   no second pull round after the pull that moved the message (the hand-back's `pending = 0`
 *   catches input sent after it). B8 counted 2 inbox + 2 decisions + 1 cancel reads per session
 *   before.
 * - A stop request recorded after the claim, while the session is still being resumed (its
 *   NOTIFY meets no agent yet), is handled when the agent exists, not at the next fallback check.
 *   With `pollMs` at a minute here, only the start can handle it within the test.
 */
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresStore, runWorkers, type PostgresStore } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { answered, echoAgent, readAll, until, verifyOk } from '../stores/postgres/helpers.js'

const stores: PostgresStore[] = []
const pools: pg.Pool[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  for (const p of pools) await p.end()
  await dropAll()
})

const KINDS: Array<[string, RegExp]> = [
  ['inboxRead', /FROM turnlog_inbox WHERE session_id = \$1 AND moved_seq IS NULL/],
  ['decisionsRead', /FROM turnlog_decisions WHERE session_id = \$1 AND logged_seq IS NULL/],
  ['cancelsRead', /FROM turnlog_cancels WHERE session_id = \$1 AND handled_at IS NULL/],
  ['append', /turnlog_append/],
  // one statement: the hand-back checks pending input and open stop requests server-side (cancels.ts)
  ['handBack', /SELECT turnlog_hand_back\(\$1, \$2\)/],
]

/** A store on a pool whose statements are counted by kind (the LISTEN connection is not). */
async function countedStore(tag: string): Promise<{ store: PostgresStore; counts: Map<string, number>; pool: pg.Pool }> {
  const url = await freshDb(tag)
  const pool = new pg.Pool({ connectionString: url, max: 5 })
  pool.on('error', () => {})
  pools.push(pool)
  const counts = new Map<string, number>()
  const query = pool.query.bind(pool) as (...a: unknown[]) => unknown
  ;(pool as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
    const text = typeof a[0] === 'string' ? a[0] : ''
    for (const [k, re] of KINDS) if (re.test(text)) counts.set(k, (counts.get(k) ?? 0) + 1)
    return query(...a)
  }
  const store = postgresStore({ pool, connectionString: url })
  stores.push(store)
  await store.migrate()
  return { store, counts, pool }
}

describe('workers: statements per session (round 14, B8)', () => {
  it('docs/spec/api.md "Across machines": a one-message session costs no inbox, decisions or cancel read after its claim, one hand-back; answered once', async () => {
    const { store, counts, pool } = await countedStore('rt')
    const w = runWorkers({ store, concurrency: 1, leaseMs: 30_000, pollMs: 60_000, lingerMs: 0, agent: () => echoAgent() })
    try {
      // the message is sent once the worker listens and its claims on connecting are done: a session
      // claimed before its LISTEN connects is checked again when it does (the catch-up for NOTIFYs it
      // could have missed), and one notified while a claim is in flight is read again after it; under
      // load either made the start read the inbox and decisions once more
      let quiet = 0
      await until(async () => {
        const r = (await pool.query(`SELECT count(*) FILTER (WHERE query LIKE 'LISTEN %')::int AS listening,
          count(*) FILTER (WHERE state = 'active' AND pid <> pg_backend_pid())::int AS busy
          FROM pg_stat_activity WHERE datname = current_database()`)).rows[0] as { listening: number; busy: number }
        quiet = r.listening > 0 && r.busy === 0 ? quiet + 1 : 0
        return quiet >= 2
      }, 'the worker listens, no claim in flight', 30_000)
      await store.send('s1', 'hello')
      await until(() => w.stats.handedBack === 1, 's1 handed back', 30_000)
    } finally {
      await w.stop()
    }
    const events = await readAll(store, 's1')
    expect(verifyOk(events)).toEqual([])
    expect(answered(events).unanswered).toEqual([])
    expect([...answered(events).count.values()]).toEqual([1])
    expect(Object.fromEntries([...counts].filter(([k]) => k !== 'append'))).toEqual({ handBack: 1 })
  })

  it('docs/spec/api.md "Across machines" (stop from any process): a stop recorded while the claimed session is still resuming is handled at its start', async () => {
    const { store } = await countedStore('rtc')
    await store.send('s2', 'to be stopped')
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let resuming = false
    const w = runWorkers({
      store, concurrency: 1, leaseMs: 30_000, pollMs: 60_000, lingerMs: 0,
      agent: async () => {
        resuming = true
        await gate
        return echoAgent()
      },
    })
    try {
      await until(() => resuming, 's2 claimed', 30_000)
      // recorded after the claim: its NOTIFY reaches the worker while there is no agent yet
      await store.cancel('s2')
      await new Promise((r) => setTimeout(r, 300))
      release()
      await until(async () => {
        const r = await store.pool.query('SELECT count(*)::int AS n FROM turnlog_cancels WHERE session_id = $1 AND handled_at IS NOT NULL', ['s2'])
        return (r.rows[0] as { n: number }).n === 1
      }, 'the stop handled', 20_000)
      await until(() => w.stats.handedBack === 1, 's2 handed back', 20_000)
    } finally {
      release()
      await w.stop()
    }
    const events = await readAll(store, 's2')
    expect(verifyOk(events)).toEqual([])
    // the message sent before the stop is not answered
    expect(events.some((e) => e.type === 'assistant/message')).toBe(false)
  })
})
