/**
 * A JSONL store directory holding something that is not a regular file where a session or its
 * lock should be (issue 10 item 3, for the store: "a FIFO blocks the store"): a FIFO named
 * `<id>.jsonl` or `<id>.lock`, a directory named `<id>.jsonl`. Opening such a session for read or
 * write answers `IO_ERROR` naming the path and what it is, and never blocks (a FIFO's `open`
 * blocks until a writer appears, so before this fix each case below hung until the test's timeout);
 * the other sessions of the store keep working. Containment: nothing in a log directory may wedge
 * the agent or the host.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/errors.js'
import { jsonlStore } from '../../stores/jsonl/index.js'

const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})
async function store() {
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-special-'))
  dirs.push(dir)
  return { dir, store: jsonlStore(dir) }
}
const mkfifo = (p: string) => execFileSync('mkfifo', [p])

async function ioError(p: Promise<unknown>): Promise<TurnlogError> {
  const err = await p.then(() => null, (e: unknown) => e)
  expect(TurnlogError.is(err), String(err)).toBe(true)
  expect((err as TurnlogError).code).toBe('IO_ERROR')
  return err as TurnlogError
}

describe('jsonl store: special files in the store directory (issue 10.3; containment)', () => {
  it('a FIFO as <id>.jsonl: open for read and for write answer IO_ERROR naming the FIFO, without blocking', async () => {
    const { dir, store: s } = await store()
    const fifo = join(dir, 'f.jsonl')
    mkfifo(fifo)
    for (const mode of ['read', 'write'] as const) {
      const err = await ioError(s.open('f', mode))
      expect(err.message).toContain(fifo)
      expect(err.message).toMatch(/a FIFO, not a regular file/)
    }
    // the rest of the store is unaffected
    await s.create('ok')
    const w = await s.open('ok', 'write')
    await w.close()
    expect((await s.list()).sort()).toEqual(['f', 'ok'])
  })

  it('a directory as <id>.jsonl: IO_ERROR naming it', async () => {
    const { dir, store: s } = await store()
    await mkdir(join(dir, 'd.jsonl'))
    const err = await ioError(s.open('d', 'read'))
    expect(err.message).toContain(join(dir, 'd.jsonl'))
  })

  it('a FIFO as <id>.lock: opening the session for write answers an error instead of blocking on the lock', async () => {
    const { dir, store: s } = await store()
    await s.create('x')
    mkfifo(join(dir, 'x.lock'))
    const err = await s.open('x', 'write').then(() => null, (e: unknown) => e)
    expect(TurnlogError.is(err), String(err)).toBe(true)
    // a read handle needs no lock: it still works
    const r = await s.open('x', 'read')
    expect(r.header.id).toBe('x')
  })
})
