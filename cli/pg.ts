/**
 * The CLI's database side (docs/spec/api.md "CLI"): a LOG of the form `postgres://…#session-id` or
 * `sqlite:FILE#session-id` for every command that takes LOG; `turnlog sessions URL` (a
 * `postgres://…` URL or `sqlite:FILE`); `turnlog copy LOG TARGET` between JSONL, SQLite and
 * PostgreSQL in every direction. `turnlog/stores/postgres` (and so `pg`) and the SQLite store
 * are imported only when such a URL is given: the rest of the CLI never loads them.
 */
import { resolve } from 'node:path'
import type { LogEvent, SessionEvent } from '../events/envelope.js'
import { TurnlogError } from '../events/errors.js'
import type { LogHeader } from '../events/jsonl.js'
import { readChildOutcomes } from '../replay/child-outcome.js'
import type { ChildOutcome } from '../replay/closers.js'
import { readLog, type ReadLogResult } from '../replay/read-log.js'
import { writeLog } from '../replay/write-log.js'
import { assertSessionId } from '../stores/ids.js'
import type { PostgresStore, SessionRow } from '../stores/postgres/store.js'
import type { SqliteStore } from '../stores/sqlite/store.js'
import type { SqliteSessionFilter, SqliteSessionRow } from '../stores/sqlite/sessions.js'
import { existsSync } from 'node:fs'
import { EXIT_OK, UsageError } from './errors.js'
import { inline } from './escape.js'
import { colorsFor, writeLines, type CliIo } from './io.js'
import { checkOutput, outputExists } from './outputs.js'
import { json } from './escape.js'
import { parkedSessions, type ParkedInfo } from './pg-parked.js'
import { durationText } from '../replay/labels.js'
import { maskUrl } from './mask.js'

/** True for `postgres://…` and `postgresql://…`. */
export function isPgUrl(arg: string): boolean {
  return /^postgres(ql)?:\/\//i.test(arg)
}

/** True for `sqlite:FILE` (with or without `#session-id`). */
export function isSqliteUrl(arg: string): boolean {
  return /^sqlite:/i.test(arg)
}

/** True for a LOG or STORE that names a database (PostgreSQL or SQLite), not a JSONL path. */
export function isStoreUrl(arg: string): boolean {
  return isPgUrl(arg) || isSqliteUrl(arg)
}

/** A store opened from a URL: PostgreSQL or one SQLite file. */
export type UrlStore = PostgresStore | SqliteStore

/**
 * The store a URL names (without `#session-id`). A `sqlite:FILE` must exist unless `create` (a
 * copy's TARGET): a mistyped path is an error, not a new empty database.
 */
export async function openUrlStore(url: string, opts: { create?: boolean } = {}): Promise<UrlStore> {
  if (isSqliteUrl(url)) {
    const file = resolve(url.slice('sqlite:'.length))
    if (file === resolve('') || (!opts.create && !existsSync(file))) {
      throw new TurnlogError('INVALID_ARGUMENT', `${url}: no such SQLite file`, { field: 'LOG', file })
    }
    const { sqliteStore } = await import('../stores/sqlite/store.js')
    return sqliteStore(file)
  }
  const { postgresStore } = await importPgStore()
  // one connection is enough for a command; a wrong URL fails at the first query
  return postgresStore({ connectionString: url })
}

/** The URL without its credentials (for messages): userinfo password and secret query parameters (cli/mask.ts). */
export function redact(url: string): string {
  return maskUrl(url)
}

/**
 * A LOG or TARGET argument as every command prints it (issue 27.2): a PostgreSQL URL with its
 * password masked (`postgres://user:***@host/db#id`: CI logs keep what commands print), anything
 * else as given. The one function the CLI prints a LOG through.
 */
export function displayLog(arg: string): string {
  return isPgUrl(arg) ? redact(arg) : arg
}

/** Splits `postgres://…#session-id` or `sqlite:FILE#session-id`; `INVALID_ARGUMENT` without a session id. */
export function parsePgLog(arg: string): { url: string; sessionId: string } {
  const hash = arg.lastIndexOf('#')
  if (hash < 0 || hash === arg.length - 1) {
    const form = isSqliteUrl(arg) ? 'sqlite:FILE#session-id' : 'postgres://…#session-id'
    throw new TurnlogError('INVALID_ARGUMENT', `'${redact(arg)}' names no session: use ${form}`, { field: 'LOG' })
  }
  const sessionId = decodeURIComponent(arg.slice(hash + 1))
  assertSessionId(sessionId)
  return { url: arg.slice(0, hash), sessionId }
}

/**
 * `turnlog/stores/postgres`, imported on demand. `pg` is an optional peer dependency: where it is
 * not installed the import fails with `ERR_MODULE_NOT_FOUND`, which becomes `MISSING_DEPENDENCY`
 * naming what to install (issue 27.6: a user's setup, not an internal error).
 */
import type { StoreDecided, StoreDecisionInput } from '../stores/decide.js'
import type { DecisionRecord } from '../stores/types.js'

export async function importPgStore(): Promise<typeof import('../stores/postgres/store.js')> {
  try {
    return await import('../stores/postgres/store.js')
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown } | null
    if (e?.code === 'ERR_MODULE_NOT_FOUND' && typeof e.message === 'string' && /['"]pg['"]/.test(e.message)) {
      throw new TurnlogError('MISSING_DEPENDENCY',
        "a postgres:// LOG needs the optional peer dependency 'pg', which is not installed: npm install pg (and npm install -D @types/pg for TypeScript)",
        { field: 'LOG', info: { package: 'pg', install: 'npm install pg' } }, { cause: err })
    }
    throw err
  }
}

async function withStore<T>(url: string, fn: (s: UrlStore) => Promise<T>, opts: { create?: boolean } = {}): Promise<T> {
  const store = await openUrlStore(url, opts)
  try {
    return await fn(store)
  } catch (err) {
    if (TurnlogError.is(err) && err.code === 'IO_ERROR' && /relation "turnlog_/.test(err.message)) {
      throw new TurnlogError('INVALID_ARGUMENT', `${redact(url)} has no turnlog tables (run store.migrate() first)`, { field: 'URL' }, { cause: err })
    }
    throw err
  } finally {
    await store.close()
  }
}

/** Runs `fn` with the store of a `postgres://…#id` or `sqlite:FILE#id` LOG (closed after). */
export async function withPgStore<T>(arg: string, fn: (store: UrlStore, sessionId: string) => Promise<T>): Promise<T> {
  const { url, sessionId } = parsePgLog(arg)
  return withStore(url, (store) => fn(store, sessionId))
}

/** Reads a session from PostgreSQL (every event validated, seqs checked) as `readLog` would a file. */
export async function loadPgLog(arg: string): Promise<ReadLogResult & { file: string }> {
  const { url, sessionId } = parsePgLog(arg)
  return withStore(url, (store) => readPgSession(store, url, sessionId))
}

/**
 * `turnlog repair postgres://…#id`: the session, and the outcomes of the finished children of its
 * running subagent calls, read from the same database (docs/spec/lifecycle.md §10, replay/child-outcome.ts).
 */
export async function loadPgLogForRepair(arg: string): Promise<{ log: ReadLogResult & { file: string }; children: Map<string, ChildOutcome> }> {
  const { url, sessionId } = parsePgLog(arg)
  return withStore(url, async (store) => {
    const log = await readPgSession(store, url, sessionId)
    return { log, children: await readChildOutcomes(store, { header: log.header, events: log.events as LogEvent[] }) }
  })
}

async function readPgSession(store: UrlStore, url: string, sessionId: string): Promise<ReadLogResult & { file: string }> {
  const r = await store.open(sessionId, 'read')
  const events: SessionEvent[] = []
  for await (const e of r.events()) events.push(e as SessionEvent) // typed as readLog's (extension events included)
  return { header: r.header, events, file: `${redact(url)}#${sessionId}`, bytes: 0 }
}

/** `turnlog decide postgres://…#id`: recorded in the store (first decision wins); a worker logs it. */
export async function decidePgLog(
  arg: string, approvalId: string, decision: StoreDecisionInput, by: { kind: 'user'; id?: string } | undefined,
): Promise<StoreDecided> {
  const { url, sessionId } = parsePgLog(arg)
  return withStore(url, (store) => store.decide(sessionId, approvalId, decision, { ...(by ? { by } : {}), waitMs: 1000 }))
}

/** `turnlog approvals postgres://…#id`: the decisions recorded in the store and not logged yet. */
export async function pgDecisionsNotLogged(arg: string): Promise<Map<string, DecisionRecord>> {
  const { url, sessionId } = parsePgLog(arg)
  return withStore(url, (store) => store.decisionsNotLogged(sessionId))
}

/** `turnlog sessions URL [--json] [--parked|--due|--running]`: one row per session. */
export async function sessionsCommand(url: string, opts: { json?: boolean; parked?: boolean; due?: boolean; running?: boolean }, io: CliIo): Promise<number> {
  if (!isStoreUrl(url)) throw new UsageError('sessions takes a postgres:// URL or sqlite:FILE')
  const filters = (['parked', 'due', 'running'] as const).filter((f) => opts[f] === true)
  if (filters.length > 1) throw new UsageError('sessions takes one of --parked, --due, --running')
  const filter: SqliteSessionFilter | undefined = filters[0]
  if (isSqliteUrl(url)) return sqliteSessions(url.split('#')[0]!, filter, opts.json === true, io)
  if (filter === 'due') throw new UsageError('--due lists an SQLite store\'s due sessions; a PostgreSQL store\'s workers claim them (use --json and due_at)')
  const now = Date.now()
  const { rows, parked } = await withStore(url.split('#')[0]!, async (s) => ({ rows: await (s as PostgresStore).sessions(), parked: await parkedSessions(s as PostgresStore, now) }))
  // docs/spec/lifecycle.md §9: a parked session with nothing else owed is `parked` (not `idle`), with its oldest open request
  const listed = rows.map((r) => {
    const p = parked.get(r.id) ?? null
    return { ...r, status: p !== null && r.status === 'idle' ? 'parked' as const : r.status, parked: p }
  }).filter((r) => filter === undefined || r.status === filter)
  if (opts.json) {
    io.stdout(json(listed, 2) + '\n')
    return EXIT_OK
  }
  const table = [['SESSION', 'STATUS', 'EVENTS', 'PENDING', 'LAST ACTIVITY', 'LEASE OWNER', 'OLDEST OPEN APPROVAL', 'GIVEN UP']]
  for (const r of listed) {
    table.push([inline(r.id), r.status, String(r.events), String(r.pending), r.lastActivity, inline(r.leaseOwner ?? '-'), parkedCell(r.parked), givenUpCell(r.givenUp)])
  }
  printTable(table, listed.length, io)
  return EXIT_OK
}

/** `turnlog sessions sqlite:FILE`: the rows and filters come from the session table (indexed). */
async function sqliteSessions(url: string, filter: SqliteSessionFilter | undefined, asJson: boolean, io: CliIo): Promise<number> {
  const rows: SqliteSessionRow[] = await withStore(url, (s) => (s as SqliteStore).sessions(filter))
  if (asJson) {
    io.stdout(json(rows, 2) + '\n')
    return EXIT_OK
  }
  const table = [['SESSION', 'STATUS', 'EVENTS', 'PENDING', 'LAST ACTIVITY', 'DUE', 'LEASE OWNER', 'TITLE', 'GIVEN UP']]
  for (const r of rows) {
    table.push([inline(r.id), r.status, String(r.events), String(r.pending), r.lastActivity, r.dueAt ?? '-', inline(r.leaseOwner ?? '-'),
      inline(r.title ?? '-'), givenUpCell(r.givenUp)])
  }
  printTable(table, rows.length, io)
  return EXIT_OK
}

function printTable(table: string[][], n: number, io: CliIo): void {
  const c = colorsFor(io)
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)))
  const lines = table.map((row, k) => {
    const line = row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()
    return k === 0 ? c.bold(line) : line
  })
  lines.push(c.dim(`${n} session${n === 1 ? '' : 's'}`))
  writeLines(io.stdout, lines)
}

/** "m6 rm, 3 h 2 min ago (2 open)": the oldest open request of a parked session, or '-'. */
function parkedCell(p: ParkedInfo | null): string {
  if (p === null) return '-'
  const later = p.decidedNotLogged > 0 ? `, ${p.decidedNotLogged} decided, not logged yet` : ''
  if (p.oldest === null) return `none open${later}`
  return `${inline(p.oldest.approvalId)} ${inline(p.oldest.name || '?')}, ${durationText(p.oldest.ageMs)} ago${p.open > 1 ? ` (${p.open} open)` : ''}${later}`
}

/** "2 messages after 3 runs (turn 4)": resume's give-ups (docs/spec/lifecycle.md §8), or '-'. */
function givenUpCell(g: SessionRow['givenUp']): string {
  if (g.length === 0) return '-'
  const n = g.reduce((k, x) => k + x.messages.length, 0)
  const last = g[g.length - 1]!
  return `${n} message${n === 1 ? '' : 's'} after ${last.runs} run${last.runs === 1 ? '' : 's'} (turn ${last.turn}${g.length > 1 ? `, ${g.length} records` : ''})`
}

/**
 * `turnlog copy LOG TARGET`: between a JSONL file, `sqlite:FILE#id` and `postgres://…#id`, in every
 * direction: a database TARGET is a new session (`SESSION_EXISTS` if it is there; a new SQLite file
 * is made), a JSONL TARGET a new file (`FILE_EXISTS` unless `--force`). Lossless: the events are
 * validated on the way and read back equal. The events are validated on the way; the header keeps `createdAt`,
 * `parent` and `inheritedEventCount`.
 */
export async function copyCommand(from: string, to: string, opts: { force?: boolean }, io: CliIo): Promise<number> {
  // a JSONL TARGET follows the one output rule (cli/outputs.ts): never FROM, FILE_EXISTS without --force
  const outFile = isStoreUrl(to) ? undefined : resolve(io.cwd ?? process.cwd(), to)
  const rule = { inputs: isStoreUrl(from) ? [] : [resolve(io.cwd ?? process.cwd(), from)], force: opts.force === true, field: 'TARGET' }
  if (outFile !== undefined) await checkOutput(outFile, rule)
  let log: { header: LogHeader; events: readonly LogEvent[] }
  if (isStoreUrl(from)) log = await loadPgLog(from)
  else log = await readLog(resolve(io.cwd ?? process.cwd(), from))
  let where: string
  if (isStoreUrl(to)) {
    const { url, sessionId } = parsePgLog(to)
    await withStore(url, async (store) => {
      const h = log.header
      await store.create(sessionId, {
        createdAt: h.createdAt,
        ...(h.parent ? { parent: h.parent } : {}),
        ...(h.inheritedEventCount !== undefined ? { inheritedEventCount: h.inheritedEventCount } : {}),
      })
      const w = await store.open(sessionId, 'write')
      try {
        const CHUNK = 2000
        for (let at = 0; at < log.events.length; at += CHUNK) {
          await w.append(log.events.slice(at, at + CHUNK), { expectedSeq: at })
        }
      } finally {
        await w.close()
      }
    }, { create: true })
    where = `${redact(url)}#${sessionId}`
  } else {
    const out = outFile!
    const target = isStoreUrl(from) ? { ...log.header, id: parsePgLog(from).sessionId } : log.header
    await checkOutput(out, rule)
    try {
      // writeLog: validated, temp file, fsync, link (or rename with --force)
      await writeLog(out, { header: target, events: log.events }, { overwrite: opts.force === true })
    } catch (err) {
      throw TurnlogError.is(err, 'FILE_EXISTS') ? outputExists(out, 'TARGET') : err
    }
    where = to
  }
  const c = colorsFor(io)
  writeLines(io.stdout, [`${c.green('copied')} ${log.events.length} event${log.events.length === 1 ? '' : 's'} → ${where}`])
  return EXIT_OK
}
