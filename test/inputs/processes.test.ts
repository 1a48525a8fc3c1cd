/**
 * Input rounds across real processes (docs/spec/lifecycle.md §11; R10, R11, L21): a body never waits in memory.
 * JSONL: a process asks a round and exits; `turnlog inputs` lists it and `turnlog answer` answers
 * it from another process (a refused answer exits 2 naming the field and writes nothing; a second
 * answer exits 2 INPUT_ANSWERED); a third process resumes and the body's next round runs once.
 * PostgreSQL and SQLite: worker processes serve the session and each is SIGKILLed between rounds;
 * `turnlog answer` records each answer in the store; the next worker runs each round once.
 * Body runs are counted in a file the tool appends to (expected vs counted).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventOf, LogEvent } from '../../events/index.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { postgresStore, type PostgresStore } from '../../workers/index.js'
import { sqliteStore, type SqliteStore } from '../../workers/sqlite.js'
import { childLib, ROOT } from '../stores/child-lib.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { until } from '../stores/postgres/helpers.js'
import { cliMain } from '../cli/cli-child.js'

const CHILD = fileURLToPath(new URL('./children/input-child.mjs', import.meta.url))
let lib = ''
let cli = ''
const dirs: string[] = []
const closers: Array<() => Promise<void>> = []
const procs: ChildProcess[] = []
beforeAll(() => {
  lib = childLib()
  cli = cliMain()
}, 300_000)
afterAll(async () => {
  for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL')
  for (const c of closers) await c()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'turnlog-inputs-proc-'))
  dirs.push(d)
  return d
}

/** Runs the child until it prints a line starting with `until`. */
function child(args: string[], until: string) {
  const proc = spawn(process.execPath, [CHILD, lib, ...args], { cwd: ROOT, stdio: 'pipe' })
  procs.push(proc)
  let out = ''
  let err = ''
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => proc.on('exit', (code, signal) => r({ code, signal })))
  const line = new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      const l = out.split('\n').find((x) => x.startsWith(until))
      if (l !== undefined) resolve(l)
    })
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
    void exited.then((x) => reject(new Error(`child exited ${JSON.stringify(x)} before ${until}: ${out} ${err}`)))
  })
  return { proc, line, exited }
}

function turnlog(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

/** The body runs counted, as `<session> <callId> <round> <action>` lines. */
async function runLines(count: string): Promise<string[]> {
  return (await readFile(count, 'utf8').catch(() => '')).split('\n').filter(Boolean)
}

/** The runs of one call (by the log's call id), as `<session> <round> <action>`; R10: no round of a call runs twice. */
async function runs(count: string, callId?: string): Promise<string[]> {
  const lines = await runLines(count)
  const keys = lines.map((l) => l.split(' ').slice(0, 3).join(' '))
  expect(new Set(keys).size, `a round of a call ran twice: ${lines.join(', ')}`).toBe(keys.length)
  return lines.filter((l) => callId === undefined || l.split(' ')[1] === callId).map((l) => { const [s, , r, a] = l.split(' '); return `${s} ${r} ${a}` })
}

const asked = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/input-requested'> => e.type === 'tool/input-requested')
const provided = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/input-provided'> => e.type === 'tool/input-provided')

describe('input rounds across processes (docs/spec/lifecycle.md §11)', () => {
  it('R10 R11 L21 (JSONL): ask and exit; `turnlog inputs` + `turnlog answer` from another process; a resumed process runs the next round once', async () => {
    const dir = await tmp()
    const count = join(dir, 'count')
    const log = join(dir, 's1.jsonl')
    const a = child(['jsonl', dir, 's1', count, 'ask-exit'], 'PARKED')
    const [, status, r1] = (await a.line).split(' ')
    expect((await a.exited).code).toBe(0)
    expect(status).toBe('parked')
    const listed = await turnlog(['inputs', log])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain(r1)
    expect(listed.stdout).toContain('address (form): Where to?')
    const asJson = JSON.parse((await turnlog(['inputs', log, '--json'])).stdout) as Array<{ requestId: string; round: number }>
    expect(asJson.map((x) => [x.requestId, x.round])).toEqual([[r1, 1]])
    // refusals: exit 2, nothing written
    expect((await turnlog(['answer', log, r1!])).code).toBe(2) // neither --json nor --decline
    const bad = await turnlog(['answer', log, r1!, '--json', '{"address":{"city":""}}'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('INVALID_INPUT')
    expect(bad.stderr).toContain('responses.address/city')
    expect((await turnlog(['answer', log, 'nope', '--decline'])).stderr).toContain('UNKNOWN_INPUT')
    const ok = await turnlog(['answer', log, r1!, '--json', '{"address":{"city":"Gent"}}', '--by', 'bo'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout).toContain('no process runs the session: resume it to continue')
    const again = await turnlog(['answer', log, r1!, '--decline'])
    expect(again.code).toBe(2)
    expect(again.stderr).toContain('INPUT_ANSWERED')
    expect(await runs(count)).toEqual(['s1 0 -'])
    // a third process resumes: round 1's answer reaches the body once, which asks round 2
    const b = child(['jsonl', dir, 's1', count, 'resume'], 'SETTLED')
    const [, s2, r2] = (await b.line).split(' ')
    expect((await b.exited).code).toBe(0)
    expect(s2).toBe('parked')
    expect(await runs(count)).toEqual(['s1 0 -', 's1 1 accept'])
    expect((await turnlog(['answer', log, r2!, '--json', '{"speed":"fast"}'])).code).toBe(0)
    const c = child(['jsonl', dir, 's1', count, 'resume'], 'SETTLED')
    expect((await c.line).split(' ')[1]).toBe('idle')
    expect((await c.exited).code).toBe(0)
    expect(await runs(count)).toEqual(['s1 0 -', 's1 1 accept', 's1 2 accept']) // expected 3, counted 3
    expect((await turnlog(['inputs', log])).stdout).toContain('no open input requests')
    const ev = (await readLog(log)).events as LogEvent[]
    expect(verify(ev).violations).toEqual([])
    expect(provided(ev).map((e) => [e.data.round, e.data.by])).toEqual([[1, { kind: 'user', id: 'bo' }], [2, { kind: 'user' }]])
    expect(ev.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)).toEqual(['completed'])
  }, 180_000)

  async function workersKilledBetweenRounds(kind: 'pg' | 'sqlite', target: string, logArg: string, read: () => Promise<LogEvent[]>, send: () => Promise<unknown>) {
    const dir = await tmp()
    const count = join(dir, 'count')
    await send()
    const open = async () => {
      const ev = await read()
      const done = new Set(provided(ev).map((e) => e.data.requestId))
      return asked(ev).find((e) => !done.has(e.data.requestId))?.data
    }
    for (const [round, answer] of [[1, ['--json', '{"address":{"city":"Gent"}}']], [2, ['--json', '{"speed":"slow"}']]] as const) {
      const w = child([kind, target, 'q1', count, 'worker'], 'READY')
      await w.line
      // parked on the round (its step/parked logged after it): between rounds
      await until(async () => {
        const ev = await read()
        const r = await open()
        return r?.round === round && ev.some((e) => e.type === 'step/parked' && e.seq > asked(ev).at(-1)!.seq)
      }, `round ${round} asked and parked`)
      // the worker dies between rounds (it may still hold the lease, or have handed it back)
      w.proc.kill('SIGKILL')
      await w.exited
      const r = (await open())!
      const ok = await turnlog(['answer', logArg, r.requestId, ...answer])
      expect(ok.code, ok.stderr).toBe(0)
    }
    const w = child([kind, target, 'q1', count, 'worker'], 'READY')
    await w.line
    await until(async () => (await read()).some((e) => e.type === 'turn/end'), 'the turn ends')
    w.proc.kill('SIGKILL')
    await w.exited
    const ev = await read()
    // R10/R11: each round of the answered call once (a takeover under load may repair an earlier call: its rounds are its own)
    expect(await runs(count, provided(ev)[0]!.data.callId)).toEqual(['q1 0 -', 'q1 1 accept', 'q1 2 accept'])
    expect(verify(ev).violations).toEqual([])
    expect(provided(ev).map((e) => e.data.round)).toEqual([1, 2])
  }

  it('R10 R11 L21 (PostgreSQL): a worker SIGKILLed between rounds; `turnlog answer postgres://…#id` records each answer; the next worker runs each round once', async () => {
    const url = await freshDb('inproc')
    const store: PostgresStore = postgresStore({ connectionString: url })
    closers.push(async () => {
      await store.close()
      await dropAll()
    })
    await store.migrate()
    const read = async () => {
      const r = await store.open('q1', 'read')
      const out: LogEvent[] = []
      for await (const e of r.events()) out.push(e)
      return out
    }
    await workersKilledBetweenRounds('pg', url, `${url}#q1`, read, () => store.send('q1', 'ship the book'))
  }, 180_000)

  it('R10 R11 L21 (SQLite): a worker SIGKILLed between rounds; `turnlog answer sqlite:FILE#id` records each answer; the next worker runs each round once', async () => {
    const file = join(await tmp(), 'in.db')
    const store: SqliteStore = sqliteStore(file)
    closers.push(() => store.close())
    const read = async () => {
      const r = await store.open('q1', 'read')
      const out: LogEvent[] = []
      for await (const e of r.events()) out.push(e)
      return out
    }
    await workersKilledBetweenRounds('sqlite', file, `sqlite:${file}#q1`, read, () => store.send('q1', 'ship the book'))
  }, 180_000)
})
