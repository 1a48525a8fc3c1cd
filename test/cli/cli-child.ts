/**
 * The compiled CLI for the few tests that must run `turnlog` as a real process (a FIFO that could
 * block a libuv thread, exit codes as the shell sees them). Uses `dist/cli/main.js` when it is
 * newer than every source file; otherwise compiles `cli/main.ts` and what it imports with `tsc`
 * into `node_modules/.cache/turnlog-cli-child/` (once).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildOnce } from '../support/build-once.js'
import { ROOT } from './helpers.js'

const SOURCE_DIRS = ['events', 'machines', 'reducers', 'agent', 'tools', 'models', 'compaction', 'stores', 'replay', 'testing', 'cli']

function newestSource(): number {
  let newest = 0
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs)
    }
  }
  for (const d of SOURCE_DIRS) if (existsSync(join(ROOT, d))) walk(join(ROOT, d))
  return newest
}

let cached: string | undefined

/** The path of a compiled `cli/main.js` that matches the sources. */
export function cliMain(): string {
  if (cached) return cached
  const newest = newestSource()
  const dist = join(ROOT, 'dist', 'cli', 'main.js')
  if (existsSync(dist) && statSync(dist).mtimeMs >= newest) return (cached = dist)
  const out = join(ROOT, 'node_modules', '.cache', 'turnlog-cli-child')
  const main = join(out, 'cli', 'main.js')
  const fresh = () => existsSync(main) && statSync(main).mtimeMs >= newest
  // one tsc at a time across vitest workers (test/support/build-once.ts)
  if (!fresh()) buildOnce(out, fresh, () => {
    mkdirSync(out, { recursive: true })
    const cfg = join(out, 'tsconfig.json')
    writeFileSync(cfg, JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: { rootDir: ROOT, outDir: out, noEmit: false, declaration: false, sourceMap: false, incremental: false },
      files: [join(ROOT, 'cli', 'main.ts')],
      include: [],
    }))
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', cfg], { stdio: 'pipe' })
  })
  return (cached = main)
}
