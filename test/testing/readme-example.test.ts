/**
 * The README's CI example (issue 9 item 18) passes as written: the block after the
 * `fuzz-ci-example` marker is written to a temp project and run by a real vitest process, with
 * `turnlog` and `turnlog/testing` resolved to this repository's sources, the way a user's CI runs
 * it (vitest's default 5 s test timeout is replaced by the example's own).
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')

/** The ```ts block after the marker. */
export function readmeExample(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const at = readme.indexOf('<!-- fuzz-ci-example')
  expect(at).toBeGreaterThan(0)
  const m = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))
  expect(m).not.toBeNull()
  return m![1]!
}

describe('README: fuzzing in CI (item 18)', () => {
  it('the example is a complete vitest file: imports only vitest, zod and turnlog, sets a realistic timeout and checks the census', () => {
    const code = readmeExample()
    const imports = [...code.matchAll(/from '([^']+)'/g)].map((m) => m[1])
    expect(imports).toEqual(['vitest', 'zod', 'turnlog', 'turnlog/testing'])
    expect(code).toMatch(/numRuns: 200/)
    expect(code).toMatch(/\}, 120_000\)/)
    expect(code).toMatch(/report\.census\.bodies\.weather/)
  })

  it('passes as written under a real vitest run (R1–R8, L1–L16 over 200 runs with its tools and hooks)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turnlog-readme-'))
    try {
      writeFileSync(join(dir, 'agent.fuzz.test.ts'), readmeExample())
      writeFileSync(join(dir, 'vitest.config.mjs'), `export default {
  resolve: { alias: [
    { find: /^turnlog\\/testing$/, replacement: ${JSON.stringify(join(ROOT, 'testing', 'index.ts'))} },
    { find: /^turnlog$/, replacement: ${JSON.stringify(join(ROOT, 'index.ts'))} },
    { find: /^zod$/, replacement: ${JSON.stringify(join(ROOT, 'node_modules', 'zod', 'index.js'))} },
  ] },
  test: { include: ['agent.fuzz.test.ts'], root: ${JSON.stringify(dir)} },
}
`)
      const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', join(dir, 'vitest.config.mjs'), '--root', dir], {
        cwd: dir, env: { ...process.env, CI: '1', NO_COLOR: '1', FORCE_COLOR: '0' }, maxBuffer: 16 << 20,
      })
      expect(stdout).toMatch(/Tests\s+1 passed \(1\)/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
