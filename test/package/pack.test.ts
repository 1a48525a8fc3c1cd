/**
 * Issue 27.9: what `npm pack` ships (`npm pack --dry-run --json`, against the built dist/): the
 * library and the CLI, no benchmarks, no source map whose sources are absent, every export and
 * the bin, every file the README links to; `fast-check` and `cli-progress` stay dependencies only
 * because no library entry loads them (the CLI and `turnlog/testing` do).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { cli, ROOT } from '../cli/helpers.js'

interface Pkg {
  exports: Record<string, { types: string; default: string }>
  bin: Record<string, string>
  dependencies: Record<string, string>
  repository?: unknown
  homepage?: unknown
  bugs?: unknown
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Pkg
let files: string[] = []

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ is not built: npm run build (npm ci builds it)')
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path)
}, 120_000)

describe('issue 27.9: npm pack ships the library, the CLI and their docs, nothing else', () => {
  it('no benchmarks, no tests, no TypeScript sources (only .d.ts), no build info', () => {
    expect(files.filter((f) => f.startsWith('dist/bench/'))).toEqual([])
    expect(files.filter((f) => /^(test|bench|scripts|mutation|inspector)\//.test(f))).toEqual([])
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([])
    expect(files.filter((f) => f.endsWith('.tsbuildinfo'))).toEqual([])
  })

  it('no source map whose sources are absent: every sourceMappingURL and every map source ships', () => {
    const shipped = new Set(files)
    const dangling: string[] = []
    for (const f of files.filter((x) => x.endsWith('.js') || x.endsWith('.d.ts'))) {
      const m = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(ROOT, f), 'utf8'))
      if (m && !shipped.has(join(f, '..', m[1]!))) dangling.push(`${f} → ${m[1]}`)
    }
    for (const f of files.filter((x) => x.endsWith('.map'))) {
      const map = JSON.parse(readFileSync(join(ROOT, f), 'utf8')) as { sources: string[] }
      for (const s of map.sources) if (!shipped.has(join(f, '..', s))) dangling.push(`${f} → ${s}`)
    }
    expect(dangling).toEqual([])
  })

  it('every export (default and types) and the bin ship', () => {
    const wanted = [...Object.values(pkg.exports).flatMap((e) => [e.default, e.types]), ...Object.values(pkg.bin)].map((p) => p.replace(/^\.\//, ''))
    expect(wanted.filter((p) => !files.includes(p))).toEqual([])
    expect(files).toContain('dist/inspector/template.html') // report and inspect need the page
  })

  it('every relative import of a shipped module ships (issue 24 item 9: turnlog/stores/postgres now loads dist/workers/)', () => {
    const shipped = new Set(files)
    const missing: string[] = []
    let imports = 0
    for (const f of files.filter((x) => x.endsWith('.js') && x.startsWith('dist/'))) {
      const text = readFileSync(join(ROOT, f), 'utf8')
      for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
        const target = join(f, '..', m[1]!)
        imports++
        if (!shipped.has(target)) missing.push(`${f} → ${m[1]}`)
      }
    }
    expect(imports).toBeGreaterThan(files.length) // the pattern sees the imports
    expect(missing).toEqual([])
    const entry = pkg.exports['./stores/postgres']!.default.replace(/^\.\//, '')
    expect(files).toContain(entry)
    expect(readFileSync(join(ROOT, entry), 'utf8')).toMatch(/runWorkers/)
    expect(files).toEqual(expect.arrayContaining(['dist/workers/pool.js', 'dist/workers/session-run.js']))
  })

  it('every relative link and image of the README ships (they resolve in node_modules/turnlog)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const links = [...readme.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/i.test(l))
    expect(links.length).toBeGreaterThan(0)
    expect(links.filter((l) => !files.includes(l))).toEqual([])
    expect(files).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json', 'examples/weather.jsonl', 'examples/demo-tools.mjs']))
  })

  it('fast-check and cli-progress are dependencies only of the CLI and turnlog/testing: no other shipped module imports them', () => {
    const offenders = files
      .filter((f) => f.endsWith('.js') && !f.startsWith('dist/cli/') && !f.startsWith('dist/testing/'))
      .filter((f) => /from ['"](fast-check|cli-progress)['"]|import\(['"](fast-check|cli-progress)['"]\)/.test(readFileSync(join(ROOT, f), 'utf8')))
    expect(offenders).toEqual([])
    // the premise of keeping them: the CLI ships in every install and uses both
    expect(Object.keys(pkg.dependencies)).toEqual(expect.arrayContaining(['fast-check', 'cli-progress']))
  })

  it('no placeholder in the package metadata (a repository URL only once a public one exists)', () => {
    for (const v of [pkg.repository, pkg.homepage, pkg.bugs]) {
      if (v !== undefined) expect(JSON.stringify(v)).not.toMatch(/example\.|your-?org|TODO|placeholder|<|>/i)
    }
  })

  it('turnlog --help: the first line names both log sources, not "(JSONL)" only', async () => {
    const r = await cli(['--help'])
    const first = r.stdout.split('\n').find((l) => l.trim() !== '' && !l.startsWith('Usage:'))!
    expect(first).not.toMatch(/\(JSONL\)\.?$/)
    expect(first).toMatch(/JSONL/)
    expect(first).toMatch(/PostgreSQL/)
  })
})
