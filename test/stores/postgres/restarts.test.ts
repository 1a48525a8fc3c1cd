/**
 * Server restarts under load (issue 24 item 2): two worker processes serve sessions while this
 * process sends; the server is restarted 10 times (`scripts/pg.sh restart`: every connection gets
 * 57P01 admin_shutdown, then refused connects while it is down). No worker process dies (an
 * unhandled pg 'error' event used to kill it: 2 of 14 restarts); afterwards every acknowledged
 * message was moved into its log once and is answered or named as given up (docs/spec/lifecycle.md §8); logs
 * verify.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postgresStore, type PostgresStore } from '../../../stores/postgres/index.js'
import { childLib, ROOT } from '../child-lib.js'
import { account, accountingLine } from './accounting.js'
import { canStartServer, restartServer, startServer, stopServer } from '../../support/own-server.js'
import { killAll } from '../../support/line-child.js'
import { LineChild, until } from './helpers.js'

const WORKER = fileURLToPath(new URL('./children/worker-child.mjs', import.meta.url))
const RESTARTS = Number(process.env.TURNLOG_PG_RESTARTS ?? 10)
const children: LineChild[] = []
const stores: PostgresStore[] = []
let ownDir: string | undefined
let lib = ''

beforeAll(() => {
  lib = childLib()
}, 180_000)
afterAll(async () => {
  killAll(children)
  for (const s of stores) await s.close().catch(() => {})
  stopServer(ownDir)
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('postgres workers across server restarts', () => {
  it.runIf(canStartServer())(`${RESTARTS} server restarts under load: 0 worker crashes; every acknowledged message moved once, answered or given up; logs verify`, async () => {
    const { url, dir } = startServer()
    ownDir = dir
    const store = postgresStore({ connectionString: url, retryDelayMs: 100, retryAttempts: 8 })
    stores.push(store)
    await store.migrate()
    const workers = [0, 1].map((i) => {
      const c = new LineChild(spawn, WORKER, [lib, url, String(7 + i), `rw${i}`, '3000', '0'], ROOT)
      children.push(c)
      return c
    })
    for (const c of workers) expect(await c.waitFor((l) => l === 'READY', 0, 60_000)).toBe('READY')

    const sent = new Map<string, string[]>()
    let n = 0
    let sending = true
    const sender = (async () => {
      while (sending) {
        const sid = `s${n % 8}`
        const id = `m${n++}`
        // acknowledged = the send resolved; a send that failed in a restart is retried with the same id (idempotent)
        for (;;) {
          try {
            await store.send(sid, { id, content: [{ type: 'text', text: `question ${id}` }] })
            sent.set(sid, [...(sent.get(sid) ?? []), id])
            break
          } catch {
            await sleep(100)
          }
        }
        await sleep(30)
      }
    })()
    // the restart runs asynchronously, so this process keeps sending while the server is down
    for (let k = 0; k < RESTARTS; k++) {
      await sleep(1000)
      expect(await restartServer(dir)).toBe(0)
      for (const c of workers) expect(c.alive, `worker died at restart ${k + 1}: ${c.stderr.slice(-400)}`).toBe(true)
    }
    sending = false
    await sender
    await until(async () => {
      try {
        const rows = await store.sessions()
        return rows.length > 0 && rows.every((x) => x.status === 'idle' && x.pending === 0)
      } catch {
        return false
      }
    }, 'every session served after the restarts', 150_000)
    const crashed = workers.filter((c) => !c.alive).length
    for (const c of workers) c.proc.kill('SIGTERM')
    await Promise.all(workers.map((c) => c.exited))

    const a = await account(store, sent)
    console.log(`postgres restarts: ${RESTARTS} restarts, ${crashed} worker crashes, ${accountingLine(a)}`)
    expect(crashed).toBe(0)
    expect(a.problems).toEqual([])
    expect(a.acknowledged).toBeGreaterThan(0)
  }, 420_000)
})
