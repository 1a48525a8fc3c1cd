/**
 * Test databases on the server the globalSetup provided: `freshDb()` creates an empty database
 * (a store's tables start empty) and returns its URL; `dropAll()` drops what this file created.
 */
import pg from 'pg'
import { inject } from 'vitest'

export function serverUrl(): string {
  const url = inject('pgUrl') ?? process.env.TURNLOG_PG_URL
  if (!url) throw new Error('no PostgreSQL: the globalSetup did not provide pgUrl')
  return url
}

const created: string[] = []

export function dbUrl(server: string, db: string): string {
  const u = new URL(server)
  u.pathname = '/' + db
  return u.toString()
}

/** Creates an empty database named `turnlog_<tag>_<random>`; returns its URL. */
export async function freshDb(tag = 't'): Promise<string> {
  const server = serverUrl()
  const name = `turnlog_${tag}_${Math.random().toString(36).slice(2, 10)}`
  const c = new pg.Client({ connectionString: server })
  await c.connect()
  try {
    await c.query(`CREATE DATABASE ${name}`)
  } finally {
    await c.end()
  }
  created.push(name)
  return dbUrl(server, name)
}

/** Drops the databases made by `freshDb` in this file (terminating leftover connections). */
export async function dropAll(): Promise<void> {
  const c = new pg.Client({ connectionString: serverUrl() })
  await c.connect()
  try {
    for (const name of created.splice(0)) {
      await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])
      await c.query(`DROP DATABASE IF EXISTS ${name}`)
    }
  } finally {
    await c.end()
  }
}
