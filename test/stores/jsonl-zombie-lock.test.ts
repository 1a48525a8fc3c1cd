/**
 * Issue 27 item 11: a writer that died but was never reaped (a zombie: `/proc/PID/stat` state
 * `Z`, as when a parent and child are killed together in a container whose init does not reap)
 * holds no lock. `kill(pid, 0)` succeeds on a zombie, so the liveness check also reads the state.
 *
 * The zombie is real: `sh -c '<child> & echo $!; exec sleep 60'` starts a child that exits as soon
 * as its parent has become `sleep 60`, which never waits for it. Linux only (`/proc`).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { jsonlStore, pidAlive } from '../../stores/jsonl/index.js'

const dirs: string[] = []
const parents: ChildProcess[] = []
afterAll(async () => {
  // the parent we started: killing it lets init adopt and reap the zombie
  for (const p of parents) p.kill('SIGKILL')
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function procState(pid: number): Promise<string | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? null
  } catch {
    return null
  }
}

/** Starts a parent that never reaps its exited child; resolves with the child's (zombie) pid. */
async function makeZombie(): Promise<number> {
  // The child exits only once its parent has exec'd into `sleep` (its /proc comm says so): a child
  // that exited while `sh` still ran could be reaped by `sh` itself (seen under load: no zombie).
  const child = `while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.01; done`
  const parent = spawn('sh', ['-c', `sh -c '${child}' & echo $!; exec sleep 60`], { stdio: ['ignore', 'pipe', 'inherit'] })
  parents.push(parent)
  const pid = await new Promise<number>((resolve, reject) => {
    let out = ''
    parent.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      if (out.includes('\n')) resolve(Number(out.trim()))
    })
    parent.on('error', reject)
    parent.on('exit', () => reject(new Error('the parent exited before printing the child pid')))
  })
  // the child exits on its own; wait (bounded) until the kernel shows it as a zombie
  for (let i = 0; i < 500 && (await procState(pid)) !== 'Z'; i++) await new Promise((r) => setTimeout(r, 10))
  return pid
}

describe.runIf(process.platform === 'linux')('jsonlStore lock: a zombie writer is dead (issue 27 item 11)', () => {
  it('pidAlive is false for a zombie (state Z in /proc/PID/stat), true for a live process', async () => {
    const zombie = await makeZombie()
    expect(await procState(zombie)).toBe('Z')
    // kill(pid, 0) still succeeds on a zombie: that alone would call it alive
    expect(() => process.kill(zombie, 0)).not.toThrow()
    expect(pidAlive(zombie)).toBe(false)
    expect(pidAlive(process.pid)).toBe(true)
    expect(pidAlive(parents[0]!.pid!)).toBe(true)
  })

  it('a lock naming a zombie pid on this host is stale: the next writer takes it over (not SESSION_OWNED)', async () => {
    const zombie = await makeZombie()
    expect(await procState(zombie)).toBe('Z')
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-zombie-'))
    dirs.push(dir)
    const store = jsonlStore(dir)
    await store.create('s')
    await writeFile(join(dir, 's.lock'), JSON.stringify({ pid: zombie, host: hostname(), token: 3, acquiredAt: 1 }))
    const w = await store.open('s', 'write')
    expect(await store.lockOwner('s')).toMatchObject({ pid: process.pid, token: w.token })
    await w.close()
  })
})
