/**
 * A parent's `flush()` covers its running children (docs/spec/lifecycle.md §10), real process: a parent parked
 * by its child's approval awaits `flush()` and exits at once (`process.exit(0)`); the child's log
 * then holds its open approval under the id the app was shown, and `step/parked`, so a later
 * process lists and decides that same approval.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EventOf } from '../../events/index.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { childLib, ROOT } from '../stores/child-lib.js'

const SCRIPT = fileURLToPath(new URL('./children/park-exit-family.mjs', import.meta.url))
let lib = ''
const dirs: string[] = []
beforeAll(() => {
  lib = childLib()
}, 300_000)
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

function run(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [SCRIPT, lib, dir, 'p'], { cwd: ROOT, stdio: 'pipe' })
    let out = ''
    let err = ''
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()))
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
    proc.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${out} ${err}`))))
  })
}

describe("a parent's flush() covers its children (lifecycle §10)", () => {
  it('L17 L18 L19: parked, flushed and exited: the child log holds the open approval the app was shown, and its step/parked', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-flush-family-'))
    dirs.push(dir)
    const out = await run(dir)
    const m = /PARKED (\w+) (\S+)/.exec(out)
    expect(m?.[1]).toBe('parked')
    const child = await readLog(join(dir, 'p.c1-1-c1.jsonl'))
    const requested = child.events.filter((e) => e.type === 'tool/approval-requested') as EventOf<'tool/approval-requested'>[]
    expect(requested.map((e) => e.data.approvalId)).toEqual([m![2]])
    expect(child.events.some((e) => e.type === 'step/parked')).toBe(true)
    expect(verify(child.events).violations).toEqual([])
  })
})
