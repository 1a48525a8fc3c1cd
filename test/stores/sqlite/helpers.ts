/** Temp files and the drivers the SQLite tests run on. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { sqliteStore, type SqliteStoreOptions } from '../../../stores/sqlite/index.js'
import type { SqliteStore } from '../../../stores/sqlite/store.js'

/** Both drivers: node:sqlite (every supported Node has it) and better-sqlite3 (the optional peer). */
export const DRIVERS = ['node:sqlite', 'better-sqlite3'] as const

const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

/** A fresh temp directory, removed after the file's tests. */
export async function tempDir(prefix = 'turnlog-sqlite-'): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix))
  dirs.push(d)
  return d
}

/** A store on a fresh file in a temp directory. */
export async function freshStore(opts: SqliteStoreOptions = {}): Promise<SqliteStore> {
  return sqliteStore(join(await tempDir(), 'sessions.db'), opts)
}
