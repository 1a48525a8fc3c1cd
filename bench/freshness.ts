/**
 * No stale figure (bench/README.md): every entry of bench/results.json says when, on what and at
 * what load it was measured (`measured`), and an entry older than the last commit that changed
 * the code it measures (the `sources` of its benchmark in bench/run.ts's registry) carries a
 * `stale` note saying so. bench/run.ts sets and clears the notes when it writes the file;
 * test/bench/results-fresh.test.ts fails when a note is missing or untrue.
 */
import { execFileSync } from 'node:child_process'
import { loadavg } from 'node:os'

/** What an entry records about its run. */
export interface Measured {
  /** HEAD when the benchmark ran. */
  commit: string
  /** Whether the measured sources had uncommitted changes then. */
  dirty: boolean
  /** ISO time the benchmark finished. */
  date: string
  /** process.version of the Node that ran it. */
  node: string
  /** os.loadavg() (1, 5, 15 minutes) when it started and when it finished. */
  loadavg: { start: number[]; end: number[] }
}

function git(root: string, args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
}

const round2 = (xs: number[]) => xs.map((x) => Math.round(x * 100) / 100)

/** Starts recording a run; `finish()` gives its `measured` record. */
export function startMeasure(root: string, sources: readonly string[]): { finish(): Measured } {
  const start = round2(loadavg())
  const commit = git(root, ['rev-parse', 'HEAD'])
  const dirty = sources.length > 0 && git(root, ['status', '--porcelain', '--', ...sources]) !== ''
  return { finish: () => ({ commit, dirty, date: new Date().toISOString(), node: process.version, loadavg: { start, end: round2(loadavg()) } }) }
}

/**
 * Why an entry is stale, or null when it is not: it records no `measured` commit, the commit is
 * not in this repository's history, or a later commit changed one of its sources.
 */
export function staleReason(root: string, measured: Partial<Measured> | undefined, sources: readonly string[]): string | null {
  if (!measured?.commit) return 'measured before entries recorded their commit, Node version and load'
  try {
    git(root, ['cat-file', '-e', `${measured.commit}^{commit}`])
  } catch {
    return `measured at commit ${measured.commit.slice(0, 12)}, which is not in this history`
  }
  const later = git(root, ['log', '-1', '--format=%h %cI', `${measured.commit}..HEAD`, '--', ...sources])
  return later ? `the code it measures changed after it was measured (commit ${later})` : null
}
