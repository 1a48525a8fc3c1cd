/**
 * `npm test [-- vitest options]`: the typecheck and the whole suite under a supported Node
 * (scripts/node-lines.mjs picks it: the Node that runs npm if it is 22, 24 or 26, else the official
 * binary npm ci installed; `TURNLOG_NODE_LINE=26 npm test` asks for a line).
 *
 * The typecheck (both tsc projects, incremental: its cache is in node_modules/.cache/tsc) runs
 * beside vitest rather than before it: the suite's workers spend much of their time waiting on
 * child processes, PostgreSQL and chromium, and tsc fills that time. Its output is printed after
 * the suite's, and either failing fails the command.
 *
 * `--no-typecheck` (its own option, or TURNLOG_NO_TYPECHECK=1) leaves the typecheck out (`npm run
 * test:lib`, `test:faults`, CI's Node 26 lane);
 * every other argument goes to `vitest run` (e.g. `--config vitest.lib.config.ts`, reporters).
 */
import { spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, ensureNativeAddons, envFor, pickNode } from './node-lines.mjs'

const node = pickNode()
const env = envFor(node)
process.stdout.write(`node ${node.version} (${node.headers ? `node_modules/node${node.major}, the official binary` : node.path})\n`)
ensureNativeAddons(node)

const cache = join(ROOT, 'node_modules', '.cache', 'tsc')
mkdirSync(cache, { recursive: true })

function run(args, { capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(node.path, args, { cwd: ROOT, env, stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' })
    let out = ''
    if (capture) {
      child.stdout.on('data', (d) => (out += d))
      child.stderr.on('data', (d) => (out += d))
    }
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), out }))
  })
}

const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
async function typecheck() {
  const started = Date.now()
  const results = []
  for (const [project, info] of [['tsconfig.json', 'main'], ['inspector/tsconfig.json', 'inspector']]) {
    results.push(await run([tsc, '-p', project, '--noEmit', '--incremental', '--tsBuildInfoFile', join(cache, `${info}.tsbuildinfo`)], { capture: true }))
  }
  return { code: results.some((r) => r.code !== 0) ? 1 : 0, out: results.map((r) => r.out).join(''), seconds: (Date.now() - started) / 1000 }
}

const args = process.argv.slice(2)
// TURNLOG_NO_TYPECHECK=1: the same (CI's second whole-suite lane: the typecheck ran on the first)
const noTypecheck = args.includes('--no-typecheck') || process.env.TURNLOG_NO_TYPECHECK === '1'
const vitestArgs = [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args.filter((a) => a !== '--no-typecheck')]
const [types, suite] = await Promise.all([noTypecheck ? null : typecheck(), run(vitestArgs)])
if (types) {
  if (types.out.trim()) process.stdout.write(types.out)
  process.stdout.write(`typecheck (tsc, 2 projects): ${types.code === 0 ? 'passed' : 'FAILED'} in ${types.seconds.toFixed(1)} s\n`)
}
process.exitCode = suite.code !== 0 || (types && types.code !== 0) ? 1 : 0
