/**
 * Issue 38 item 26 on PostgreSQL: a 64 MiB decision (it stalled a worker) and a sent message over
 * 1 MiB are refused with INPUT_TOO_LARGE before anything is written.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { MAX_INPUT_BYTES } from '../../../events/input-size.js'
import { postgresStore, type PostgresStore } from '../../../workers/index.js'
import { dropAll, freshDb } from './db.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

describe('postgres: one input limit (issue 38 item 26)', () => {
  it('a 64 MiB decision and a message over 1 MiB are INPUT_TOO_LARGE; nothing is written', async () => {
    const store = postgresStore({ connectionString: await freshDb('size') })
    stores.push(store)
    await store.migrate()
    await expect(store.decide('s1', 'ap-1', { kind: 'deny', reason: 'x'.repeat(64 * 1024 * 1024) })).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' })
    await expect(store.decide('s1', 'ap-1', { kind: 'approve', arguments: { text: 'x'.repeat(MAX_INPUT_BYTES) } })).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' })
    await expect(store.send('s1', 'x'.repeat(MAX_INPUT_BYTES + 1))).rejects.toMatchObject({ code: 'INPUT_TOO_LARGE' })
    expect(await store.has('s1')).toBe(false)
    expect(await store.pendingSends('s1')).toEqual([])
  })
})
