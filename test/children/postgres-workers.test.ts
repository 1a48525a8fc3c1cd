/**
 * Sub-agents under PostgreSQL workers (docs/spec/lifecycle.md §10, L19), real server: a subagent call's child
 * runs in the worker that serves its parent (the child session gets its own lease in the same
 * store), its answer is the parent's call result; a worker keeps the parent's lease while the
 * parent is parked only by its child (handing it back would cancel the child); workers never
 * claim a child session on their own (its parent re-attaches it).
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { verifyFamily } from '../../replay/verify-family.js'
import { verifyChild } from '../../replay/verify-child.js'
import { defineTool } from '../../tools/index.js'
import { postgresStore, runWorkers, type PostgresStore } from '../../workers/index.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll, until, verifyOk } from '../stores/postgres/helpers.js'
import { childLib, ROOT } from '../stores/child-lib.js'

const WORKER = fileURLToPath(new URL('./children/pg-worker.mjs', import.meta.url))
let lib = ''
beforeAll(() => {
  lib = childLib()
}, 300_000)

const stores: PostgresStore[] = []
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

async function newStore(): Promise<PostgresStore> {
  const store = postgresStore({ connectionString: await freshDb('sub'), leaseMs: 2000 })
  stores.push(store)
  await store.migrate()
  return store
}

const CHILD = 'p.c1-1-c1'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function parentOptions(child: () => { model: ReturnType<typeof scriptedModel>; tools?: ReturnType<typeof defineTool>[] }) {
  const research = defineSubagent({
    name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
    agent: () => ({ ...child(), system: 'child' }),
  })
  return {
    model: scriptedModel((request) => {
      const last = request.messages[request.messages.length - 1]
      return last?.role === 'tool' ? { text: 'parent done' } : { toolCalls: [{ name: 'research', args: { question: 'why?' }, id: 'c1' }] }
    }),
    tools: [research], system: 'parent',
  }
}

const resultOf = (ev: readonly LogEvent[]) => ev.find((e) => e.type === 'tool/result') as EventOf<'tool/result'> | undefined

async function leaseOwner(store: PostgresStore, id: string): Promise<string | null> {
  const r = await store.pool.query('SELECT lease_owner FROM turnlog_sessions WHERE id = $1', [id])
  return (r.rows[0] as { lease_owner: string | null } | undefined)?.lease_owner ?? null
}

describe('sub-agents under PostgreSQL workers (docs/spec/lifecycle.md §10)', () => {
  it('L19: the child runs under the worker serving its parent; its answer is the call result; both logs verify; both leases handed back', async () => {
    const store = await newStore()
    const served: string[] = []
    const w = runWorkers({
      store, concurrency: 4, leaseMs: 2000, pollMs: 50, lingerMs: 0,
      agent: (id) => {
        served.push(id)
        return parentOptions(() => ({ model: scriptedModel([{ text: 'because.' }]) }))
      },
    })
    try {
      await store.send('p', 'ask')
      await until(async () => (await readAll(store, 'p')).some((e) => e.type === 'turn/end') && (await leaseOwner(store, 'p')) === null, 'the parent ends')
      const parent = await readAll(store, 'p')
      expect(resultOf(parent)?.data.message.content).toEqual([{ type: 'text', text: 'because.' }])
      expect(verifyOk(parent)).toEqual([])
      const child = await readAll(store, CHILD)
      expect(verifyOk(child)).toEqual([])
      const header = (await store.open(CHILD, 'read')).header
      expect(verifyChild('p', parent, header)).toEqual([])
      expect(await leaseOwner(store, CHILD)).toBeNull()
      expect(served).toEqual(['p'])
    } finally {
      await w.stop()
    }
  }, 30_000)

  it('L19: the worker keeps the parent\'s lease while the parent is parked only by its child; the child is never claimed on its own', async () => {
    const store = await newStore()
    const served: string[] = []
    const rm = defineTool({ name: 'rm', description: 'rm', parameters: z.object({ path: z.string() }), needsApproval: true, execute: () => 'ok' })
    const w = runWorkers({
      store, concurrency: 4, leaseMs: 2000, pollMs: 50, lingerMs: 0,
      agent: (id) => {
        served.push(id)
        return parentOptions(() => ({ model: scriptedModel([{ toolCalls: [{ name: 'rm', args: { path: 'x' }, id: 'k1' }] }, { text: 'cleaned' }]), tools: [rm] }))
      },
    })
    try {
      await store.send('p', 'ask')
      await until(async () => (await readAll(store, CHILD).catch(() => [])).some((e) => e.type === 'step/parked'), 'the child parks')
      // many poll periods later: still held (a hand-back would dispose the parent and cancel the child)
      await sleep(400)
      expect(await leaseOwner(store, 'p')).not.toBeNull()
      const parent = await readAll(store, 'p')
      expect(parent.some((e) => e.type === 'tool/result' || e.type === 'turn/end')).toBe(false)
      const child = await readAll(store, CHILD)
      expect(child.some((e) => e.type === 'turn/end')).toBe(false)
      expect(served).toEqual(['p'])
    } finally {
      await w.stop()
    }
  }, 30_000)

  it('L19: a worker SIGKILLed while the child runs: another worker takes the parent over and re-attaches the child; the call gets exactly one result', async () => {
    const store = await newStore()
    const proc = spawn(process.execPath, [WORKER, lib, store.connectionString!, '1500'], { cwd: ROOT, stdio: 'pipe' })
    let out = ''
    let err = ''
    const exited = new Promise<void>((r) => proc.on('exit', () => r()))
    const running = new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (d: Buffer) => {
        out += d.toString()
        if (out.includes('RUNNING')) resolve()
      })
      proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
      void exited.then(() => reject(new Error(`the worker exited before RUNNING: ${out} ${err}`)))
    })
    await until(async () => out.includes('READY'), 'the worker is ready')
    await store.send('p', 'ask')
    await running
    proc.kill('SIGKILL')
    await exited

    const served: string[] = []
    const w = runWorkers({
      store, concurrency: 4, leaseMs: 1500, pollMs: 50, lingerMs: 0,
      agent: (id) => {
        served.push(id)
        return parentOptions(() => ({ model: scriptedModel([{ text: 'because.' }]) }))
      },
    })
    try {
      await until(async () => (await readAll(store, 'p')).some((e) => e.type === 'turn/end') && (await leaseOwner(store, 'p')) === null, 'the parent ends', 25_000)
      const parent = await readAll(store, 'p')
      const results = parent.filter((e) => e.type === 'tool/result') as EventOf<'tool/result'>[]
      expect(results.map((e) => e.data.message.content)).toEqual([[{ type: 'text', text: 'because.' }]])
      expect(parent.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['completed'])
      expect(verifyOk(parent)).toEqual([])
      const child = await readAll(store, CHILD)
      expect(child.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['interrupted', 'completed'])
      expect(verifyOk(child)).toEqual([])
      // the family as one (L19 across the logs: header, the call's answer is the child's, no orphan)
      const h = await store.open('p', 'read')
      const header = h.header
      await h.close()
      expect((await verifyFamily({ header, events: parent }, store)).violations).toEqual([])
      expect(served).toEqual(['p'])
    } finally {
      await w.stop()
    }
  }, 60_000)
})
