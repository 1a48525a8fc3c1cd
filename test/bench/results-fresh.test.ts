/**
 * No stale figure (issue 39 item 8; bench/README.md): every entry of bench/results.json either
 * records the commit, date, Node version and load average it was measured at and is newer than
 * every change to the code it measures (its benchmark's `sources` in bench/run.ts), or carries a
 * `stale` note; and a note is there only when it is true. Uses this repository's git history.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { staleReason } from '../../bench/freshness.js'
import { entryOf, REGISTRY } from '../../bench/run.js'

const ROOT = join(import.meta.dirname, '..', '..')
const results = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')) as Record<string, { stale?: string; measured?: Record<string, unknown> }>

describe('bench/results.json: no stale figure', () => {
  it('every benchmark declares the source paths it measures, and each exists', () => {
    for (const e of REGISTRY) {
      expect(e.sources.length, e.ids.join('/')).toBeGreaterThan(0)
      expect(e.sources.filter((p) => !existsSync(join(ROOT, p))), e.ids.join('/')).toEqual([])
    }
  })

  it('every entry is of a registered benchmark', () => {
    expect(Object.keys(results).filter((id) => !entryOf(id))).toEqual([])
  })

  it('a measured entry records commit, date, Node version and load average', () => {
    for (const [id, r] of Object.entries(results)) {
      if (!r.measured) continue
      expect(r.measured, id).toMatchObject({
        commit: expect.stringMatching(/^[0-9a-f]{40}$/), dirty: expect.any(Boolean), date: expect.any(String), node: expect.stringMatching(/^v\d+\./),
        loadavg: { start: expect.any(Array), end: expect.any(Array) },
      })
    }
  })

  it('an entry is marked stale exactly when it is older than the last change to the code it measures', () => {
    const wrong: string[] = []
    for (const [id, r] of Object.entries(results)) {
      const reason = staleReason(ROOT, r.measured as never, entryOf(id)!.sources)
      if (reason && !r.stale) wrong.push(`${id} is stale (${reason}) but not marked: re-run \`npm run bench -- ${id}\`, or mark it stale`)
      if (!reason && r.stale) wrong.push(`${id} is marked stale ("${r.stale}") but nothing it measures changed since commit ${String(r.measured?.commit)}`)
    }
    expect(wrong).toEqual([])
  })

  it('the check sees a change: a source path changed after the measured commit makes the entry stale', () => {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const parent = execFileSync('git', ['rev-parse', 'HEAD~1'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const changed = execFileSync('git', ['diff', '--name-only', 'HEAD~1', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').filter(Boolean)
    expect(staleReason(ROOT, { commit: head }, ['events'])).toBeNull()
    if (changed.length) expect(staleReason(ROOT, { commit: parent }, [changed[0]!])).toMatch(/changed after it was measured/)
    expect(staleReason(ROOT, undefined, ['events'])).toMatch(/before entries recorded/)
    expect(staleReason(ROOT, { commit: '0'.repeat(40) }, ['events'])).toMatch(/not in this history/)
  })
})
