/**
 * Resume's give-up on the PostgreSQL workers (docs/spec/lifecycle.md §8 as amended, issue 24 item 1): a worker
 * that takes over a session whose interrupted turn is at its resume limit writes the durable
 * `resume/given-up` record, its `onError` hears `RESUME_LIMIT` (0 of 12 reports reached it before:
 * the listener was attached after `resumeAgent` returned), the session goes on with new input, and
 * `turnlog sessions` shows the give-up.
 */
import { afterAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../../events/index.js'
import { postgresStore, runWorkers, type PostgresStore } from '../../../workers/index.js'
import { cli } from '../../cli/helpers.js'
import { crashedPoison, poisonModel, reachedRun } from '../../replay/given-up-log.js'
import { dropAll, freshDb } from './db.js'
import { answered, readAll, until, verifyOk } from './helpers.js'

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

describe('postgres workers: resume gives up durably', () => {
  it('L13 §8: RESUME_LIMIT reaches runWorkers onError; resume/given-up names the message; new input is answered; turnlog sessions shows it', async () => {
    const url = await freshDb('gu')
    const store = postgresStore({ connectionString: url })
    stores.push(store)
    await store.migrate()
    // a session whose poison turn was re-run 3 times (each reached its request) and crashed again
    let { log, id } = await crashedPoison()
    for (let round = 1; round <= 3; round++) log = await reachedRun(log)
    await store.create('g', { createdAt: 0 })
    const w0 = await store.open('g', 'write')
    await w0.append(log, { expectedSeq: 0 })
    await w0.close()
    const later = await store.send('g', 'something else')

    const errors: Array<{ code?: string; sid?: string; info?: unknown }> = []
    const w = runWorkers({
      store, leaseMs: 2000, pollMs: 50,
      agent: () => ({ model: poisonModel(() => { throw new Error('the poison turn must not be re-run') }), system: 'gu' }),
      onError: (e, sid) => errors.push({ code: (e as { code?: string })?.code, sid, info: (e as { info?: unknown })?.info }),
    })
    let events: LogEvent[] = []
    await until(async () => {
      const r = (await store.sessions())[0]
      events = await readAll(store, 'g')
      return r?.status === 'idle' && r.pending === 0 && answered(events).count.has(later)
    }, 'the give-up and the new message answered')
    await w.stop()

    expect(errors.filter((e) => e.code === 'RESUME_LIMIT')).toEqual([
      { code: 'RESUME_LIMIT', sid: 'g', info: expect.objectContaining({ turn: 4, resumeRuns: 3, messages: [id] }) },
    ])
    const g = events.filter((e) => e.type === 'resume/given-up').map((e) => e.data)
    expect(g).toEqual([{ turn: 4, reason: 'resume-runs', runs: 3, unreachedRuns: 0, maxResumeRuns: 3, messages: [id] }])
    expect(answered(events).unanswered).toEqual([])
    expect(verifyOk(events)).toEqual([])

    const json = await cli(['sessions', url, '--json'])
    expect(json.code, json.stderr).toBe(0)
    const rows = JSON.parse(json.stdout) as Array<{ id: string; givenUp: unknown }>
    expect(rows).toEqual([expect.objectContaining({ id: 'g', givenUp: [{ seq: expect.any(Number), turn: 4, runs: 3, messages: [id] }] })])
    const table = await cli(['sessions', url])
    expect(table.stdout).toMatch(/GIVEN UP/)
    expect(table.stdout).toContain('1 message after 3 runs (turn 4)')
  })
})
