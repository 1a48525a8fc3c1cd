/**
 * A decider process SIGKILLed at each step of its JSONL decision claim (docs/spec/lifecycle.md §9, R10, L18;
 * issue 21 "SIGKILL … real processes"): what it leaves is never half a decision. Killed before the
 * link: nothing stands (a temp dot file at most) and another decider decides as if it never came.
 * Killed after the link (before the directory fsync, or before it logged the decision): its whole
 * claim stands, other deciders are refused `APPROVAL_DECIDED`, and the resumed owner logs it and
 * runs the approved body once. One child per step (test/stores/children/decide-kill-child.mjs).
 */
import { spawn } from 'node:child_process'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TurnlogError, type EventOf, type LogEvent } from '../../events/index.js'
import { readLog } from '../../replay/read-log.js'
import { decisionsDir, readDecisions } from '../../stores/jsonl/decisions.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { childLib, ROOT } from './child-lib.js'
import { parkedSessions, resumeRuns } from './parked-session.js'

const CHILD = fileURLToPath(new URL('./children/decide-kill-child.mjs', import.meta.url))
const parked = parkedSessions('turnlog-claimkill-')
let lib = ''
let approvalId = ''
beforeAll(async () => {
  lib = childLib()
  approvalId = await parked.setup()
}, 300_000)
afterAll(() => parked.cleanup())

function killedAt(dir: string, step: string): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CHILD, lib, dir, 's', approvalId, step], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    p.stdout.on('data', (d: Buffer) => (out += d.toString()))
    p.stderr.on('data', (d: Buffer) => (out += d.toString()))
    p.on('exit', (code, signal) => resolve({ code, signal, out }))
  })
}

const decided = async (dir: string) =>
  ((await readLog(join(dir, 's.jsonl'))).events as LogEvent[]).filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided')

describe('a decider SIGKILLed at each step of its claim (R10, L18)', () => {
  it('R10 L18: killed before the link: nothing stands; another decider then decides, and the resumed body runs once', async () => {
    for (const step of ['write', 'sync', 'link']) {
      const dir = await parked.copy()
      const k = await killedAt(dir, step)
      expect([step, k.signal], k.out).toEqual([step, 'SIGKILL'])
      const errors: unknown[] = []
      expect(readDecisions(dir, 's', (e) => errors.push(e)).size, step).toBe(0)
      expect(errors, step).toEqual([])
      // at most its temp dot file is left (never read as a claim)
      const left = await readdir(decisionsDir(dir, 's')).catch(() => [] as string[])
      expect(left.every((n) => n.startsWith('.') && n.endsWith('.tmp')), `${step}: ${left.join(',')}`).toBe(true)
      expect(await decided(dir), step).toEqual([])
      const ok = await jsonlStore(dir).decide('s', approvalId, { kind: 'approve' }, { by: { kind: 'user', id: 'ann' } })
      expect(ok.seq, step).not.toBeNull()
      expect(await resumeRuns(dir), step).toEqual(['b'])
      expect((await decided(dir)).map((d) => d.data.by), step).toEqual([{ kind: 'user', id: 'ann' }])
    }
  }, 120_000)

  it('R10 L18: killed after the link (before the directory fsync, or before logging): its claim stands whole; a later decider is refused; the resumed owner logs it and runs the body once', async () => {
    for (const step of ['syncDir', 'lock']) {
      const dir = await parked.copy()
      const k = await killedAt(dir, step)
      expect([step, k.signal], k.out).toEqual([step, 'SIGKILL'])
      const errors: unknown[] = []
      const recs = readDecisions(dir, 's', (e) => errors.push(e))
      expect(errors, step).toEqual([])
      expect(recs.get(approvalId), step).toMatchObject({ decision: { kind: 'approve' }, by: { kind: 'user', id: 'killed' } })
      expect(await decided(dir), step).toEqual([])
      const late = await jsonlStore(dir).decide('s', approvalId, { kind: 'deny' }).catch((e: unknown) => e)
      expect(TurnlogError.is(late, 'APPROVAL_DECIDED'), `${step}: ${String(late)}`).toBe(true)
      expect(await resumeRuns(dir), step).toEqual(['b'])
      expect((await decided(dir)).map((d) => d.data.by), step).toEqual([{ kind: 'user', id: 'killed' }])
    }
  }, 120_000)
})
