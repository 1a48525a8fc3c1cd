/**
 * Every file the README, the docs, the code's comments (which become the shipped .d.ts) and the
 * tests cite is in the repository, and every file the shipped code or shipped docs cite is in the
 * package too: a newcomer who reads "docs/spec/lifecycle.md §9" can open it. Nothing cites a
 * design folder outside the repository.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')

function tracked(): string[] {
  // tracked and not-yet-committed files alike: a new doc must count before its first commit
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  return out.split('\n').filter((f) => f.length > 0 && existsSync(join(ROOT, f)))
}

/** The text files whose citations must resolve: README, docs (not working notes), code, tests. */
function citingFiles(all: readonly string[]): string[] {
  return all.filter((f) =>
    !f.startsWith('node_modules/') && !f.startsWith('dist/') && !f.startsWith('docs/notes/') && !f.startsWith('mutation/') &&
    (/\.(ts|tsx|mts|mjs|js)$/.test(f) || f.endsWith('.md')) &&
    // vendored recorded data keeps its source's own words; this file's samples are not citations
    !f.startsWith('test/fixtures/streams/') && f !== 'test/spec/citations.test.ts')
}

/** `docs/spec/lifecycle.md`, `bench/README.md`, `events.md`: path-like tokens naming a .md file. */
const MD = /(?<![\w./-])((?:\.{1,2}\/)?[\w][\w./-]*\.md)(?![\w-])/g
/** Documents of other projects, cited with the project's name ("Durable Streams PROTOCOL.md"). */
const EXTERNAL = new Set(['PROTOCOL.md'])
const OUTSIDE = /shared\/design|\.\.\/shared\b|\/work\/shared/g

/** Where a cited path lands: relative to the citing file (markdown links) or to the repository. */
function resolves(citing: string, cited: string, files: ReadonlySet<string>): string | null {
  const candidates = [normalize(join(dirname(citing), cited)), normalize(cited)]
  for (const c of candidates) if (files.has(c) || existsSync(join(ROOT, c))) return c.split('\\').join('/')
  return null
}

function packageFiles(): string[] {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files
}

/** Whether the package's `files` list ships `path` (its entries are folders, files or simple globs). */
function ships(path: string, patterns: readonly string[]): boolean {
  let shipped = false
  for (const p of patterns) {
    const neg = p.startsWith('!')
    const pat = neg ? p.slice(1) : p
    const re = new RegExp('^' + pat.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*') + '(/|$)')
    if (re.test(path)) shipped = !neg
  }
  return shipped || path === 'README.md' || path === 'LICENSE' || path === 'package.json'
}

/** Source folders compiled into the package (their comments reach the shipped .d.ts). */

describe('citations point into the repository', () => {
  const all = tracked()
  const set = new Set(all)
  const files = citingFiles(all)

  it('finds the files to check', () => {
    expect(files.length).toBeGreaterThan(300)
    expect(files).toContain('README.md')
  })

  it('no file cites the design folder outside the repository', () => {
    const hits = files.flatMap((f) => [...readFileSync(join(ROOT, f), 'utf8').matchAll(OUTSIDE)].map((m) => `${f}: ${m[0]}`))
    expect(hits).toEqual([])
  })

  it('every .md file cited by the README, docs, code and tests exists in the repository', () => {
    const missing: string[] = []
    for (const f of files) {
      const text = readFileSync(join(ROOT, f), 'utf8')
      for (const m of text.matchAll(MD)) {
        const cited = m[1]!
        if (!EXTERNAL.has(cited) && resolves(f, cited, set) === null) missing.push(`${f}: ${cited}`)
      }
    }
    expect(missing).toEqual([])
  })

  // The README and docs/ARCHITECTURE.md are also read on the repository's page, where everything
  // they cite is at hand; the .d.ts (from the code's comments) and the spec are read in the package.
  // A source file is the repository's (a maintainer reads it there): its comments may cite
  // docs/decisions/. What ships of it is the .d.ts (the next test) and JS whose comments the build
  // strips (scripts/strip-comments.mjs). The spec ships as written, so it cites only what ships.
  it('every file cited by the spec is in the repository (the spec ships in the repository only)', () => {
    const patterns = packageFiles()
    const notShipped: string[] = []
    const shippedCiting = files.filter((f) => /^docs\/spec\/[^/]+\.md$/.test(f))
    for (const f of shippedCiting) {
      if (f.endsWith('.test.ts')) continue
      const text = readFileSync(join(ROOT, f), 'utf8')
      for (const m of text.matchAll(MD)) {
        const where = resolves(f, m[1]!, set)
        if (where === null) notShipped.push(`${f}: ${m[1]!}`)
      }
    }
    expect([...new Set(notShipped)]).toEqual([])
  })

  // The spec (docs/spec/) is the repository's public reference: the .d.ts may point into it (issue
  // 37.1: every reference points into the repository) although the package leaves it out for its
  // size budget; anything else a .d.ts cites must ship.
  it('every .md file the built .d.ts cite ships in the package or is a page of the spec (dist as `npm run build` leaves it)', () => {
    if (!existsSync(join(ROOT, 'dist', 'index.d.ts'))) throw new Error('dist/ is not built: npm run build (npm ci builds it)')
    const patterns = packageFiles()
    const dts = readdirSync(join(ROOT, 'dist'), { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile() && d.name.endsWith('.d.ts'))
      .map((d) => relative(ROOT, join(d.parentPath, d.name)).split('\\').join('/'))
      .filter((f) => ships(f, patterns))
    expect(dts.length).toBeGreaterThan(100)
    const bad: string[] = []
    for (const f of dts) {
      for (const m of readFileSync(join(ROOT, f), 'utf8').matchAll(MD)) {
        const cited = m[1]!
        if (EXTERNAL.has(cited)) continue
        const where = resolves(f, cited, set)
        if (where === null || !(ships(where, patterns) || /^docs\/spec\/[^/]+\.md$/.test(where))) bad.push(`${f}: ${cited}`)
      }
    }
    expect([...new Set(bad)]).toEqual([])
  })

  it('the matcher sees the citations it is meant to see (a citation of a missing file is caught)', () => {
    const sample = 'see docs/spec/lifecycle.md §9, events.md "Types" and [x](../spec/api.md)'
    expect([...sample.matchAll(MD)].map((m) => m[1])).toEqual(['docs/spec/lifecycle.md', 'events.md', '../spec/api.md'])
    expect(resolves('agent/agent.ts', 'lifecycle.md', set)).toBeNull()
    expect(resolves('docs/spec/README.md', 'lifecycle.md', set)).toBe('docs/spec/lifecycle.md')
    expect(resolves('agent/agent.ts', 'docs/spec/lifecycle.md', set)).toBe('docs/spec/lifecycle.md')
    expect(relative(ROOT, join(ROOT, 'README.md'))).toBe('README.md')
  })
})
