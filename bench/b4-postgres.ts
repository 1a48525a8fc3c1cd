/**
 * B4 postgres (bench/README.md): append throughput of `postgresStore` (each batch one
 * `turnlog_append`: lease token, expiry and seq checked under the session row's lock, one
 * multi-row INSERT, commit with the server's fsync) against raw multi-row INSERTs of the same rows
 * in the same batches, one transaction (autocommit statement) each, into a table with the same key,
 * same server, same pool size, same run. 8 sessions in parallel. Target ≥ 0.5× raw.
 * `TURNLOG_B4_EVENTS` per session (default 1,024 here), `TURNLOG_B4_BATCH` (16), median of 3.
 */
import type { LogEvent } from '../events/envelope.js'
import { postgresStore } from '../stores/postgres/index.js'
import pg from 'pg'
import { envInt, median, round, type BenchResult } from './common.js'
import { generateEvents } from './gen-log.js'
import { benchDb } from './pg-server.js'

const RUNS = 3

export async function benchPostgres(log: (l: string) => void): Promise<BenchResult> {
  const perSession = envInt('TURNLOG_B4_EVENTS', 1024)
  const batchSize = envInt('TURNLOG_B4_BATCH', 16)
  const sessions = envInt('TURNLOG_B4_SESSIONS', 8)
  const events = generateEvents({ events: perSession }).slice(0, perSession)
  const batches: LogEvent[][] = []
  for (let i = 0; i < events.length; i += batchSize) batches.push(events.slice(i, i + batchSize))
  const texts = batches.map((b) => b.map((e) => JSON.stringify(e)))
  const db = await benchDb('b4')
  const store = postgresStore({ connectionString: db.url })
  const raw = new pg.Pool({ connectionString: db.url, max: 10 })
  try {
    await store.migrate()
    await raw.query('CREATE TABLE raw_events (session_id text NOT NULL, seq integer NOT NULL, event json NOT NULL, PRIMARY KEY (session_id, seq))')
    const rawMs: number[] = []
    const pgMs: number[] = []
    for (let run = 0; run < RUNS; run++) {
      let t0 = performance.now()
      await Promise.all(Array.from({ length: sessions }, async (_, s) => {
        const id = `r${run}-${s}`
        for (let b = 0; b < texts.length; b++) {
          const rows = texts[b]!
          const values: string[] = []
          const params: unknown[] = [id]
          for (let i = 0; i < rows.length; i++) {
            params.push(b * batchSize + i, rows[i])
            values.push(`($1, $${params.length - 1}, $${params.length})`)
          }
          await raw.query(`INSERT INTO raw_events (session_id, seq, event) VALUES ${values.join(', ')}`, params)
        }
      }))
      rawMs.push(performance.now() - t0)
      t0 = performance.now()
      await Promise.all(Array.from({ length: sessions }, async (_, s) => {
        const id = `p${run}-${s}`
        await store.create(id, { createdAt: 1764450000000 })
        const w = await store.open(id, 'write')
        for (const b of batches) await w.append(b, { expectedSeq: b[0]!.seq, trusted: true })
        await w.close()
      }))
      pgMs.push(performance.now() - t0)
      log(`  run ${run + 1}: raw ${rawMs[run]!.toFixed(0)} ms, postgresStore ${pgMs[run]!.toFixed(0)} ms`)
    }
    const n = sessions * events.length
    const r = median(rawMs)
    const p = median(pgMs)
    return {
      value: round(r / p, 2),
      unit: 'x raw INSERT',
      target: '>= 0.5',
      detail: {
        sessions, eventsPerSession: events.length, batch: batchSize,
        rawMs: round(r, 1), postgresMs: round(p, 1),
        rawEventsPerSec: Math.round(n / (r / 1000)), postgresEventsPerSec: Math.round(n / (p / 1000)),
      },
    }
  } finally {
    await raw.end()
    await store.close()
    await db.done()
  }
}
