/** The PostgreSQL the postgres benchmarks use: `TURNLOG_PG_URL`, else a throwaway one (scripts/pg.sh). */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

const PG_SH = fileURLToPath(new URL('../../scripts/pg.sh', import.meta.url))

export interface BenchDb {
  url: string
  done(): Promise<void>
}

/** A fresh database on the server (created, and dropped by `done()`). */
export async function benchDb(tag: string): Promise<BenchDb> {
  let server = process.env.TURNLOG_PG_URL
  let dir: string | undefined
  if (!server) {
    const r = spawnSync('bash', [PG_SH, 'start'], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`scripts/pg.sh start failed: ${r.stderr}`)
    server = r.stdout.trim().split('\n').pop()!
    dir = r.stderr.trim().split('\n').pop()!
  }
  const name = `turnlog_bench_${tag}_${Math.random().toString(36).slice(2, 8)}`
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const u = new URL(server)
  u.pathname = '/' + name
  return {
    url: u.toString(),
    async done() {
      const c = new pg.Client({ connectionString: server })
      await c.connect()
      await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])
      await c.query(`DROP DATABASE IF EXISTS ${name}`)
      await c.end()
      if (dir) spawnSync('bash', [PG_SH, 'stop', dir])
    },
  }
}
