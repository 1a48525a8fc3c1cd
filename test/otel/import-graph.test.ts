/**
 * docs/spec/api.md "Package": importing `turnlog` never loads `@ai-sdk/*` or `@opentelemetry/*` (optional
 * peers of their own subpaths). Walks the static import graph of the source from index.ts (and
 * from cli/main.ts: the CLI's `export` must stay free of them too).
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '..', '..')

function graph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>()
  const packages = new Set<string>()
  const todo = [resolve(ROOT, entry)]
  while (todo.length > 0) {
    const file = todo.pop()!
    if (files.has(file)) continue
    files.add(file)
    const src = readFileSync(file, 'utf8')
    // value imports and re-exports (type-only ones are erased)
    for (const m of src.matchAll(/^(?:import|export)\s+(?!type\b)[^'"]*?from\s+'([^']+)'|^import\s+'([^']+)'/gm)) {
      const spec = m[1] ?? m[2]!
      if (spec.startsWith('.')) {
        const ts = resolve(dirname(file), spec.replace(/\.js$/, '.ts'))
        if (existsSync(ts)) todo.push(ts)
      } else packages.add(spec)
    }
  }
  return { files, packages }
}

describe('optional integrations stay optional', () => {
  for (const entry of ['index.ts', 'cli/main.ts']) {
    it(`${entry} reaches no @ai-sdk/* or @opentelemetry/* package and no models/ai-sdk or otel/tracer module`, () => {
      const { files, packages } = graph(entry)
      expect([...packages].filter((p) => p.startsWith('@ai-sdk/') || p.startsWith('@opentelemetry/'))).toEqual([])
      expect([...files].filter((f) => f.includes(join('models', 'ai-sdk')) || f.endsWith(join('otel', 'tracer.ts')))).toEqual([])
    })
  }

  it('the subpaths do load their peers (the walk sees value imports)', () => {
    expect(graph('otel/index.ts').packages.has('@opentelemetry/api')).toBe(true)
  })
})
