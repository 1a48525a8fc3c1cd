/**
 * docs/spec/api.md "Package": importing `turnlog` never loads `pg` (an optional peer dependency of
 * `turnlog/stores/postgres` only). Checked on the sources: every module reachable from index.ts
 * (and from the CLI, which imports the postgres store only with a dynamic import for a
 * postgres:// URL) through static value imports, none of which is `pg` or under stores/postgres.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../child-lib.js'

function reachable(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>()
  const todo = [resolve(ROOT, entry)]
  while (todo.length) {
    const file = todo.pop()!
    if (seen.has(file)) continue
    const text = readFileSync(file, 'utf8')
    const specs: string[] = []
    // static imports and re-exports, not `import type` / `export type` (erased) and not import()
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)(?:[^'"`;]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) specs.push(m[1]!)
    seen.set(file, specs)
    for (const s of specs) if (s.startsWith('.')) todo.push(resolve(dirname(file), s.replace(/\.js$/, '.ts')))
  }
  return seen
}

describe('importing turnlog never loads pg', () => {
  for (const entry of ['index.ts', 'cli/main.ts']) {
    it(`${entry}: no module it loads statically imports pg, stores/postgres or workers`, () => {
      const graph = reachable(entry)
      expect(graph.size).toBeGreaterThan(10)
      const bad: string[] = []
      for (const [file, specs] of graph) {
        const rel = relative(ROOT, file)
        if (rel.startsWith(join('stores', 'postgres')) || rel.startsWith(`workers${sep}`)) bad.push(rel)
        for (const s of specs) if (s === 'pg' || s.startsWith('pg/')) bad.push(`${rel} imports ${s}`)
      }
      expect(bad).toEqual([])
    })
  }

  it('turnlog/stores/postgres does load pg (the check above can see it)', () => {
    for (const entry of ['stores/postgres/index.ts', 'workers/index.ts']) {
      const graph = reachable(entry)
      expect([...graph.values()].some((specs) => specs.includes('pg')), entry).toBe(true)
    }
  })
})
