/**
 * The compiled library for child processes (Node 20 cannot run the TypeScript sources). Uses
 * `dist/` when it is newer than every source file it is built from (CI: `npm ci` runs `prepare`,
 * which builds it); otherwise compiles the closure the children import (stores/jsonl, stores/postgres, stores/sqlite, workers, agent,
 * models, tools, events) with `tsc` into `node_modules/.cache/turnlog-child/` (inside the repo, so
 * the children resolve `zod` and `xstate` from its node_modules). Returns the directory.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildOnce } from '../support/build-once.js'

export const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const SOURCE_DIRS = ['events', 'machines', 'reducers', 'agent', 'tools', 'models', 'stores', 'replay', 'compaction', 'workers']
const ENTRIES = ['stores/jsonl/index.ts', 'stores/postgres/index.ts', 'workers/index.ts', 'stores/sqlite/index.ts', 'workers/sqlite.ts', 'agent/index.ts', 'models/index.ts', 'tools/index.ts', 'events/index.ts', 'replay/index.ts']
const PROBES = ['stores/jsonl/index.js', 'stores/postgres/index.js', 'workers/index.js', 'stores/sqlite/index.js', 'workers/sqlite.js', 'agent/persistence.js', 'agent/index.js', 'models/index.js', 'tools/index.js', 'replay/index.js']

function newestSource(): number {
  let newest = 0
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs)
    }
  }
  for (const d of SOURCE_DIRS) if (existsSync(join(ROOT, d))) walk(join(ROOT, d))
  return newest
}

function fresh(dir: string, newest: number): boolean {
  return PROBES.every((p) => existsSync(join(dir, p)) && statSync(join(dir, p)).mtimeMs >= newest)
}

let cached: string | undefined

export function childLib(): string {
  if (cached) return cached
  const newest = newestSource()
  const dist = join(ROOT, 'dist')
  if (fresh(dist, newest)) return (cached = dist)
  const out = join(ROOT, 'node_modules', '.cache', 'turnlog-child')
  // one tsc at a time across vitest workers (test/support/build-once.ts)
  if (!fresh(out, newest)) buildOnce(out, () => fresh(out, newest), () => {
    mkdirSync(out, { recursive: true })
    const cfg = join(out, 'tsconfig.json')
    writeFileSync(cfg, JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: { rootDir: ROOT, outDir: out, noEmit: false, declaration: false, sourceMap: false, incremental: false },
      files: ENTRIES.map((e) => join(ROOT, e)),
      include: [],
    }))
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', cfg], { stdio: 'pipe' })
  })
  return (cached = out)
}
