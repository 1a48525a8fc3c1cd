/**
 * Real processes (docs/spec/lifecycle.md §9, R10, docs/spec/reliability.md's fault row "a process dies while parked, or while
 * an approved body runs"): a process parks and exits (or is SIGKILLed while parked); `turnlog
 * decide` decides from another process; a resumed process runs the approved body exactly once and
 * the turn completes. SIGKILL while the approved body runs: an ordinary crash (§8), the call gets
 * its repair result, never a second silent run. Two decisions racing from two processes: one wins.
 * Bodies are counted in a file the tool appends to (expected vs counted).
 */
import { spawn, execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { childLib, ROOT } from '../stores/child-lib.js'
import { cliMain } from '../cli/cli-child.js'

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
  const d = await mkdtemp(join(tmpdir(), 'turnlog-approvals-'))
  dirs.push(d)
  return d
}

/** Runs the child until it prints a line starting with `until` (then resolves; the child may go on). */
function child(args: string[], until: string) {
  const proc = spawn(process.execPath, [CHILD, lib, ...args], { cwd: ROOT, stdio: 'pipe' })
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

async function runs(count: string): Promise<string[]> {
  return (await readFile(count, 'utf8').catch(() => '')).split('\n').filter(Boolean)
}

async function events(dir: string, id: string): Promise<LogEvent[]> {
  return (await readLog(join(dir, `${id}.jsonl`))).events as LogEvent[]
}

describe('approvals across processes (docs/spec/lifecycle.md §9, R10)', () => {
  it('R10: park and exit; `turnlog decide` from another process; the resumed process runs the approved body once; the turn completes', async () => {
    const dir = await tmp()
    const count = join(dir, 'count')
    const a = child([dir, 's1', count, 'park-exit'], 'PARKED')
    const parked = await a.line
    expect((await a.exited).code).toBe(0)
    const [, status, approvalId] = parked.split(' ')
    expect(status).toBe('parked')
    const log = join(dir, 's1.jsonl')
    const listed = await turnlog(['approvals', log])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(approvalId)
    // clear refusals, nothing written
    expect((await turnlog(['decide', log, 'nope', '--approve'])).code).toBe(2)
    const bad = await turnlog(['decide', log, approvalId!, '--approve', '--arguments', '{"path":3}'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('INVALID_ARGS')
    const ok = await turnlog(['decide', log, approvalId!, '--approve', '--by', 'ann'])
    expect(ok.code, ok.stderr).toBe(0)
    // issue 38.16: logged by this decider (no process runs the session), so it says to resume
    expect(ok.stdout).toContain('no process runs the session: resume it to continue')
    const again = await turnlog(['decide', log, approvalId!, '--deny'])
    expect(again.code).toBe(2)
    expect(again.stderr).toContain('APPROVAL_DECIDED')
    expect(await runs(count)).toEqual([])
    const b = child([dir, 's1', count, 'resume'], 'IDLE')
    await b.line
    expect((await b.exited).code).toBe(0)
    expect(await runs(count)).toEqual(['b'])
    const ev = await events(dir, 's1')
    expect(verify(ev).violations).toEqual([])
    expect(ev.filter((e) => e.type === 'tool/approval-decided')).toHaveLength(1)
    expect(ev.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)).toEqual(['completed'])
  }, 120_000)

  it('R10: SIGKILL while parked, decide, resume: the body runs once; SIGKILL while the approved body runs: §8 repair result, never a second run', async () => {
    const dir = await tmp()
    const count = join(dir, 'count')
    const a = child([dir, 's2', count, 'park-hang'], 'PARKED')
    const approvalId = (await a.line).split(' ')[2]!
    a.proc.kill('SIGKILL')
    await a.exited
    // the killed owner's lock is stale (dead pid on this host): the decider takes it over
    const ok = await turnlog(['decide', join(dir, 's2.jsonl'), approvalId, '--approve'])
    expect(ok.code, ok.stderr).toBe(0)
    const b = child([dir, 's2', count, 'resume-hang'], 'BODY')
    await b.line
    b.proc.kill('SIGKILL')
    await b.exited
    expect(await runs(count)).toEqual(['b'])
    const c = child([dir, 's2', count, 'resume'], 'IDLE')
    await c.line
    expect((await c.exited).code).toBe(0)
    expect(await runs(count)).toEqual(['b']) // expected 1, counted 1
    const ev = await events(dir, 's2')
    expect(verify(ev).violations).toEqual([])
    const results = ev.filter((e) => e.type === 'tool/result').map((e) => (e.data as { error?: { code: string } }).error?.code ?? 'ok')
    expect(results).toEqual(['TOOL_OUTCOME_UNKNOWN'])
    const ends = ev.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)
    expect(ends).toEqual(['interrupted', 'completed'])
  }, 120_000)

  it('two decisions racing from two processes: exactly one wins, the other is APPROVAL_DECIDED', async () => {
    const dir = await tmp()
    const a = child([dir, 's3', join(dir, 'count'), 'park-exit'], 'PARKED')
    const approvalId = (await a.line).split(' ')[2]!
    await a.exited
    const log = join(dir, 's3.jsonl')
    const [x, y] = await Promise.all([turnlog(['decide', log, approvalId, '--approve']), turnlog(['decide', log, approvalId, '--deny'])])
    expect([x.code, y.code].sort()).toEqual([0, 2])
    expect((x.code === 2 ? x : y).stderr).toContain('APPROVAL_DECIDED')
    const ev = await events(dir, 's3')
    expect(ev.filter((e) => e.type === 'tool/approval-decided')).toHaveLength(1)
    expect(verify(ev).violations).toEqual([])
  }, 120_000)
})
