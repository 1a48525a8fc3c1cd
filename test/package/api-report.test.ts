/**
 * The API report (issue 37 item 6): every subpath's exported names and declared signatures are
 * checked in under api/ (one file per package.json export). A change to the public surface fails
 * here until the report is regenerated with `npm run api:report` and the diff reviewed with the
 * change. Also: the root export is small on purpose (docs/decisions/public-api.md), and every
 * method of the root's interfaces and classes says what it does.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { apiReports, entries, type Report } from '../../scripts/api-report.js'
import { ROOT } from '../cli/helpers.js'

let reports = new Map<string, Report>()
beforeAll(() => {
  reports = apiReports(ROOT)
}, 300_000)

describe('API report (issue 37 item 6)', () => {
  it('one checked-in report per subpath export, each equal to the code (npm run api:report)', () => {
    const dir = join(ROOT, 'api')
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.api.md')).sort() : []
    expect(files).toEqual([...reports.keys()].map((n) => `${n}.api.md`).sort())
    const stale = [...reports].filter(([name, r]) => readFileSync(join(dir, `${name}.api.md`), 'utf8') !== r.text).map(([name]) => name)
    expect(stale, 'the public surface changed: run `npm run api:report` and review api/').toEqual([])
  })

  it('the report sees a changed signature and an @internal member (the comparison is not vacuous)', () => {
    const root = reports.get('turnlog')!.text
    expect(root).toMatch(/^function createAgent\(options: AgentOptions\): Agent$/m)
    expect(root).toMatch(/^  dispose\(\): Promise<void>$/m)
    // the PostgreSQL store's @internal members (its pool, its registry) are not surface
    const pg = reports.get('turnlog-stores-postgres')!.text
    expect(pg).toMatch(/^class PostgresStore/m)
    expect(pg).not.toMatch(/readonly pool:/)
  })

  it('the root is small on purpose: what an app embedding an agent needs, runtime names listed here', () => {
    const root = reports.get('turnlog')!.text
    const runtime = [...root.matchAll(/^(?:function|const|class) (\w+)/gm)].map((m) => m[1]!)
    expect([...new Set(runtime)].sort()).toEqual([
      'ERROR_CODES', 'FAILURE_CODES', 'ModelError', 'TOOL_ERROR_CODES', 'TurnlogError', 'askUser', 'createAgent', 'decideInStore', 'defineSubagent',
      'defineTool', 'isValidSessionId', 'jsonSchema', 'memoryStore', 'openaiCompatibleModel', 'scriptedModel',
    ].sort())
    const names = new Set([...root.matchAll(/^(?:type-only )?(?:function|const|class|interface|type|enum) (\w+)/gm)].map((m) => m[1]!))
    expect(names.size).toBeLessThanOrEqual(90)
  })

  it('every method of the root export\'s interfaces and classes has a doc comment', () => {
    expect(reports.get('turnlog')!.undocumented).toEqual([])
  })

  it('every package.json export has a report (entries() reads them all)', () => {
    expect(entries(ROOT).map((e) => e.subpath)).toContain('./replay')
    expect(reports.size).toBe(entries(ROOT).length)
  })
})
