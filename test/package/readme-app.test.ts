/**
 * Issue 27.10: every README code block works in an app, from the packed package. The test packs
 * this repository (`npm pack`, against the built dist/), makes a scratch app, installs the tarball
 * there with `npm install --offline` (turnlog's own dependencies are linked in from this
 * repository's node_modules first, so npm finds them satisfied and needs no registry), links the
 * packages the README tells a user to install (pg, @types/pg, the OpenTelemetry SDK, an AI SDK
 * provider), and then runs the README's blocks in order in that app:
 *
 * - ```ts blocks: all type-checked together (strict, NodeNext, the app's node_modules), then each
 *   run with tsx; the embed example runs twice (a second run must not fail `FILE_EXISTS`).
 * - ```sh blocks: run with bash (`set -e`); `npx turnlog` runs the app's `node_modules/.bin/turnlog`
 *   (npx's own start-up costs seconds per call and adds nothing here), `npx turnlog inspect` is
 *   stopped with SIGINT once it serves (Ctrl-C), and an `npm install …` line is checked to name only
 *   packages the test installed (it is the install step). `DATABASE_URL` is a fresh database on
 *   the test server.
 * - A block may carry `<!-- readme-test: skip (reason) -->` (not run: the reason says why) or
 *   `<!-- readme-test: typecheck (reason) -->` (type-checked, not run). Blocks without a language
 *   (sample output) are text.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { ROOT, tempDir } from '../cli/helpers.js'

interface Block {
  lang: string
  code: string
  line: number
  marker?: { kind: 'skip' | 'typecheck'; reason: string }
}

/** The README's fenced blocks, with the `readme-test` marker in the comments right above each. */
export function readmeBlocks(text: string): Block[] {
  const lines = text.split('\n')
  const out: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!)
    if (!open) continue
    let j = i + 1
    while (j < lines.length && lines[j] !== '```') j++
    let marker: Block['marker']
    for (let k = i - 1; k >= 0 && /^<!--.*-->$/.test(lines[k]!); k--) {
      const m = /^<!-- readme-test: (skip|typecheck) \((.+)\) -->$/.exec(lines[k]!)
      if (m) marker = { kind: m[1] as 'skip' | 'typecheck', reason: m[2]! }
    }
    out.push({ lang: open[1]!, code: lines.slice(i + 1, j).join('\n') + '\n', line: i + 1, ...(marker ? { marker } : {}) })
    i = j
  }
  return out
}

/** What the scratch app gets besides the tarball (links to this repository's copies). */
const APP_PACKAGES = ['pg', '@types/pg', '@types/node', '@opentelemetry/api', '@opentelemetry/sdk-trace-base', '@ai-sdk/anthropic', '@ai-sdk/provider', 'vitest', 'zod', 'fast-check', 'valibot', '@valibot/to-json-schema']
/** The README's ways to install turnlog itself while it is not on the registry (the test installs the packed tarball). */
const SELF = /^(turnlog|github:turnlog\/turnlog|\S*turnlog-\d+\.\d+\.\d+\.tgz)$/

const NPX = `#!/usr/bin/env bash
# npx in the scratch app: the app's own bin (what npx runs when the package is installed)
cmd="$1"; shift
bin="$PWD/node_modules/.bin/$cmd"
[ -x "$bin" ] || { echo "npx: $cmd is not installed in this app" >&2; exit 127; }
if [ "$cmd" = turnlog ] && [ "\${1:-}" = inspect ]; then
  # a server until Ctrl-C: wait until it serves, then send SIGINT; its exit code is the command's
  out="$(mktemp)"; "$bin" "$@" >"$out" 2>&1 & pid=$!
  for _ in $(seq 1200); do grep -q '^inspecting' "$out" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -INT "$pid" 2>/dev/null; rc=0; wait "$pid" || rc=$?; cat "$out"; exit "$rc"
fi
exec "$bin" "$@"
`

const { dir, cleanup } = tempDir()
const app = join(dir, 'app')
const blocks = readmeBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'))
let env: NodeJS.ProcessEnv = {}

afterAll(cleanup)

function link(name: string): void {
  const to = join(app, 'node_modules', name)
  if (existsSync(to)) return
  mkdirSync(dirname(to), { recursive: true })
  symlinkSync(join(ROOT, 'node_modules', name), to)
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ is not built: npm run build (npm ci builds it)')
  const pgUrl = inject('pgUrl') ?? process.env.TURNLOG_PG_URL
  if (!pgUrl) throw new Error('no PostgreSQL for the README\'s PostgreSQL block: run the whole suite, or set TURNLOG_PG_URL')
  mkdirSync(app)
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, stdio: 'pipe' })
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true, type: 'module' }))
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  for (const name of Object.keys(pkg.dependencies)) link(name)
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-save', '--loglevel=error', join(dir, tarball)], { cwd: app, stdio: 'pipe' })
  // npm removed what the app's package.json does not name: link the app's own packages now
  for (const name of [...Object.keys(pkg.dependencies), ...APP_PACKAGES]) link(name)
  mkdirSync(join(app, '.bin'))
  writeFileSync(join(app, '.bin', 'npx'), NPX)
  chmodSync(join(app, '.bin', 'npx'), 0o755)
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
    include: ['readme-*.ts'],
  }))
  const db = new URL(pgUrl)
  db.pathname = `/turnlog_readme_${Math.random().toString(36).slice(2, 10)}`
  execFileSync(process.execPath, ['-e', `const pg=require('pg');const c=new pg.Client({connectionString:process.argv[1]});c.connect().then(()=>c.query('CREATE DATABASE ${db.pathname.slice(1)}')).then(()=>c.end())`, pgUrl], { cwd: ROOT, stdio: 'pipe' })
  env = { ...process.env, PATH: `${join(app, '.bin')}:${process.env.PATH}`, DATABASE_URL: db.toString(), NO_COLOR: '1', FORCE_COLOR: '0' }
  for (const [i, b] of blocks.entries()) if (b.lang === 'ts') writeFileSync(join(app, `readme-${i}.ts`), b.code)
}, 300_000)

function runTs(i: number): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), `readme-${i}.ts`], { cwd: app, env, encoding: 'utf8', timeout: 120_000 })
  return { status: r.status, out: `${r.stdout}${r.stderr}` }
}

function runSh(code: string): { status: number | null; out: string } {
  for (const line of code.split('\n').filter((l) => /^npm install\b/.test(l))) {
    // the test's install step stands for these lines: they must name only what it installed
    const names = line.split(/&&|;/).flatMap((c) => c.trim().split(/\s+/).slice(2)).filter((w) => w && !w.startsWith('-'))
    expect(names.filter((n) => !SELF.test(n) && !APP_PACKAGES.includes(n)), line).toEqual([])
  }
  const script = code.split('\n').filter((l) => !/^npm install\b/.test(l)).join('\n')
  const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: app, env, encoding: 'utf8', timeout: 240_000 })
  return { status: r.status, out: `${r.stdout}${r.stderr}` }
}

describe('issue 27.10: every README block works in an app made from npm pack', () => {
  it('the README has runnable blocks, and every block it does not run says why', () => {
    const code = blocks.filter((b) => b.lang !== '')
    // another language (a React component) is allowed only with a skip marker that says why
    expect(code.filter((b) => !['sh', 'ts'].includes(b.lang) && b.marker?.kind !== 'skip').map((b) => `line ${b.line}: ${b.lang}`)).toEqual([])
    expect(code.filter((b) => !b.marker).length).toBeGreaterThanOrEqual(8)
    for (const b of code.filter((x) => x.marker)) expect(b.marker!.reason.length, `line ${b.line}`).toBeGreaterThan(10)
  })

  it('every ts block type-checks in the app (strict, NodeNext) against the packed types', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: app, encoding: 'utf8' })
    const skipped = blocks.flatMap((b, i) => (b.lang === 'ts' && b.marker?.kind === 'skip' ? [`readme-${i}.ts`] : []))
    const errors = `${r.stdout}${r.stderr}`.split('\n').filter((l) => /error TS/.test(l) && !skipped.some((f) => l.startsWith(f)))
    expect(errors).toEqual([])
  }, 180_000)

  it('every sh and ts block runs in README order and exits 0 (the embed example twice)', () => {
    const failures: string[] = []
    for (const [i, b] of blocks.entries()) {
      if (b.lang === '' || b.marker) continue
      const r = b.lang === 'ts' ? runTs(i) : runSh(b.code)
      if (r.status !== 0) failures.push(`README line ${b.line} (${b.lang}) exit ${r.status}:\n${r.out.slice(-2000)}`)
      if (b.lang === 'ts' && /writeLog\('session\.jsonl'/.test(b.code)) {
        const again = runTs(i)
        if (again.status !== 0) failures.push(`README line ${b.line}, second run, exit ${again.status}:\n${again.out.slice(-2000)}`)
      }
    }
    expect(failures).toEqual([])
    expect(existsSync(join(app, 'report.html'))).toBe(true)
    expect(existsSync(join(app, 'session-1.html'))).toBe(true)
    expect(readFileSync(join(app, 'session-1.html'), 'utf8')).toContain('session-1')
  }, 600_000)
})
