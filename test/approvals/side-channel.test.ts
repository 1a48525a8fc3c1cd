/**
 * JSONL decisions while the owner's process runs (docs/spec/lifecycle.md §9: "a running owner receives it at
 * once"; stores/jsonl/decisions.ts). Every decision is claimed in `<id>.decisions/` first (the
 * arbiter of "first decision wins"), the owner watches the claims and logs each once.
 * Real processes: an agent parked in one process, `turnlog decide` from another; two racing
 * deciders while the owner runs; an owner that dies after a decision was claimed and before it
 * logged it (SIGSTOP keeps it from logging, then SIGKILL): the next owner finds the decision.
 * In-process: a claim from elsewhere beats `agent.decide` and the expiry (the loser logs the winner).
 */
import { spawn, execFile } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import { TurnlogError, type EventOf, type LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { claimDecision, decisionsDir, readDecisions } from '../../stores/jsonl/decisions.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { childLib, ROOT } from '../stores/child-lib.js'
import { cliMain } from '../cli/cli-child.js'
import { countingTool, manualTimers } from './helpers.js'

const CHILD = fileURLToPath(new URL('./children/approval-child.mjs', import.meta.url))
let lib = ''
let cli = ''
const dirs: string[] = []
beforeAll(() => {
  lib = childLib()
  cli = cliMain()
}, 300_000)
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'turnlog-side-'))
  dirs.push(d)
  return d
}

function child(args: string[], until: string) {
  const proc = spawn(process.execPath, [CHILD, lib, ...args], { cwd: ROOT, stdio: 'pipe' })
  let out = ''
  let err = ''
  const exited = new Promise<{ code: number | null; signal: string | null }>((r) => proc.on('exit', (code, signal) => r({ code, signal })))
  const lines = (want: string) => new Promise<string>((resolve, reject) => {
    const look = () => {
      const l = out.split('\n').find((x) => x.startsWith(want))
      if (l !== undefined) resolve(l)
    }
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      look()
    })
    look()
    void exited.then((x) => reject(new Error(`child exited ${JSON.stringify(x)} before ${want}: ${out} ${err}`)))
  })
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
  return { proc, line: lines(until), lines, exited }
}

function turnlog(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr })
    })
  })
}

async function runs(count: string): Promise<string[]> {
  return (await readFile(count, 'utf8').catch(() => '')).split('\n').filter(Boolean)
}

async function events(dir: string, id: string): Promise<LogEvent[]> {
  return (await readLog(join(dir, `${id}.jsonl`))).events as LogEvent[]
}

const decidedOf = (ev: LogEvent[]) => ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')

describe('JSONL decisions while the owner runs (docs/spec/lifecycle.md §9, R9, R10)', () => {
  it('R9/R10: an agent parked in one process; `turnlog decide` from another reaches it at once; the body runs once and the turn completes', async () => {
    const dir = await tmp()
    const count = join(dir, 'count')
    const a = child([dir, 'w1', count, 'park-wait'], 'PARKED')
    const approvalId = (await a.line).split(' ')[2]!
    expect(await runs(count)).toEqual([]) // R9: nothing runs while parked
    const ok = await turnlog(['decide', join(dir, 'w1.jsonl'), approvalId, '--approve', '--by', 'ann'])
    expect(ok.code, ok.stderr).toBe(0)
    // issue 38.16: the live owner carries the session on; nobody is told to resume it
    if (!ok.stdout.includes('claimed')) expect(ok.stdout).toContain('logged by its running owner')
    expect(ok.stdout).not.toContain('resume')
    await a.lines('IDLE')
    expect((await a.exited).code).toBe(0)
    expect(await runs(count)).toEqual(['b'])
    const ev = await events(dir, 'w1')
    expect(verify(ev).violations).toEqual([])
    const d = decidedOf(ev)
    expect(d.map((e) => [e.data.approvalId, e.data.decision.kind, e.data.by])).toEqual([[approvalId, 'approve', { kind: 'user', id: 'ann' }]])
    expect(ev.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)).toEqual(['completed'])
  }, 120_000)

  it('two deciders racing while the owner runs: exactly one wins, the owner logs that one once', async () => {
    const dir = await tmp()
    const count = join(dir, 'count')
    const a = child([dir, 'w2', count, 'park-wait'], 'PARKED')
    const approvalId = (await a.line).split(' ')[2]!
    const log = join(dir, 'w2.jsonl')
    const [x, y] = await Promise.all([turnlog(['decide', log, approvalId, '--approve']), turnlog(['decide', log, approvalId, '--deny', '--reason', 'no'])])
    expect([x.code, y.code].sort()).toEqual([0, 2])
    const loser = x.code === 2 ? x : y
    expect(loser.stderr).toContain('APPROVAL_DECIDED')
    await a.lines('IDLE')
    await a.exited
    const ev = await events(dir, 'w2')
    expect(verify(ev).violations).toEqual([])
    const d = decidedOf(ev)
    expect(d).toHaveLength(1)
    const won = x.code === 0 ? 'approve' : 'deny'
    expect(d[0]!.data.decision.kind).toBe(won)
    expect(await runs(count)).toEqual(won === 'approve' ? ['b'] : [])
  }, 120_000)

  it('R10: the owner dies after the decision was claimed and before it logged it: the next owner finds the decision and runs the body once', async () => {
    const dir = await tmp()
    const count = join(dir, 'count')
    const a = child([dir, 'w3', count, 'park-wait'], 'PARKED')
    const approvalId = (await a.line).split(' ')[2]!
    // stopped: it holds the lock (a live pid) but cannot log the claim
    a.proc.kill('SIGSTOP')
    const ok = await turnlog(['decide', join(dir, 'w3.jsonl'), approvalId, '--approve'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout).toContain('claimed')
    expect(decidedOf(await events(dir, 'w3'))).toEqual([]) // durable as a claim, not yet logged
    expect([...readDecisions(dir, 'w3').keys()]).toEqual([approvalId])
    const listed = await turnlog(['approvals', join(dir, 'w3.jsonl')])
    expect(listed.stdout).toContain('not logged yet')
    expect(listed.stdout).toContain('no open approvals')
    a.proc.kill('SIGKILL')
    await a.exited
    // a second decider finds it taken, though the log does not say so yet
    const late = await turnlog(['decide', join(dir, 'w3.jsonl'), approvalId, '--deny'])
    expect(late.code).toBe(2)
    expect(late.stderr).toContain('APPROVAL_DECIDED')
    const b = child([dir, 'w3', count, 'resume'], 'IDLE')
    await b.line
    expect((await b.exited).code).toBe(0)
    expect(await runs(count)).toEqual(['b'])
    const ev = await events(dir, 'w3')
    expect(verify(ev).violations).toEqual([])
    expect(decidedOf(ev).map((e) => e.data.decision.kind)).toEqual(['approve'])
    expect(ev.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)).toEqual(['completed'])
  }, 120_000)
})

describe('the claim is the arbiter for the owner too (docs/spec/lifecycle.md §9 "the first decision wins")', () => {
  const model = () => scriptedModel((request) => {
    const last = request.messages[request.messages.length - 1]
    return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'b' }, id: 'c1' }] }
  })

  it('a claim made elsewhere beats agent.decide: APPROVAL_DECIDED, and the claimed decision is the one logged', async () => {
    const dir = await tmp()
    const { tool, runs: ran } = countingTool('rm', { needsApproval: true })
    const agent = createAgent({ store: jsonlStore(dir), sessionId: 's', model: model(), tools: [tool], system: 'sys' })
    agent.followup('delete b')
    expect(await agent.whenSettled()).toBe('parked')
    const id = agent.approvals()[0]!.approvalId
    expect(claimDecision(dir, 's', { approvalId: id, decision: { kind: 'deny', reason: 'elsewhere' }, by: { kind: 'user', id: 'bob' }, time: 1 })).toBeNull()
    const err = await agent.decide(id, { kind: 'approve' }).catch((e: unknown) => e)
    expect(TurnlogError.is(err, 'APPROVAL_DECIDED')).toBe(true)
    await agent.whenIdle()
    await agent.dispose()
    const d = decidedOf(agent.events as LogEvent[])
    expect(d.map((e) => [e.data.decision, e.data.by])).toEqual([[{ kind: 'deny', reason: 'elsewhere' }, { kind: 'user', id: 'bob' }]])
    expect(ran).toEqual([])
    expect(verify(await events(dir, 's')).violations).toEqual([])
  })

  it('agent.decide claims: a later decider from another process finds it taken', async () => {
    const dir = await tmp()
    const { tool, runs: ran } = countingTool('rm', { needsApproval: true })
    const store = jsonlStore(dir)
    const agent = createAgent({ store, sessionId: 's', model: model(), tools: [tool], system: 'sys' })
    agent.followup('delete b')
    await agent.whenSettled()
    const id = agent.approvals()[0]!.approvalId
    await agent.decide(id, { kind: 'approve' })
    const err = await store.decide('s', id, { kind: 'deny' }).catch((e: unknown) => e)
    expect(TurnlogError.is(err, 'APPROVAL_DECIDED')).toBe(true)
    await agent.whenIdle()
    await agent.dispose()
    expect(ran).toEqual(['b'])
    expect((await readdir(decisionsDir(dir, 's'))).filter((n) => !n.startsWith('.'))).toHaveLength(1)
  })

  it('a claim made elsewhere beats the expiry: the claimed approval is logged, not APPROVAL_EXPIRED', async () => {
    const dir = await tmp()
    const { tool, runs: ran } = countingTool('rm', { needsApproval: true, timeoutMs: 1000 })
    const t = manualTimers()
    let now = 1_000_000
    const agent = createAgent({ store: jsonlStore(dir), sessionId: 's', model: model(), tools: [tool], system: 'sys', timers: t.timers, clock: () => now })
    agent.followup('delete b')
    await agent.whenSettled()
    const id = agent.approvals()[0]!.approvalId
    claimDecision(dir, 's', { approvalId: id, decision: { kind: 'approve' }, by: { kind: 'user' }, time: now })
    now += 5000
    t.fire() // the expiry fires before the watch delivered the claim
    await agent.whenIdle()
    await agent.dispose()
    expect(decidedOf(agent.events as LogEvent[]).map((e) => e.data.by.kind)).toEqual(['user'])
    expect(ran).toEqual(['b'])
  })

  it('store.decide of an approval that is not open is refused and claims nothing', async () => {
    const dir = await tmp()
    const { tool } = countingTool('rm', { needsApproval: true })
    const store = jsonlStore(dir)
    const agent = createAgent({ store, sessionId: 's', model: model(), tools: [tool], system: 'sys' })
    agent.followup('delete b')
    await agent.whenSettled()
    const err = await store.decide('s', 'nope', { kind: 'approve' }).catch((e: unknown) => e)
    expect(TurnlogError.is(err, 'UNKNOWN_APPROVAL')).toBe(true)
    expect(readDecisions(dir, 's').size).toBe(0)
    await agent.dispose()
  })
})
