/**
 * Which test files need something outside the test's own Node process, read from their text and
 * the text of the test helpers they import (relative imports inside test/, followed transitively).
 * Used by vitest.config.ts (the suite's projects) and vitest.lib.config.ts (CI's library lane), so a
 * new test file is placed by what it does, wherever it lives, with no list to keep up to date.
 *
 * - `external`: starts a child process (`node:child_process`), needs the PostgreSQL server
 *   (`pgUrl`, `TURNLOG_PG_URL`) or drives a browser (`playwright`). The library itself starts no
 *   process (test/architecture checks its imports), so its own tests are all the other files.
 * - `needsIsolation`: mocks modules, spies, fakes timers, or writes process-wide state (env,
 *   globals, cwd, process listeners, V8 flags), or measures the process's heap (what files before
 *   it left in a shared worker would count as its own): it gets a fresh module graph (vitest's
 *   `isolate`).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'

const EXTERNAL = /node:child_process|from ['"]child_process['"]|inject\(['"]pgUrl['"]\)|TURNLOG_PG_URL|playwright/

const NEEDS_ISOLATION = /vi\.(mock|doMock|unmock|spyOn|stub\w*|useFakeTimers|resetModules|hoisted)\b|configureGlobal|process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|globalThis\.\w+\s*=[^=]|process\.(chdir|on|once)\(|setFlagsFromString\(|memoryUsage\(\)\.heapUsed/

/** Every `*.test.ts` under `dir`, as paths relative to the working directory. */
export function testFiles(dir: string): string[] {
  const out: string[] = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...testFiles(p))
    else if (e.name.endsWith('.test.ts')) out.push(p)
  }
  return out.sort()
}

const IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g

/** The file's own text and that of the test-side modules it imports (inside `root`/test). */
function textWithHelpers(file: string, root: string, seen = new Set<string>()): string {
  if (seen.has(file)) return ''
  seen.add(file)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return ''
  }
  let all = text
  const testDir = resolve(root, 'test')
  for (const m of text.matchAll(IMPORT)) {
    const target = resolve(dirname(file), m[1]!)
    if (!target.startsWith(testDir + '/')) continue // the library's own modules start no process
    const candidates = [target, target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts'), `${target}.ts`]
    const hit = candidates.find((c) => existsSync(c) && !c.endsWith('/'))
    if (hit) all += '\n' + textWithHelpers(hit, root, seen)
  }
  return all
}

export interface TestKind {
  file: string
  external: boolean
  needsIsolation: boolean
}

/** The kind of each test file under `root`/test (paths relative to `root`). */
export function testKinds(root = process.cwd()): TestKind[] {
  return testFiles(join(root, 'test')).map((abs) => {
    const own = readFileSync(abs, 'utf8')
    return {
      file: abs.slice(root.length + 1),
      external: EXTERNAL.test(textWithHelpers(abs, root)),
      needsIsolation: NEEDS_ISOLATION.test(own),
    }
  })
}
