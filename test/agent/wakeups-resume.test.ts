/**
 * A wakeup due while no process runs fires exactly once when `resumeAgent` comes back (docs/spec/lifecycle.md
 * §10), with a real process: the child schedules on a JSONL store and exits on its own (the wakeup
 * timer is unref'd: a pending wakeup never keeps a process alive); this process resumes the session
 * with a clock past the due times. Missed periods of the repeating wakeup coalesce into one firing;
 * a second resume fires nothing again. The clock is injected: nothing waits for real time.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Agent } from '../../agent/types.js'
import type { EventOf } from '../../events/index.js'
import { scriptedModel } from '../../models/scripted.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { childLib, ROOT } from '../stores/child-lib.js'

const CHILD = fileURLToPath(new URL('./children/wakeup-child.mjs', import.meta.url))
let lib = ''
const dirs: string[] = []
beforeAll(() => {
  lib = childLib()
}, 180_000)
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function runChild(dir: string, sessionId: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CHILD, lib, dir, sessionId], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    p.stdout.on('data', (d) => (out += d))
    p.stderr.on('data', (d) => (err += d))
    p.on('exit', (code) => resolve({ code, out, err }))
  })
}

async function resumeAt(dir: string, sessionId: string, now: number): Promise<Agent> {
  const agent = await resumeAgent({ store: jsonlStore(dir), sessionId, model: scriptedModel(() => ({ text: 'ok' })), clock: () => now })
  await agent.whenIdle()
  await agent.flush()
  return agent
}

describe('wakeups across processes (JSONL, resumeAgent)', () => {
  it('W2: a wakeup that came due while no process ran fires exactly once on resume; missed periods coalesce; a second resume fires nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnlog-wakeup-'))
    dirs.push(dir)
    const child = await runChild(dir, 's1')
    expect(child.err).toBe('')
    expect(child.out).toBe('SCHEDULED\n')
    expect(child.code).toBe(0)

    const before = await resumeAt(dir, 's1', 0)
    const created = before.events.filter((e) => e.type === 'schedule/created') as Array<EventOf<'schedule/created'>>
    const [once, tick] = created.map((e) => e.data)
    // a clock before every due time: nothing fires
    expect(before.events.some((e) => e.type === 'schedule/fired')).toBe(false)
    await before.dispose()

    // 65 s after the ticks began: the one-shot (60 s) is due, and six periods of the tick passed
    const now = tick!.due - 10_000 + 65_000
    const agent = await resumeAt(dir, 's1', now)
    const fired = agent.events.filter((e) => e.type === 'schedule/fired') as Array<EventOf<'schedule/fired'>>
    expect(fired.map((e) => e.data)).toEqual([
      { scheduleId: 'tick', due: tick!.due + 50_000, missed: 5 },
      { scheduleId: 'once', due: once!.due },
    ].sort((a, b) => (a.due - b.due)))
    expect(agent.schedules().map((s) => [s.scheduleId, s.due])).toEqual([['tick', tick!.due + 60_000]])
    // each delivered message got its turn
    const scheduled = agent.events.filter((e) => e.type === 'user/message' &&
      (e.data as EventOf<'user/message'>['data']).message.source.kind === 'schedule')
    expect(scheduled).toHaveLength(2)
    expect(verify(agent.events).violations).toEqual([])
    await agent.dispose()

    // resumed again at the same moment: nothing is due any more
    const again = await resumeAt(dir, 's1', now)
    expect(again.events.filter((e) => e.type === 'schedule/fired')).toHaveLength(2)
    await again.dispose()
  }, 120_000)
})
