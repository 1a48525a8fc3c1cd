/**
 * README "Wait for a person" works as written: the block after the `wait-for-a-person-example`
 * marker runs with `turnlog…` imports pointing at this repository's sources, in a fresh directory
 * (its `./sessions`); the approved body runs once and the resumed turn completes.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'

const ROOT = join(import.meta.dirname, '..', '..')

function example(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const at = readme.indexOf('<!-- wait-for-a-person-example')
  expect(at).toBeGreaterThan(0)
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))
  return m![1]!
}

describe('README: wait for a person', () => {
  it('R10 L17 L18: the example runs as written: parks, is decided from the store, resumes, the body runs once', async () => {
    const code = example()
    expect(code.split('\n').length).toBeLessThanOrEqual(26)
    const cache = join(ROOT, 'node_modules', '.cache')
    mkdirSync(cache, { recursive: true })
    const dir = mkdtempSync(join(cache, 'readme-approvals-'))
    const cwd = process.cwd()
    try {
      const src = (p: string) => JSON.stringify(join(ROOT, p))
      const runnable = code
        .replace("from 'turnlog'", `from ${src('index.ts')}`)
        .replace("from 'turnlog/replay'", `from ${src('replay/index.ts')}`)
        .replace("from 'turnlog/stores/jsonl'", `from ${src('stores/jsonl/index.ts')}`)
        .replace("jsonlStore('./sessions')", `jsonlStore(${JSON.stringify(join(dir, 'sessions'))})`)
        .replace(/console\.log\(/g, 'globalThis.__readme.push(')
      const file = join(dir, 'example.ts')
      writeFileSync(file, `${runnable}\nexport const events = resumed.events\n`)
      ;(globalThis as { __readme?: unknown[] }).__readme = []
      const mod = (await import(pathToFileURL(file).href)) as { events: readonly { type: string; data: unknown }[] }
      const printed = (globalThis as unknown as { __readme: unknown[] }).__readme
      expect(printed[0]).toBe('parked')
      expect(printed[1]).toMatchObject([{ name: 'delete_file', arguments: '{"path":"report.pdf"}' }])
      const log = (await readLog(join(dir, 'sessions', 'cleanup.jsonl'))).events
      expect(verify(log).violations).toEqual([])
      const results = log.filter((e) => e.type === 'tool/result').map((e) => (e.data as { message: { content: Array<{ text: string }> } }).message.content[0]!.text)
      expect(results).toEqual(['deleted report.pdf'])
      expect(log.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)).toEqual(['completed'])
      expect(mod.events.length).toBe(log.length)
    } finally {
      process.chdir(cwd)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it('issue 38 item 4: run a second time on the same sessions, the block ends in the coded SESSION_EXISTS (from dispose), not a TypeError', async () => {
    const code = example()
    const cache = join(ROOT, 'node_modules', '.cache')
    mkdirSync(cache, { recursive: true })
    const dir = mkdtempSync(join(cache, 'readme-approvals-twice-'))
    try {
      const src = (p: string) => JSON.stringify(join(ROOT, p))
      const runnable = code
        .replace("from 'turnlog'", `from ${src('index.ts')}`)
        .replace("from 'turnlog/replay'", `from ${src('replay/index.ts')}`)
        .replace("from 'turnlog/stores/jsonl'", `from ${src('stores/jsonl/index.ts')}`)
        .replace("jsonlStore('./sessions')", `jsonlStore(${JSON.stringify(join(dir, 'sessions'))})`)
        .replace(/console\.log\(/g, 'globalThis.__readme.push(')
      ;(globalThis as { __readme?: unknown[] }).__readme = []
      writeFileSync(join(dir, 'first.ts'), runnable)
      await import(pathToFileURL(join(dir, 'first.ts')).href)
      writeFileSync(join(dir, 'second.ts'), runnable)
      const second = import(pathToFileURL(join(dir, 'second.ts')).href)
      await expect(second).rejects.toMatchObject({ name: 'TurnlogError', code: 'SESSION_EXISTS' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
