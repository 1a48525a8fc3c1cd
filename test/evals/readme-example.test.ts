/**
 * The README's "Test a change against recorded sessions" vitest file passes as written: the block
 * after the `golden-ci-example` marker is written to a temp project with `goldens/weather.jsonl`
 * (examples/goldens/weather.jsonl) and run by a real vitest process, with `turnlog` and
 * `turnlog/evals` resolved to this repository's sources, the way a user's CI runs it.
 */
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')

function readmeExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const at = readme.indexOf('<!-- golden-ci-example')
  expect(at).toBeGreaterThan(0)
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))
  expect(m).not.toBeNull()
  return m![1]!
}

describe('README: test a change against recorded sessions', () => {
  it('the example imports only vitest, zod and turnlog, and grades trials', () => {
    const code = readmeExample()
    expect([...code.matchAll(/from '([^']+)'/g)].map((m) => m[1])).toEqual(['vitest', 'zod', 'turnlog', 'turnlog/evals'])
    expect(code).toMatch(/evaluate\(\['goldens\/weather\.jsonl'\]/)
    expect(code).toMatch(/passHatK\[3\]/)
  })

  it('passes as written under a real vitest run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnlog-goldens-'))
    try {
      mkdirSync(join(dir, 'goldens'))
      copyFileSync(join(ROOT, 'examples', 'goldens', 'weather.jsonl'), join(dir, 'goldens', 'weather.jsonl'))
      writeFileSync(join(dir, 'goldens.test.ts'), readmeExample())
      writeFileSync(join(dir, 'vitest.config.mjs'), `export default {
  resolve: { alias: [
    { find: /^turnlog\\/evals$/, replacement: ${JSON.stringify(join(ROOT, 'evals', 'index.ts'))} },
    { find: /^turnlog$/, replacement: ${JSON.stringify(join(ROOT, 'index.ts'))} },
    { find: /^zod$/, replacement: ${JSON.stringify(join(ROOT, 'node_modules', 'zod', 'index.js'))} },
  ] },
  test: { include: ['goldens.test.ts'], root: ${JSON.stringify(dir)} },
}
`)
      const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', join(dir, 'vitest.config.mjs'), '--root', dir], {
        cwd: dir, env: { ...process.env, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' }, maxBuffer: 16 << 20,
      })
      expect(stdout).toMatch(/Tests\s+1 passed \(1\)/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
