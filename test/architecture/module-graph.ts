/**
 * The source files' import graph, read with the TypeScript compiler's parser (no type check, so it
 * takes about a second): every `import`, `export … from`, `import()` call and `import('…')` type
 * with a relative specifier, resolved to a source file. Used by imports.test.ts to check that no
 * import circle exists and that no import runs against the layer direction.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, posix } from 'node:path'
import ts from 'typescript'

/** The folders holding the library's sources (design README "The shape of the code"), and index.ts. */
export const SOURCE_FOLDERS = [
  'agent', 'cli', 'compaction', 'evals', 'events', 'http', 'import', 'machines', 'models', 'otel', 'reducers', 'replay', 'stores', 'testing', 'tools', 'workers',
] as const

export interface Edge {
  from: string
  to: string
  /** `import type`, `export type … from` or an `import('…')` type: erased from the emitted JS. */
  typeOnly: boolean
  line: number
}

export interface ModuleGraph {
  files: string[]
  edges: Edge[]
  /** Relative specifiers that name no file (a broken import, or one that leaves the source tree). */
  unresolved: Edge[]
}

/** Every non-test `.ts` file under the source folders, plus the root index.ts (paths relative to root, with '/'). */
export function sourceFiles(root: string): string[] {
  const out = existsSync(join(root, 'index.ts')) ? ['index.ts'] : []
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir)).sort()) {
      const rel = posix.join(dir, name)
      if (statSync(join(root, rel)).isDirectory()) walk(rel)
      else if (rel.endsWith('.ts') && !rel.endsWith('.test.ts') && !rel.endsWith('.d.ts')) out.push(rel)
    }
  }
  for (const d of SOURCE_FOLDERS) if (existsSync(join(root, d))) walk(d)
  return out
}

/** Reads the import graph of `files` (relative to `root`). */
export function moduleGraph(root: string, files: readonly string[] = sourceFiles(root)): ModuleGraph {
  const known = new Set(files)
  const edges: Edge[] = []
  const unresolved: Edge[] = []
  for (const from of files) {
    const sf = ts.createSourceFile(from, readFileSync(join(root, from), 'utf8'), ts.ScriptTarget.Latest, true)
    const add = (spec: ts.Expression | undefined, typeOnly: boolean, node: ts.Node): void => {
      if (!spec || !ts.isStringLiteralLike(spec) || !spec.text.startsWith('.')) return
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1
      const to = resolveSpecifier(root, from, spec.text, known)
      if (to === null) unresolved.push({ from, to: posix.join(posix.dirname(from), spec.text), typeOnly, line })
      else edges.push({ from, to, typeOnly, line })
    }
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node)) {
        const clause = node.importClause
        // `import { type A, type B } from` is erased too when every named binding is a type
        const named = clause?.namedBindings
        const allTypes = clause !== undefined && clause.name === undefined && named !== undefined &&
          ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)
        add(node.moduleSpecifier, clause?.isTypeOnly === true || allTypes, node)
      } else if (ts.isExportDeclaration(node)) {
        const named = node.exportClause
        const allTypes = named !== undefined && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)
        add(node.moduleSpecifier, node.isTypeOnly || allTypes, node)
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        add(node.arguments[0], false, node)
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
        add(node.argument.literal as ts.Expression, true, node)
      }
      ts.forEachChild(node, visit)
    }
    visit(sf)
  }
  return { files: [...files], edges, unresolved }
}

/** `./x.js` → `x.ts` (NodeNext style), `./x` → `x.ts` or `x/index.ts`; null when no source file matches. */
function resolveSpecifier(root: string, from: string, spec: string, known: ReadonlySet<string>): string | null {
  const base = posix.normalize(posix.join(posix.dirname(from), spec))
  const candidates = base.endsWith('.js') ? [base.slice(0, -3) + '.ts'] : base.endsWith('.ts') ? [base] : [base + '.ts', posix.join(base, 'index.ts')]
  for (const c of candidates) if (known.has(c)) return c
  // a file outside the scanned set (for example inspector/): keep its path when it exists
  for (const c of candidates) if (existsSync(join(root, c)) && statSync(join(root, c)).isFile()) return c
  return null
}

/**
 * The import circles: each strongly connected component of more than one file (Tarjan), and
 * each file that imports itself. Each circle is returned as one concrete path a → b → … → a.
 */
export function findCycles(files: readonly string[], edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>()
  for (const f of files) next.set(f, [])
  for (const e of edges) if (next.has(e.to)) next.get(e.from)?.push(e.to)
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const connect = (v: string): void => {
    index.set(v, counter)
    low.set(v, counter)
    counter++
    stack.push(v)
    onStack.add(v)
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        connect(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        c.push(w)
      } while (w !== v)
      if (c.length > 1 || next.get(v)!.includes(v)) components.push(c)
    }
  }
  for (const f of files) if (!index.has(f)) connect(f)
  return components.map((c) => cyclePath(c, next))
}

/** One circle through the component's first file, by breadth-first search inside the component. */
function cyclePath(component: string[], next: Map<string, string[]>): string[] {
  const inside = new Set(component)
  const start = [...component].sort()[0]!
  const parent = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const v = queue.shift()!
    for (const w of next.get(v)!) {
      if (!inside.has(w)) continue
      if (w === start) {
        const path = [v]
        while (path[0] !== start) path.unshift(parent.get(path[0]!)!)
        return [...path, start]
      }
      if (!parent.has(w)) {
        parent.set(w, v)
        queue.push(w)
      }
    }
  }
  return [...component, component[0]!]
}

/**
 * The layers, lowest first (docs/ARCHITECTURE.md §2, docs/decisions/module-layers.md): a file may import
 * its own folder, a folder of its own layer, or a lower layer. `otel` (not in the design's
 * direction) sits with stores and replay: it reads the log and the agent's types, and cli uses it.
 * `workers` (issue 24 item 9) run agents: they resume sessions (replay) from the postgres store,
 * so they sit above both, in a layer of their own; the interfaces (cli, http) may use them.
 * The root index.ts is the package's face: above every folder but cli.
 */
export const LAYERS: ReadonlyArray<readonly string[]> = [
  ['events'],
  ['machines', 'reducers'],
  ['agent', 'tools', 'models', 'compaction'],
  // import/ turns other formats into logs: it reads only the vocabulary, and cli uses it
  ['stores', 'replay', 'otel', 'import'],
  ['workers'],
  ['testing', 'evals', 'cli', 'http'],
  ['index.ts'],
]

/** The top folder of a path (`index.ts` for the root index). */
export function topFolder(path: string): string {
  const i = path.indexOf('/')
  return i < 0 ? path : path.slice(0, i)
}

function layerOf(folder: string): number | undefined {
  const i = LAYERS.findIndex((l) => l.includes(folder))
  return i < 0 ? undefined : i
}

/** Why `edge` runs against the direction, or null when it is allowed. */
export function directionError(edge: Edge): string | null {
  const a = topFolder(edge.from)
  const b = topFolder(edge.to)
  if (a === b) return null
  if (b === 'cli') return 'nothing imports cli'
  const la = layerOf(a)
  const lb = layerOf(b)
  if (la === undefined) return `${a}/ is in no layer`
  if (lb === undefined) return `${b}/ is not a source folder of the library`
  if (lb > la) return `${a}/ (layer ${la}) imports ${b}/ (layer ${lb}): a lower layer never imports a higher one`
  return null
}
