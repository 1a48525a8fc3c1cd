/**
 * `npm run mutate:summary`: the per-file table of mutation.json from the Stryker JSON reports kept
 * in mutation/reports/ (one per per-file run, possibly of a line range; mutants are merged by
 * position, mutator and replacement, the later report winning, since the incremental runs carry
 * earlier results forward) and the hand-judged equivalents of
 * mutation/equivalent.json. Score = killed / (killed + survived + no coverage); the adjusted score
 * leaves the equivalent mutants out of the denominator; `scoreWithHandKilled` also counts the mutants
 * of mutation/hand-killed.json (scored Survived by Stryker, killed by a named test when applied by hand).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

interface Mutant { status: string; location: { start: { line: number; column: number }; end: { line: number; column: number } }; mutatorName: string; replacement?: string }
interface Report { files: Record<string, { mutants: Mutant[]; source?: string }> }
interface Equivalent { line: number; mutator: string; count: number; reason: string }

const root = fileURLToPath(new URL('..', import.meta.url))
const dir = `${root}mutation/reports/`
// The reports are generated (mutation/run.sh), not committed: a fresh clone has none until a run.
if (!existsSync(dir)) {
  console.error('No mutation reports yet: run mutation/run.sh (or `npm run mutate`) first.')
  process.exit(1)
}
const reports = readdirSync(dir).filter((f) => f.endsWith('.json')).sort((a, b) => statSync(dir + a).mtimeMs - statSync(dir + b).mtimeMs)
// Only reports made on the file's current source are merged (positions of an older source would
// count the same mutant twice); a file no report matches keeps its latest report, flagged stale.
const current = (file: string): string | undefined => {
  try {
    return readFileSync(`${root}${file}`, 'utf8')
  } catch {
    return undefined
  }
}
const parsed = reports.map((name) => ({ name, r: JSON.parse(readFileSync(dir + name, 'utf8')) as Report }))
const stale = new Set<string>()
const byFile = new Map<string, { byKey: Map<string, Mutant>; reports: Set<string> }>()
for (const { name, r } of parsed) {
  for (const [file, f] of Object.entries(r.files)) {
    const matching = parsed.some(({ r: o }) => o.files[file]?.source === current(file))
    if (matching ? f.source !== current(file) : parsed.findLast(({ r: o }) => o.files[file] !== undefined)?.name !== name) continue
    if (!matching) stale.add(file)
    const entry = byFile.get(file) ?? { byKey: new Map(), reports: new Set() }
    for (const m of f.mutants) entry.byKey.set(`${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column}:${m.mutatorName}:${m.replacement ?? ''}`, m)
    entry.reports.add(name)
    byFile.set(file, entry)
  }
}
// A whole-file run's report lists every mutant of the file; a report of another file's run may
// carry some of this file's results forward from the incremental file, keyed by positions of an
// older source. So when the newest report on the current source is also the largest, it alone
// gives the file's mutants; otherwise (line-range runs) the reports are merged as above.
for (const [file, e] of byFile) {
  const sizes = parsed.filter(({ r }) => r.files[file]?.source === current(file)).map(({ name, r }) => ({ name, n: r.files[file]!.mutants.length }))
  const newest = sizes.at(-1)
  if (newest === undefined || sizes.some((x) => x.n > newest.n)) continue
  const only = parsed.find(({ name }) => name === newest.name)!.r.files[file]!.mutants
  e.byKey = new Map(only.map((m) => [`${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column}:${m.mutatorName}:${m.replacement ?? ''}`, m]))
  e.reports = new Set([newest.name])
}
const latest = new Map([...byFile].map(([file, e]) => [file, { mutants: [...e.byKey.values()], report: [...e.reports].join(', ') }]))
const equivalent = JSON.parse(readFileSync(`${root}mutation/equivalent.json`, 'utf8')) as Record<string, Equivalent[] | string>
// Mutants Stryker scored Survived that a named test kills when the mutant is applied by hand (static
// mutants: module-level code that vitest's module cache keeps from re-running under the mutant).
interface HandKilled { line: number; mutator: string; count: number; test: string }
const handKilled = JSON.parse(readFileSync(`${root}mutation/hand-killed.json`, 'utf8')) as Record<string, HandKilled[] | string>

const files: Record<string, unknown> = {}
for (const [file, { mutants, report }] of [...latest].sort(([a], [b]) => a.localeCompare(b))) {
  const count = (s: string) => mutants.filter((m) => m.status === s).length
  const killed = count('Killed') + count('Timeout')
  const survived = count('Survived')
  const noCoverage = count('NoCoverage')
  // A listed mutant counts only while it is still not killed (same line and mutator), so a list
  // entry that a later test killed can never push a score past what was measured.
  const open = (list: unknown) =>
    Array.isArray(list)
      ? (list as Array<{ line: number; mutator: string; count: number }>).reduce((n, e) => {
          const left = mutants.filter((m) => (m.status === 'Survived' || m.status === 'NoCoverage') && m.location.start.line === e.line && m.mutatorName === e.mutator).length
          return n + Math.min(e.count, left)
        }, 0)
      : 0
  const eq = open(equivalent[file])
  const hand = open(handKilled[file])
  const scored = killed + survived + noCoverage
  files[file] = {
    mutants: mutants.length, killed, survived, noCoverage, equivalent: eq, handKilled: hand,
    score: Math.round((killed / scored) * 1000) / 10,
    scoreWithoutEquivalent: Math.round((killed / (scored - eq)) * 1000) / 10,
    scoreWithHandKilled: Math.round(((killed + hand) / (scored - eq)) * 1000) / 10,
    report,
    ...(stale.has(file) ? { stale: 'measured on an older version of the file' } : {}),
  }
}
// Per-folder totals over the files measured (a folder's files that were never run are listed as
// unmeasured, from the mutate globs of stryker.config.mjs, so a total never hides them).
const MUTATED_FOLDERS = ['machines', 'reducers', 'events/invariants', 'tools', 'agent']
type Row = { mutants: number; killed: number; survived: number; noCoverage: number; equivalent: number; handKilled: number }
const folders: Record<string, unknown> = {}
for (const folder of MUTATED_FOLDERS) {
  const rows = Object.entries(files).filter(([f]) => f.startsWith(`${folder}/`) && !f.slice(folder.length + 1).includes('/')) as Array<[string, Row]>
  const sum = (k: keyof Row) => rows.reduce((n, [, r]) => n + r[k], 0)
  const present = new Set(rows.map(([f]) => f))
  const unmeasured = readdirSync(`${root}${folder}`)
    .filter((f) => f.endsWith('.ts') && f !== 'index.ts' && !present.has(`${folder}/${f}`))
    .map((f) => `${folder}/${f}`)
  const killed = sum('killed')
  const scored = killed + sum('survived') + sum('noCoverage')
  const eq = sum('equivalent')
  const hand = sum('handKilled')
  folders[folder] = {
    files: rows.length, mutants: sum('mutants'), killed, survived: sum('survived'), noCoverage: sum('noCoverage'), equivalent: eq, handKilled: hand,
    score: scored ? Math.round((killed / scored) * 1000) / 10 : null,
    scoreWithoutEquivalent: scored - eq ? Math.round((killed / (scored - eq)) * 1000) / 10 : null,
    scoreWithHandKilled: scored - eq ? Math.round(((killed + hand) / (scored - eq)) * 1000) / 10 : null,
    unmeasured,
  }
}
const out = {
  tool: 'StrykerJS 9.6.1, @stryker-mutator/vitest-runner 9.6.1, perTest coverage, TURNLOG_FC_RUNS=30',
  note: 'Per-file runs with a restricted test set (see the notes); not a full pass over every folder. Folder totals cover the measured files only; "unmeasured" lists the others.',
  files,
  folders,
  equivalent,
  handKilled,
}
writeFileSync(`${root}mutation.json`, JSON.stringify(out, null, 2) + '\n')
console.log(JSON.stringify({ files, folders }, null, 2))
