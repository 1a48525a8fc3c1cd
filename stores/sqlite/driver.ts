/**
 * The SQLite driver of `sqliteStore`: `node:sqlite` (`DatabaseSync`) where the running Node has it,
 * else `better-sqlite3` (an optional peer dependency). Both are synchronous and share the small
 * surface used here (`exec`, `prepare` → `run`/`get`/`all`), so the store is written once against
 * `SqlDb`. The choice is automatic and overridable (`driver` option); see
 * decision record "sqlite-durability" (docs/decisions/ in the repository) for the pragmas every connection gets.
 */
import { createRequire } from 'node:module'
import { TurnlogError } from '../../events/errors.js'

/** Which driver opens the file. `'auto'`: `node:sqlite` when available, else `better-sqlite3`. */
export type SqliteDriverName = 'auto' | 'node:sqlite' | 'better-sqlite3'

/** A bound value: what both drivers accept. */
export type SqlValue = string | number | bigint | null | Uint8Array

/** A prepared statement (positional `?` parameters). */
export interface SqlStatement {
  run(...params: SqlValue[]): { changes: number | bigint }
  get(...params: SqlValue[]): Record<string, unknown> | undefined
  all(...params: SqlValue[]): Array<Record<string, unknown>>
}

/** A prepared statement whose rows are arrays of the selected columns, in order. */
export interface SqlArrayStatement {
  all(...params: SqlValue[]): unknown[][]
}

/** One open connection. */
export interface SqlDb {
  /** The driver that opened it. */
  readonly driver: 'node:sqlite' | 'better-sqlite3'
  exec(sql: string): void
  prepare(sql: string): SqlStatement
  /**
   * A statement that returns rows as arrays (node:sqlite `setReturnArrays`, better-sqlite3 `raw`):
   * no object with the columns' names is built per row, for listings of thousands of rows.
   */
  prepareArrays(sql: string): SqlArrayStatement
  close(): void
}

const require = createRequire(import.meta.url)

/** What each driver's statement has besides `SqlStatement`: its way to return rows as arrays. */
type DriverStatement = SqlStatement & { setReturnArrays?(on: boolean): void; raw?(on: boolean): unknown }

interface DriverDb {
  exec(sql: string): void
  prepare(sql: string): DriverStatement
  close(): void
}

interface NodeSqlite {
  DatabaseSync: new (path: string, opts?: Record<string, unknown>) => DriverDb
}

type BetterSqlite3Ctor = new (path: string, opts?: Record<string, unknown>) => DriverDb

let nodeSqlite: NodeSqlite | null | undefined

/** `node:sqlite`, or null when this Node has none (Node < 22.5). */
function loadNodeSqlite(): NodeSqlite | null {
  if (nodeSqlite !== undefined) return nodeSqlite
  try {
    // Node 22 prints an ExperimentalWarning the first time the module loads; it is the only one
    // it prints for this module, and it is not ours to silence (process-wide warning listeners).
    nodeSqlite = require('node:sqlite') as NodeSqlite
  } catch {
    nodeSqlite = null
  }
  return nodeSqlite
}

function loadBetterSqlite3(): BetterSqlite3Ctor {
  try {
    return require('better-sqlite3') as BetterSqlite3Ctor
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') {
      throw new TurnlogError('MISSING_DEPENDENCY',
        "sqliteStore needs node:sqlite (Node 22.5 or later) or the optional peer dependency 'better-sqlite3': npm install better-sqlite3",
        { field: 'driver', info: { package: 'better-sqlite3', install: 'npm install better-sqlite3' } }, { cause: err })
    }
    // installed but its native addon does not load (built for another Node ABI, say)
    throw new TurnlogError('MISSING_DEPENDENCY',
      `better-sqlite3 is installed but does not load in this Node (${process.version}): ${String((err as Error)?.message ?? err)}; run npm rebuild better-sqlite3`,
      { field: 'driver', info: { package: 'better-sqlite3', install: 'npm rebuild better-sqlite3' } }, { cause: err })
  }
}

/** The driver `'auto'` picks in this process. */
export function defaultDriver(): 'node:sqlite' | 'better-sqlite3' {
  return loadNodeSqlite() ? 'node:sqlite' : 'better-sqlite3'
}

/** Opens `file` with the named driver (no pragmas: the store sets them). Coded errors. */
export function openDb(file: string, driver: SqliteDriverName = 'auto'): SqlDb {
  const name = driver === 'auto' ? defaultDriver() : driver
  if (name !== 'node:sqlite' && name !== 'better-sqlite3') {
    throw new TurnlogError('INVALID_OPTION', `driver must be 'auto', 'node:sqlite' or 'better-sqlite3', got ${String(driver)}`, { field: 'driver' })
  }
  let db: DriverDb
  try {
    if (name === 'node:sqlite') {
      const m = loadNodeSqlite()
      if (!m) {
        throw new TurnlogError('MISSING_DEPENDENCY', `node:sqlite is not available in Node ${process.version} (22.5 or later has it); use driver: 'better-sqlite3'`, { field: 'driver' })
      }
      db = new m.DatabaseSync(file)
    } else {
      const Ctor = loadBetterSqlite3()
      db = new Ctor(file)
    }
  } catch (err) {
    if (TurnlogError.is(err)) throw err
    throw sqlError(err, undefined, `cannot open ${file}`, file)
  }
  return {
    driver: name,
    exec: (sql) => db.exec(sql),
    prepare: (sql) => db.prepare(sql),
    prepareArrays: (sql) => {
      const st = db.prepare(sql)
      if (name === 'node:sqlite') st.setReturnArrays!(true)
      else st.raw!(true)
      return st as unknown as SqlArrayStatement
    },
    close: () => db.close(),
  }
}

/** SQLite's primary result code of a driver error (node:sqlite: `errcode`; better-sqlite3: `code` name). */
export function sqliteCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; errcode?: unknown; errstr?: unknown } | null
  if (typeof e?.errcode === 'number') {
    const primary = e.errcode & 0xff
    return PRIMARY[primary] ?? `SQLITE_${primary}`
  }
  if (typeof e?.code === 'string' && e.code.startsWith('SQLITE_')) {
    const m = /^SQLITE_[A-Z]+/.exec(e.code)
    return m ? m[0] : e.code
  }
  return undefined
}

const PRIMARY: Record<number, string> = {
  1: 'SQLITE_ERROR', 5: 'SQLITE_BUSY', 6: 'SQLITE_LOCKED', 8: 'SQLITE_READONLY', 10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT', 13: 'SQLITE_FULL', 14: 'SQLITE_CANTOPEN', 19: 'SQLITE_CONSTRAINT', 26: 'SQLITE_NOTADB',
}

/** True for "another connection holds the lock" (after `busy_timeout` ran out). */
export function isBusy(err: unknown): boolean {
  const c = sqliteCode(err)
  return c === 'SQLITE_BUSY' || c === 'SQLITE_LOCKED'
}

/** A coded error for what a driver threw. */
export function sqlError(err: unknown, sessionId: string | undefined, what: string, file?: string): TurnlogError {
  if (TurnlogError.is(err)) return err
  const code = sqliteCode(err)
  const message = `${what}: ${String((err as Error | null)?.message ?? err)}`
  const details = { ...(sessionId !== undefined ? { sessionId } : {}), ...(file !== undefined ? { file } : {}), info: { sqlite: code ?? null } }
  if (code === 'SQLITE_CONSTRAINT') return new TurnlogError('SEQ_CONFLICT', message, details, { cause: err })
  return new TurnlogError('IO_ERROR', message, details, { cause: err })
}
