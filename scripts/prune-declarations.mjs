#!/usr/bin/env node
/**
 * Removes from dist/ every declaration file (`.d.ts`) that no public entry point's types reach:
 * the package's `exports` name a `types` file per subpath; the declarations those import
 * (transitively) are what a TypeScript user's compiler can ever open. The others describe internal
 * modules (the CLI's commands, the workers' internals …) and only made the tarball larger.
 * Run by `npm run build` after tsc. Usage: node scripts/prune-declarations.mjs [dist]
 */
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(import.meta.dirname, '..')
const dist = resolve(root, process.argv[2] ?? 'dist')
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

/** Every `types` target in `exports` (nested conditions included). */
function typesEntries(node, out = []) {
  if (typeof node === 'string') return out
  if (node === null || typeof node !== 'object') return out
  for (const [k, v] of Object.entries(node)) {
    if (k === 'types' && typeof v === 'string') out.push(resolve(root, v))
    else typesEntries(v, out)
  }
  return out
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+|\/\/\/\s*<reference\s+path=)['"](\.{1,2}\/[^'"]+)['"]/gm
/** The declaration file a relative specifier in a .d.ts names (`./x.js` → `./x.d.ts`). */
function declarationOf(from, spec) {
  const base = resolve(dirname(from), spec)
  for (const c of [base.replace(/\.js$/, '.d.ts'), base.replace(/\.mjs$/, '.d.mts'), `${base}.d.ts`, join(base, 'index.d.ts'), base]) {
    if (c.endsWith('.d.ts') && existsSync(c)) return c
  }
  return null
}

const reached = new Set()
const todo = typesEntries(pkg.exports).filter((f) => f.startsWith(dist))
while (todo.length > 0) {
  const f = todo.pop()
  if (reached.has(f) || !existsSync(f)) continue
  reached.add(f)
  for (const m of readFileSync(f, 'utf8').matchAll(IMPORT)) {
    const d = declarationOf(f, m[1])
    if (d !== null && !reached.has(d)) todo.push(d)
  }
}
if (reached.size === 0) throw new Error('prune-declarations: no declaration file is reached from package.json exports')

let removed = 0
let bytes = 0
function walk(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) walk(p)
    else if (e.name.endsWith('.d.ts') && !reached.has(p)) {
      bytes += readFileSync(p).length
      rmSync(p)
      removed++
    }
  }
}
walk(dist)
console.log(`prune-declarations: kept ${reached.size} declaration files reached from exports, removed ${removed} (${Math.round(bytes / 1024)} KiB) in ${relative(root, dist) || '.'}`)
