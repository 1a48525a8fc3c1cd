/**
 * Issue 27 item 4: `openAgent({ store, sessionId, … })`, the open-or-create call. A missing session
 * is created, a present one resumed (numbering continues, nothing re-sent), and two openers racing
 * on one id get exactly one agent: the other gets `SESSION_OWNED` and changes nothing, and after
 * the winner disposed it resumes what the winner wrote. Memory and jsonl stores here, in one
 * process and (jsonl) in two real processes; PostgreSQL in test/stores/postgres/open-agent.test.ts.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { openAgent } from '../../replay/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { memoryStore } from '../../stores/memory.js'
import { tempDir } from '../cli/helpers.js'
import { openOrCreate, opts, stored, turnStarts } from './open-agent-scenario.js'
import { childLib, ROOT } from '../stores/child-lib.js'

describe('openAgent: open or create (issue 27 item 4)', () => {
  it('P5 L2: memory store: creates when missing, resumes when present (numbering continues), one winner when two race', async () => {
    await openOrCreate(memoryStore())
  })

  it('P5 L2: jsonl store: the same, through the lock file', async () => {
    const { dir, cleanup } = tempDir()
    try {
      await openOrCreate(jsonlStore(dir))
    } finally {
      cleanup()
    }
  })

  it('options are checked before the store is touched (INVALID_OPTION naming the field, did you mean)', async () => {
    const store = memoryStore()
    await expect(openAgent({ ...opts(store), autoStrat: true } as never)).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'autoStrat' })
    await expect(openAgent({ ...opts(store), log: [] } as never)).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'log' })
    await expect(openAgent({ ...opts(store), sessionId: undefined } as never)).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'sessionId' })
    await expect(openAgent({ ...opts(store), store: undefined } as never)).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'store' })
    expect(await store.list()).toEqual([])
  })

  it('a new session gets the given header; an existing one keeps its own', async () => {
    const store = memoryStore()
    const a = await openAgent({ ...opts(store), header: { createdAt: 42 } })
    await a.dispose()
    const b = await openAgent({ ...opts(store), header: { createdAt: 7 } })
    await b.dispose()
    const r = await store.open('chat', 'read')
    expect(r.header.createdAt).toBe(42)
    await r.close()
  })
})

const CHILD = fileURLToPath(new URL('./children/open-child.mjs', import.meta.url))
let lib = ''

function child(dir: string): { proc: ChildProcessWithoutNullStreams; line: () => Promise<string> } {
  const proc = spawn(process.execPath, [CHILD, lib, dir, 'chat'], { cwd: ROOT })
  const queue: string[] = []
  const waiting: Array<(l: string) => void> = []
  let buf = ''
  proc.stdout.on('data', (b: Buffer) => {
    buf += b.toString()
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const l = buf.slice(0, i)
      buf = buf.slice(i + 1)
      const w = waiting.shift()
      if (w) w(l)
      else queue.push(l)
    }
  })
  let err = ''
  proc.stderr.on('data', (b: Buffer) => (err += b.toString()))
  proc.on('exit', (code) => {
    for (const w of waiting.splice(0)) w(`EXIT ${code} ${err}`)
  })
  return { proc, line: () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise((r) => waiting.push(r))) }
}

describe('openAgent: two processes racing on one jsonl session (issue 27 item 4)', () => {
  beforeAll(() => {
    lib = childLib()
  }, 180_000)
  it('P5: exactly one process gets the agent, the other SESSION_OWNED; after the winner disposed, the other resumes its events', async () => {
    const { dir, cleanup } = tempDir()
    const kids = [child(dir), child(dir)]
    try {
      for (const k of kids) expect(await k.line()).toBe('READY')
      for (const k of kids) k.proc.stdin.write('go\n')
      const first = await Promise.all(kids.map((k) => k.line()))
      expect(first.filter((l) => l === 'WON 0')).toHaveLength(1)
      expect(first.filter((l) => l === 'LOST SESSION_OWNED')).toHaveLength(1)
      const winner = kids[first.indexOf('WON 0')]!
      expect(await winner.line()).toBe('FLUSHED')
      winner.proc.stdin.write('close\n')
      expect(await winner.line()).toBe('CLOSED')
      const events = await stored(jsonlStore(dir), 'chat')
      expect(turnStarts(events)).toEqual([1])
      // the loser, again: resumes what the winner wrote
      const again = child(dir)
      kids.push(again)
      expect(await again.line()).toBe('READY')
      again.proc.stdin.write('go\n')
      expect(await again.line()).toBe(`WON ${events.length}`)
      expect(await again.line()).toBe('FLUSHED')
      again.proc.stdin.write('close\n')
      expect(await again.line()).toBe('CLOSED')
      expect(turnStarts(await stored(jsonlStore(dir), 'chat'))).toEqual([1, 2])
    } finally {
      for (const k of kids) if (k.proc.exitCode === null) k.proc.kill('SIGKILL')
      cleanup()
    }
  })
})

