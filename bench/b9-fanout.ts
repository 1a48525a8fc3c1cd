/**
 * B9 (bench/README.md): one session followed live by 1,000 SSE clients of turnlog/http in one process,
 * against one client in the same run. The server (sessionHandler + toNodeListener on node:http, an
 * agent of this process on a memory store) runs here; the clients run in a child process
 * (b9-clients.ts: raw sockets, lean enough not to measure themselves) so the memory measured is
 * the server's. A turn of 200 text chunks, one every
 * 10 ms, is followed by every client; delay = receipt time minus the event's commit `time` (ms,
 * the same machine clock). Memory per client = (heap + external after the clients connected −
 * before) / clients, both after a full GC.
 */
import { spawn } from 'node:child_process'
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { sessionHandler } from '../http/index.js'
import { scriptedModel } from '../models/index.js'
import { memoryStore } from '../stores/index.js'
import { toNodeListener } from '../http/node.js'
import { collectGarbage, envInt, round, type BenchResult } from './common.js'

const CHILD = fileURLToPath(new URL('./b9-clients.js', import.meta.url))
const CHUNKS = 200

interface Run { p50: number; p99: number; max: number; bytesPerClient: number; samples: number; clientsElu: number; clientsCpuMs: number; serverElu: number; serverCpuMs: number }
type ClientsSummary = { samples: number; p50: number; p99: number; max: number; clientsElu: number; clientsCpuMs: number }

async function run(clients: number): Promise<Run> {
  const store = memoryStore()
  const text = 'x'.repeat(CHUNKS)
  const handler = sessionHandler({
    store, authorize: () => true,
    sseMaxMs: 600_000, // one connection per client for the whole run (the default closes at 60 s)
    agent: () => ({
      model: scriptedModel([{ text: 'ready' }, { text, chunkSize: 1, delayMs: 10 }]),
    }),
  })
  const server = createServer(toNodeListener(handler))
  server.maxConnections = clients + 16
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const post = (id: string, text: string): Promise<string> => fetch(`${base}/chat/b9`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'b9', trigger: 'submit-message', messages: [{ id, role: 'user', parts: [{ type: 'text', text }] }] }),
  }).then((r) => r.text())
  try {
    await post('m1', 'start') // turn 1: the session exists
    collectGarbage()
    const before = process.memoryUsage()
    const child = spawn(process.execPath, [CHILD, `${base}/sessions/b9`, String(clients), '2'], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    const readyP = new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8')
      child.stdout.on('data', (d: string) => { out += d; if (out.includes('ready\n')) resolve() })
      child.on('close', (code) => { if (!out.includes('ready\n')) reject(new Error(`b9 clients exited ${code}`)) })
    })
    await readyP
    collectGarbage()
    const after = process.memoryUsage()
    const resultP = new Promise<ClientsSummary>((resolve, reject) => {
      child.on('close', (code) => {
        const line = out.split('\n').find((l) => l.startsWith('{'))
        if (code !== 0 || !line) reject(new Error(`b9 clients exited ${code}`))
        else resolve(JSON.parse(line) as ClientsSummary)
      })
    })
    const elu0 = performance.eventLoopUtilization()
    const cpu0 = process.cpuUsage()
    void post('m2', 'go') // turn 2: followed by every client
    const r = await resultP
    const serverElu = Math.round(performance.eventLoopUtilization(elu0).utilization * 100) / 100
    const cpu = process.cpuUsage(cpu0)
    const serverCpuMs = Math.round((cpu.user + cpu.system) / 1000)
    const bytes = (after.heapUsed + after.external) - (before.heapUsed + before.external)
    return { ...r, bytesPerClient: bytes / clients, serverElu, serverCpuMs }
  } finally {
    server.closeAllConnections()
    await new Promise<void>((r) => server.close(() => r()))
    await handler.close()
  }
}

/** Followers of one session (`clients`, or `TURNLOG_B9_CLIENTS`) against one client, in one run. */
async function fanout(clients: number, target: string, kbTarget: string, log: (line: string) => void): Promise<BenchResult> {
  const n = envInt('TURNLOG_B9_CLIENTS', clients)
  const load = loadavg()
  const one = await run(1)
  log(`B9 one client: p99 ${one.p99} ms, ${round(one.bytesPerClient / 1024, 1)} KB`)
  const many = await run(n)
  log(`B9 ${n} clients: p99 ${many.p99} ms, ${round(many.bytesPerClient / 1024, 1)} KB per client`)
  return {
    value: many.p99,
    unit: `ms p99 delivery delay, ${n} SSE clients`,
    target,
    detail: {
      clients: n,
      p50Ms: many.p50, p99Ms: many.p99, maxMs: many.max, samples: many.samples,
      kbPerClient: round(many.bytesPerClient / 1024, 2),
      kbPerClientTarget: kbTarget,
      oneClient: { p50Ms: one.p50, p99Ms: one.p99, maxMs: one.max, kb: round(one.bytesPerClient / 1024, 2) },
      p99RatioVsOneClient: one.p99 > 0 ? round(many.p99 / one.p99, 2) : null,
      serverEventLoopUtilization: many.serverElu, clientsEventLoopUtilization: many.clientsElu,
      // CPU time of the followed turn (ms), less sensitive to the neighbours than the delays: the
      // clients' process (the load generator) shares the server's two cores
      serverCpuMs: many.serverCpuMs, clientsCpuMs: many.clientsCpuMs,
      loadAverage1m: round(load[0]!, 1),
      machine: 'shared 2-core machine (several agents)',
    },
  }
}

/** B9: 1,000 followers; p99 ≤ 50 ms. */
export async function benchFanout(log: (line: string) => void = () => {}): Promise<BenchResult> {
  return fanout(1000, '<= 50', '<= 10', log)
}

/**
 * B9X: 10,000 followers of the same session (the clients' process holds 10,000 sockets: the file
 * limit must allow it); p99 ≤ 150 ms and ≤ 10 KB per client.
 */
export async function benchFanoutWide(log: (line: string) => void = () => {}): Promise<BenchResult> {
  return fanout(10_000, '<= 150', '<= 10', log)
}
