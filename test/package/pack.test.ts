/**
 * Issue 27.9: what `npm pack` ships (`npm pack --dry-run --json`, against the built dist/): the
 * library and the CLI, no benchmarks, no source map whose sources are absent, every export and
 * the bin, every file the README links to. Issue 37 item 7: the tarball stays under 700 kB and
 * ships no working notes, decision records, API reports or tests; `fast-check` and `cli-progress`
 * are optional peers that neither the root export nor the CLI's start loads; the shipped types
 * carry no `@internal` member (tsconfig.build.json `stripInternal`).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { cli, ROOT, tempDir } from '../cli/helpers.js'

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
let packed = { size: 0, unpackedSize: 0 }

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ is not built: npm run build (npm ci builds it)')
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const info = (JSON.parse(out) as Array<{ files: Array<{ path: string }>; size: number; unpackedSize: number }>)[0]!
  files = info.files.map((f) => f.path)
  packed = { size: info.size, unpackedSize: info.unpackedSize }
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

  it('every relative import of a shipped declaration ships (the build removes only the declarations no export reaches)', () => {
    const shipped = new Set(files)
    const missing: string[] = []
    let imports = 0
    const decls = files.filter((x) => x.endsWith('.d.ts') && x.startsWith('dist/'))
    for (const f of decls) {
      const text = readFileSync(join(ROOT, f), 'utf8')
      for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)) {
        const target = join(f, '..', m[1]!).replace(/\.js$/, '.d.ts')
        imports++
        if (!shipped.has(target)) missing.push(`${f} → ${m[1]}`)
      }
    }
    expect(imports).toBeGreaterThan(decls.length) // the pattern sees the imports
    expect(missing).toEqual([])
    // every subpath's types entry ships
    for (const [sub, entry] of Object.entries(pkg.exports as Record<string, { types?: string }>)) {
      if (entry.types !== undefined) expect(files, sub).toContain(entry.types.replace(/^\.\//, ''))
    }
    // and the internals no export reaches do not (the CLI's commands)
    expect(decls.some((x) => x.startsWith('dist/cli/'))).toBe(false)
  })

  it('every relative link and image of the README ships (they resolve in node_modules/turnlog)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const links = [...readme.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/i.test(l))
    expect(links.length).toBeGreaterThan(0)
    expect(links.filter((l) => !files.includes(l))).toEqual([])
    expect(files).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json', 'examples/weather.jsonl', 'examples/demo-tools.mjs']))
  })

  it('issue 37.7: the tarball is at most 700 kB and ships no notes, decision records, API reports, docs images or tests', () => {
    expect(packed.size).toBeGreaterThan(100_000) // the figure is real: the library is in it
    expect(packed.size).toBeLessThanOrEqual(700_000)
    expect(files.filter((f) => /^docs\//.test(f))).toEqual([])
    expect(files.filter((f) => /^(api|mutation)\//.test(f) || /\.(test|spec)\.[cm]?[jt]s$/.test(f) || /(^|\/)test\//.test(f))).toEqual([])
    expect(files.filter((f) => f.endsWith('.png'))).toEqual([])
  })

  it('issue 37.6: no shipped declaration carries an @internal member (stripInternal)', () => {
    const dts = files.filter((f) => f.endsWith('.d.ts'))
    expect(dts.length).toBeGreaterThan(50)
    expect(dts.filter((f) => readFileSync(join(ROOT, f), 'utf8').includes('@internal'))).toEqual([])
    // the PostgreSQL store's pool is @internal in the source, and absent from what ships
    expect(readFileSync(join(ROOT, 'stores/postgres/store.ts'), 'utf8')).toMatch(/@internal \*\/ readonly pool/)
    expect(readFileSync(join(ROOT, 'dist/stores/postgres/store.d.ts'), 'utf8')).not.toMatch(/readonly pool:/)
  })

  it('issue 37.7: fast-check and cli-progress are optional peers; the root export, every subpath but turnlog/testing, and the CLI\'s start never load them', () => {
    const pkgFull = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Pkg & { peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }> }
    for (const name of ['fast-check', 'cli-progress']) {
      expect(Object.keys(pkg.dependencies)).not.toContain(name)
      expect(pkgFull.peerDependencies[name], name).toBeDefined()
      expect(pkgFull.peerDependenciesMeta[name]?.optional, name).toBe(true)
    }
    // the static import closure (what `import` loads before any code runs; dynamic imports are on demand)
    const closure = (entry: string): { modules: Set<string>; bare: Set<string> } => {
      const modules = new Set<string>()
      const bare = new Set<string>()
      const queue = [entry]
      while (queue.length > 0) {
        const f = queue.pop()!
        if (modules.has(f)) continue
        modules.add(f)
        const text = readFileSync(join(ROOT, f), 'utf8')
        for (const m of text.matchAll(/(?:^|[;}\s])(?:import|export)\b[^'"();]*?from\s*['"]([^'"]+)['"]|(?:^|[;}\s])import\s*['"]([^'"]+)['"]/gm)) {
          const spec = (m[1] ?? m[2])!
          if (spec.startsWith('.')) queue.push(join(f, '..', spec))
          else bare.add(spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/'))
        }
      }
      return { modules, bare }
    }
    const root = closure('dist/index.js')
    expect(root.modules.size).toBeGreaterThan(20)
    expect(root.bare).toContain('xstate') // the walk follows the imports
    const entries = [...Object.entries(pkg.exports).filter(([k]) => k !== './testing').map(([, e]) => e.default.replace(/^\.\//, '')), 'dist/cli/main.js']
    const loaded = entries.flatMap((e) => [...closure(e).bare].filter((b) => b === 'fast-check' || b === 'cli-progress').map((b) => `${e} → ${b}`))
    expect(loaded).toEqual([])
    // turnlog/testing does need fast-check (hence the peer)
    expect([...closure(pkg.exports['./testing']!.default.replace(/^\.\//, '')).bare]).toContain('fast-check')
  })

  it('issue 37.7: an app without fast-check and cli-progress imports the root and every subpath but turnlog/testing, and runs the CLI; turnlog fuzz names what to install', () => {
    const { dir, cleanup } = tempDir()
    try {
      execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, stdio: 'pipe' })
      const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!
      const app = join(dir, 'app')
      mkdirSync(join(app, 'node_modules'), { recursive: true })
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'embedding-app', private: true, type: 'module' }))
      execFileSync('tar', ['-xzf', join(dir, tarball), '-C', join(app, 'node_modules')])
      renameSync(join(app, 'node_modules', 'package'), join(app, 'node_modules', 'turnlog'))
      // the package's own dependencies only (linked from this repository): no optional peer
      for (const name of Object.keys(pkg.dependencies)) {
        const to = join(app, 'node_modules', name)
        mkdirSync(dirname(to), { recursive: true })
        symlinkSync(join(ROOT, 'node_modules', name), to)
      }
      const subpaths = Object.keys(pkg.exports).filter((k) => !['./testing', './stores/postgres', './models/ai-sdk', './otel'].includes(k))
      const script = `for (const s of ${JSON.stringify(subpaths.map((k) => (k === '.' ? 'turnlog' : `turnlog/${k.slice(2)}`)))}) await import(s);
        const { createAgent, scriptedModel } = await import('turnlog');
        const a = createAgent({ model: scriptedModel([{ text: 'hi' }]) }); a.followup('x'); await a.whenIdle(); console.log('ran', a.events.length > 0)`
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' })
      expect(out.trim()).toBe('ran true')
      const bin = join(app, 'node_modules', 'turnlog', 'dist', 'cli', 'main.js')
      const verify = spawnSync(process.execPath, [bin, 'verify', join(app, 'node_modules', 'turnlog', 'examples', 'weather.jsonl')], { cwd: app, encoding: 'utf8' })
      expect(verify.status, verify.stderr).toBe(0)
      const fuzz = spawnSync(process.execPath, [bin, 'fuzz', '--runs', '1'], { cwd: app, encoding: 'utf8' })
      expect(fuzz.status).toBe(2)
      expect(fuzz.stderr).toMatch(/MISSING_DEPENDENCY/)
      expect(fuzz.stderr).toMatch(/npm install -D fast-check/)
    } finally {
      cleanup()
    }
  }, 180_000)

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
