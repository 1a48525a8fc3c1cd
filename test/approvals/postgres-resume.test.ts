/**
 * A parked PostgreSQL session decided while nobody runs it (docs/spec/lifecycle.md §9 "a later owner finds it
 * when it opens the session"; R9, R10, P4): `turnlog decide postgres://…#id` (another process)
 * records the decision in `turnlog_decisions`; `turnlog approvals` lists the call as decided, not
 * logged yet (who, when); `resumeAgent` / `openAgent` on the store (no worker) log that decision
 * (`tool/approval-decided` with the person's `by`), the approved body runs once and the turn ends.
 * A parked owner that runs receives a decision recorded by another store at once (its poll).
 */
import { execFile } from 'node:child_process'
import { afterAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { openAgent, resumeAgent } from '../../replay/index.js'
import { postgresStore, type PostgresStore } from '../../stores/postgres/index.js'
import { ROOT } from '../stores/child-lib.js'
import { cliMain } from '../cli/cli-child.js'
import { dropAll, freshDb } from '../stores/postgres/db.js'
import { readAll, until, verifyOk } from '../stores/postgres/helpers.js'
import { countingTool } from './helpers.js'

const stores: PostgresStore[] = []
let url = ''
afterAll(async () => {
  for (const s of stores) await s.close()
  await dropAll()
})

async function newStore(): Promise<PostgresStore> {
  if (url === '') {
    url = await freshDb('apres')
    const s = postgresStore({ connectionString: url })
    await s.migrate()
    await s.close()
  }
  const store = postgresStore({ connectionString: url })
  stores.push(store)
  return store
}

function options(name = 'rm') {
  const { tool, runs } = countingTool(name, { needsApproval: true })
  const model = scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1]
    return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name, args: { path: 'b' } }] }
  }, { info: { name: 'scripted' } })
  return { tools: [tool], model, runs, system: 'parked on postgres' }
}

function turnlog(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cliMain(), ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

const decidedOf = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')
const openId = (ev: LogEvent[]) => (ev.find((e) => e.type === 'tool/approval-requested') as EventOf<'tool/approval-requested'> | undefined)?.data.approvalId

/** Runs a session until it parks on its one approval, then disposes the agent (nobody runs it). */
async function parkAndLeave(store: PostgresStore, id: string): Promise<string> {
  const o = options()
  const agent = createAgent({ store, sessionId: id, model: o.model, tools: o.tools, system: o.system })
  agent.followup('delete b')
  expect(await agent.whenSettled()).toBe('parked')
  await agent.dispose()
  expect(o.runs).toEqual([]) // R9
  return openId(await readAll(store, id))!
}

describe('a parked PostgreSQL session decided while nobody runs it (docs/spec/lifecycle.md §9, R9, R10)', () => {
  for (const how of ['resumeAgent', 'openAgent'] as const) {
    it(`R10: a decision recorded from another process while nobody ran the session, then ${how}: the person's decision is logged once, the body runs once, the turn ends`, async () => {
      const store = await newStore()
      const id = `pr-${how}`
      const approvalId = await parkAndLeave(store, id)
      if (how === 'resumeAgent') {
        // the compiled CLI: another process records it, and lists it as decided, not logged yet
        const ok = await turnlog(['decide', `${url}#${id}`, approvalId, '--approve', '--by', 'ann'])
        expect(ok.code, ok.stderr).toBe(0)
        expect(ok.stdout).toContain('recorded')
        expect(decidedOf(await readAll(store, id))).toEqual([]) // recorded, not logged
        const listed = await turnlog(['approvals', `${url}#${id}`])
        expect(listed.code, listed.stderr).toBe(0)
        expect(listed.stdout).toMatch(new RegExp(`${approvalId} rm: decided \\(approve\\) by ann at \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z, not logged yet`))
        expect(listed.stdout).toContain('no open approvals')
        const json = await turnlog(['approvals', `${url}#${id}`, '--json'])
        expect(JSON.parse(json.stdout)).toEqual([])
      } else {
        const other = await newStore()
        await other.decide(id, approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } })
      }
      const o = options()
      const agent = how === 'resumeAgent'
        ? await resumeAgent({ store, sessionId: id, model: o.model, tools: o.tools, system: o.system })
        : await openAgent({ store, sessionId: id, model: o.model, tools: o.tools, system: o.system })
      expect(await agent.whenSettled()).toBe('idle')
      await agent.dispose()
      const ev = await readAll(store, id)
      const d = decidedOf(ev)
      expect(d.map((e) => [e.data.approvalId, e.data.decision.kind, e.data.by])).toEqual([[approvalId, 'approve', { kind: 'user', id: 'ann' }]])
      expect(o.runs).toEqual(['b']) // R10: once
      expect(ev.filter((e) => e.type === 'turn/end').length).toBe(1)
      expect(verifyOk(ev)).toEqual([])
      const r = await store.pool.query('SELECT logged_seq FROM turnlog_decisions WHERE session_id = $1', [id])
      expect(r.rows).toEqual([{ logged_seq: d[0]!.seq }])
      expect(await store.decisionsNotLogged(id)).toEqual(new Map())
    }, 180_000) // the first compiled-CLI run may compile the CLI (cli-child.ts) on a loaded machine
  }

  it('R9: a deny recorded while nobody ran the session: resumeAgent logs DENIED with the reason, the body never runs', async () => {
    const store = await newStore()
    const id = 'pr-deny'
    const approvalId = await parkAndLeave(store, id)
    const other = await newStore()
    await other.decide(id, approvalId, { kind: 'deny', reason: 'not that one' }, { by: { kind: 'user', id: 'bo' } })
    const o = options()
    const agent = await resumeAgent({ store, sessionId: id, model: o.model, tools: o.tools, system: o.system })
    expect(await agent.whenSettled()).toBe('idle')
    await agent.dispose()
    const ev = await readAll(store, id)
    expect(decidedOf(ev).map((e) => [e.data.decision, e.data.by])).toEqual([[{ kind: 'deny', reason: 'not that one' }, { kind: 'user', id: 'bo' }]])
    const result = ev.find((e): e is EventOf<'tool/result'> => e.type === 'tool/result')!
    expect(JSON.stringify(result.data)).toContain('DENIED')
    expect(o.runs).toEqual([])
    expect(verifyOk(ev)).toEqual([])
  }, 60_000)

  it('R9: a parked owner that runs (no worker) receives a decision another store recorded, logs it once and runs the body once', async () => {
    const store = await newStore()
    const id = 'pr-live'
    const o = options()
    const agent = createAgent({ store, sessionId: id, model: o.model, tools: o.tools, system: o.system })
    agent.followup('delete b')
    expect(await agent.whenSettled()).toBe('parked')
    await agent.flush()
    const approvalId = openId(await readAll(store, id))!
    const other = await newStore()
    const d = await other.decide(id, approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'cy' } })
    expect(d.approvalId).toBe(approvalId)
    await until(async () => (await readAll(store, id)).some((e) => e.type === 'turn/end'), 'the turn ends')
    expect(await agent.whenSettled()).toBe('idle')
    await agent.dispose()
    const ev = await readAll(store, id)
    expect(decidedOf(ev).map((e) => e.data.by)).toEqual([{ kind: 'user', id: 'cy' }])
    expect(o.runs).toEqual(['b'])
    expect(verifyOk(ev)).toEqual([])
  }, 60_000)
})
