// Issue 15 §1 ("Files a person can hold in their head"): no import circle among the source files,
// and no import against the layer direction of the design (docs/ARCHITECTURE.md):
// events <- machines, reducers <- agent, tools, models, compaction <- stores, replay <- testing,
// cli; nothing imports cli. Type-only imports count too: a circle of types is still a circle a
// reader has to hold in their head.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { directionError, findCycles, moduleGraph, sourceFiles, type Edge } from './module-graph.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

/**
 * The only imports allowed against the direction, each type-only (erased from the emitted JS, so
 * the agent never loads a store's code). The agent's options name the store contract
 * (`AgentOptions.store: LogStore`, `storeWriter: LogWriter`), whose home is the code-free
 * stores/types.ts, next to the stores that implement it.
 */
const TYPE_ONLY_EXCEPTIONS = [
  'agent/persistence.ts -> stores/types.ts',
  'agent/types.ts -> stores/types.ts',
]

const show = (e: Edge): string => `${e.from}:${e.line} -> ${e.to}${e.typeOnly ? ' (type only)' : ''}`

describe('the import graph of the sources (issue 15 §1)', () => {
  const graph = moduleGraph(root)

  it('reads every source file, and every relative import names a file', () => {
    expect(graph.files).toContain('index.ts')
    expect(graph.files).toContain('agent/agent.ts')
    expect(graph.files.some((f) => f.endsWith('.test.ts'))).toBe(false)
    expect(graph.edges.length).toBeGreaterThan(graph.files.length)
    expect(graph.unresolved.map(show)).toEqual([])
  })

  it('has no import circle (type-only imports included)', () => {
    const cycles = findCycles(graph.files, graph.edges).map((c) => c.join(' -> '))
    expect(cycles).toEqual([])
  })

  it('has no import against the layer direction, and nothing imports cli', () => {
    const wrong = graph.edges
      .filter((e) => directionError(e) !== null)
      .filter((e) => !(e.typeOnly && TYPE_ONLY_EXCEPTIONS.includes(`${e.from} -> ${e.to}`)))
      .map((e) => `${show(e)}: ${directionError(e)}`)
    expect(wrong).toEqual([])
  })

  it('every listed exception still exists and is type-only (the list never goes stale)', () => {
    for (const x of TYPE_ONLY_EXCEPTIONS) {
      const found = graph.edges.filter((e) => `${e.from} -> ${e.to}` === x)
      expect(found.length, x).toBeGreaterThan(0)
      expect(found.every((e) => e.typeOnly), x).toBe(true)
    }
  })
})

describe('the checker itself (it can fail)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'turnlog-imports-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const write = (path: string, text: string): void => {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }

  it('finds a circle made of any import form, and an import against the direction', () => {
    // a circle through an `import type`, an `export … from`, a dynamic import() and an import('…') type
    write('index.ts', "export { a } from './agent/a.js'\n")
    write('agent/a.ts', "import type { B } from './b.js'\nexport const a = 1\nexport type A = B\n")
    write('agent/b.ts', "export * from './c.js'\nexport type B = number\n")
    write('agent/c.ts', "export const c = () => import('./d.js')\n")
    write('agent/d.ts', "export type D = import('./a.js').A\nimport { cliMain } from '../cli/main.js'\nvoid cliMain\n")
    write('cli/main.ts', "export const cliMain = 1\n")
    write('events/e.ts', "import { a } from '../agent/a.js'\nexport const e = a\n")
    write('events/self.ts', "import './self.js'\n")
    write('agent/x.test.ts', "import '../cli/main.js'\n")
    const files = sourceFiles(dir)
    expect(files).not.toContain('agent/x.test.ts')
    const g = moduleGraph(dir, files)
    expect(g.unresolved).toEqual([])
    const cycles = findCycles(g.files, g.edges)
    expect(cycles).toHaveLength(2)
    expect(cycles).toContainEqual(['agent/a.ts', 'agent/b.ts', 'agent/c.ts', 'agent/d.ts', 'agent/a.ts'])
    expect(cycles).toContainEqual(['events/self.ts', 'events/self.ts'])
    const typeOnly = g.edges.filter((e) => e.typeOnly).map((e) => `${e.from} -> ${e.to}`)
    expect(typeOnly.sort()).toEqual(['agent/a.ts -> agent/b.ts', 'agent/d.ts -> agent/a.ts'])
    const wrong = g.edges.filter((e) => directionError(e) !== null).map((e) => `${e.from} -> ${e.to}`)
    expect(wrong.sort()).toEqual(['agent/d.ts -> cli/main.ts', 'events/e.ts -> agent/a.ts'])
  })

  it('allows imports down and across a layer, and the root index above every folder but cli', () => {
    const edge = (from: string, to: string): Edge => ({ from, to, typeOnly: false, line: 1 })
    expect(directionError(edge('stores/jsonl/store.ts', 'events/jsonl.ts'))).toBeNull()
    expect(directionError(edge('agent/agent.ts', 'tools/scheduler.ts'))).toBeNull()
    expect(directionError(edge('cli/main.ts', 'testing/index.ts'))).toBeNull()
    expect(directionError(edge('index.ts', 'stores/index.ts'))).toBeNull()
    expect(directionError(edge('machines/turn.ts', 'agent/types.ts'))).toMatch(/lower layer/)
    expect(directionError(edge('replay/fork.ts', 'testing/index.ts'))).toMatch(/lower layer/)
    expect(directionError(edge('index.ts', 'cli/main.ts'))).toBe('nothing imports cli')
    expect(directionError(edge('tools/x.ts', 'inspector/server.ts'))).toMatch(/not a source folder/)
    // issue 24 item 9: workers run agents above the store and replay; a store never runs them
    expect(directionError(edge('workers/session-run.ts', 'replay/resume.ts'))).toBeNull()
    expect(directionError(edge('workers/pool.ts', 'stores/postgres/store.ts'))).toBeNull()
    expect(directionError(edge('http/handler.ts', 'workers/pool.ts'))).toBeNull()
    expect(directionError(edge('stores/postgres/index.ts', 'workers/pool.ts'))).toMatch(/lower layer/)
    expect(directionError(edge('replay/resume.ts', 'workers/session-run.ts'))).toMatch(/lower layer/)
  })
})
