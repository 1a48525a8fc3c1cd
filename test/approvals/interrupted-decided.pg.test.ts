/**
 * A decision accepted is never overridden (round 14; docs/spec/lifecycle.md §8/§9, L17, R10). The step runs
 * (not parked: a body without approval runs) when a person decides through the store; the owner
 * is SIGKILLed before it logs the decision. Repair (`turnlog repair`'s `repairFile`, and resume's
 * repair of the interrupted step: `resumeAgent` for JSONL, a PostgreSQL worker taking over) must
 * log the person's decision — who, edited arguments — not `by: canceled`. The approved call never
 * started, so it gets its `tool/call` with the approved arguments and `TOOL_NOT_STARTED` (§8: the
 * step is closed; the resume turn's model sees it), and its body does not run.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { repairFile } from '../../replay/repair.js'
import { resumeAgent } from '../../replay/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { claimDecision } from '../../stores/jsonl/decisions.js'
import { defineTool } from '../../tools/index.js'
import { postgresStore, runWorkers, type PostgresStore } from '../../workers/index.js'
import { childLib, ROOT } from '../stores/child-lib.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { LineChild, readAll, until, verifyOk } from '../stores/postgres/helpers.js'

const CHILD = fileURLToPath(new URL('./children/interrupted-child.mjs', import.meta.url))
let lib = ''
const dirs: string[] = []
const stores: PostgresStore[] = []
beforeAll(() => {
  lib = childLib()
}, 300_000)
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
  for (const s of stores) await s.close()
  await dropAll()
})

/** The same agent as the child's, but 'slow' returns: what the resumed owner runs. */
function resumedOptions(rmRuns: string[]) {
  const slow = defineTool({ name: 'slow', description: 'wait', parameters: z.object({}), execute: () => 'slept' })
  const rmTool = defineTool({
    name: 'rm', description: 'delete a file', parameters: z.object({ path: z.string() }), needsApproval: true,
    execute: ({ path }) => {
      rmRuns.push(path)
      return `deleted ${path}`
    },
  })
  const model = scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1]
    return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'slow', args: {}, id: 'c1' }, { name: 'rm', args: { path: 'b' }, id: 'c2' }] }
  }, { info: { name: 'scripted' } })
  return { model, tools: [slow, rmTool], system: 'interrupted' }
}

const requested = (ev: readonly LogEvent[]) => ev.find((e): e is EventOf<'tool/approval-requested'> => e.type === 'tool/approval-requested')
const decidedOf = (ev: readonly LogEvent[]) => ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')

/** The person's decision is in the log (once), the approved call is closed with its arguments, nothing canceled. */
function expectPersonsDecision(ev: readonly LogEvent[], approvalId: string) {
  const d = decidedOf(ev).filter((e) => e.data.approvalId === approvalId)
  expect(d.map((e) => [e.data.decision, e.data.by])).toEqual([[{ kind: 'approve', arguments: '{"path":"edited"}' }, { kind: 'user', id: 'alice' }]])
  const callId = d[0]!.data.callId
  const call = ev.filter((e): e is EventOf<'tool/call'> => e.type === 'tool/call').find((e) => e.data.callId === callId)
  expect(call?.data.arguments).toBe('{"path":"edited"}')
  const result = ev.filter((e): e is EventOf<'tool/result'> => e.type === 'tool/result').find((e) => e.data.callId === callId)
  expect(result?.data.error?.code).toBe('TOOL_NOT_STARTED')
  expect(verifyOk(ev)).toEqual([])
}

describe('an accepted decision is never overridden by repair (L17, R10; docs/spec/lifecycle.md §8/§9)', () => {
  it('L17 JSONL: decided through the store while the step runs, owner SIGKILLed before logging it; repairFile and resumeAgent log the person\'s decision, not canceled', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-intdec-'))
    dirs.push(dir)
    const c = new LineChild(spawn, CHILD, [lib, 'jsonl', dir, 's1', '0'], ROOT)
    expect(await c.waitFor((l) => l === 'BODY', 0, 60_000)).toBe('BODY')
    const file = join(dir, 's1.jsonl')
    let approvalId = ''
    await until(async () => {
      const r = await readLog(file, { tolerateTornTail: true }).catch(() => null)
      approvalId = r ? requested(r.events as LogEvent[])?.data.approvalId ?? '' : ''
      return approvalId !== ''
    }, 'the request in the log')
    c.proc.kill('SIGKILL')
    await c.exited
    // What `store.decide` leaves when it returned "decided" (seq null: the owner held the lock)
    // and the owner died before it logged the claim: the claim file, and no decision in the log.
    // (store.decide itself logs the claim when it finds no owner, so the claim is made directly.)
    const store = jsonlStore(dir)
    expect(claimDecision(dir, 's1', { approvalId, decision: { kind: 'approve', arguments: '{"path":"edited"}' }, by: { kind: 'user', id: 'alice' }, time: Date.now() })).toBeNull()
    expect(decidedOf((await readLog(file, { tolerateTornTail: true })).events as LogEvent[])).toEqual([])

    // `turnlog repair LOG -o OUT` (the streamed repair) reads the claims beside the log
    const out = join(dir, 'out.jsonl')
    const fixed = await repairFile(file, out)
    expectPersonsDecision((await readLog(out)).events as LogEvent[], approvalId)
    expect(fixed.closers.some((e) => e.type === 'tool/approval-decided')).toBe(true)

    // resume's repair of the interrupted (not parked) step
    const rmRuns: string[] = []
    const agent = await resumeAgent({ store, sessionId: 's1', ...resumedOptions(rmRuns) })
    await agent.whenIdle()
    await agent.flush()
    await agent.dispose()
    const ev = (await readLog(file)).events as LogEvent[]
    expectPersonsDecision(ev, approvalId)
    expect(rmRuns).toEqual([]) // R10: an approved call of a closed step does not run
    expect(ev.filter((e) => e.type === 'turn/end').length).toBe(2) // the interrupted turn, then the resume turn
  }, 120_000)

  it('L17 PostgreSQL: decided (a turnlog_decisions row) while a worker runs the step, worker SIGKILLed; the worker that takes over logs the person\'s decision, not canceled', async () => {
    const url = await freshDb('intdec')
    const store = postgresStore({ connectionString: url })
    stores.push(store)
    await store.migrate()
    const c = new LineChild(spawn, CHILD, [lib, 'pg', url, 'p1', '1500'], ROOT)
    expect(await c.waitFor((l) => l === 'READY', 0, 60_000)).toBe('READY')
    await store.send('p1', 'go')
    expect(await c.waitFor((l) => l === 'BODY', 0, 60_000)).toBe('BODY')
    let approvalId = ''
    await until(async () => (approvalId = requested(await readAll(store, 'p1'))?.data.approvalId ?? '') !== '', 'the request in the log')
    c.proc.kill('SIGSTOP')
    const told = await store.decide('p1', approvalId, { kind: 'approve', arguments: { path: 'edited' } }, { by: { kind: 'user', id: 'alice' } })
    expect(told.seq).toBeNull()
    c.proc.kill('SIGKILL')
    await c.exited
    const rmRuns: string[] = []
    const w = runWorkers({ store, concurrency: 2, leaseMs: 1500, pollMs: 50, lingerMs: 50, agent: () => resumedOptions(rmRuns) })
    try {
      await until(async () => (await readAll(store, 'p1')).filter((e) => e.type === 'turn/end').length >= 2, 'the resume turn ends')
    } finally {
      await w.stop()
    }
    expectPersonsDecision(await readAll(store, 'p1'), approvalId)
    expect(rmRuns).toEqual([])
    const row = await store.pool.query('SELECT logged_seq FROM turnlog_decisions WHERE session_id = $1', ['p1'])
    expect((row.rows[0] as { logged_seq: number | null }).logged_seq).not.toBeNull()
  }, 120_000)
})
