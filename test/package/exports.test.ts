/**
 * package.json "exports" (docs/spec/api.md "Package"): an export that names a missing file is a defect
 * (ERR_MODULE_NOT_FOUND for a consumer). Every export's `default` and `types` must map to a source
 * module of this repository (`./dist/X.js` and `./dist/X.d.ts` are built from `X.ts`).
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
// the type names of `turnlog/stores/postgres` (its entry, workers/index.ts): `npm run typecheck`
// fails if one is gone (an import of a missing name is an error even when unused)
import type { MessageLike, PostgresStoreOptions, SendOptions, SessionRow, WorkerAgentOptions, WorkerOptions, Workers } from '../../workers/index.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { exports: Record<string, { types: string; default: string }> }

function source(distPath: string): string {
  const m = /^\.\/dist\/(.+?)(\.d\.ts|\.js)$/.exec(distPath)
  if (!m) throw new Error(`not a dist path: ${distPath}`)
  return `${root}${m[1]}.ts`
}

describe('package exports', () => {
  it('every subpath export names a module that exists (./stores/postgres only with its source)', () => {
    const missing: string[] = []
    for (const [sub, target] of Object.entries(pkg.exports)) {
      for (const file of [target.default, target.types]) if (!existsSync(source(file))) missing.push(`${sub} -> ${file}`)
    }
    expect(missing).toEqual([])
    expect(Object.keys(pkg.exports)).toContain('./stores/sqlite')
  })

  it('issue 24 item 9: ./stores/postgres still exports the store and the workers after the workers moved to workers/', async () => {
    const entry = pkg.exports['./stores/postgres']!
    expect(source(entry.types)).toBe(source(entry.default))
    const mod = (await import(source(entry.default))) as Record<string, unknown>
    // every runtime name the path exported before the move (stores/postgres/index.ts, round 12)
    for (const name of ['postgresStore', 'PostgresStore', 'PgReader', 'PgWriter', 'SCHEMA_VERSION', 'INPUT_CHANNEL', 'runWorkers']) {
      expect(mod[name], name).toBeDefined()
    }
    expect(typeof mod.runWorkers).toBe('function')
  })
})
