/**
 * Issue 37 item 5: the repository's documentation is a map and a set of decision records, not a
 * diary. docs/ARCHITECTURE.md stays a map (≤ 600 lines) whose links resolve; every record in
 * docs/decisions/ has its context, decision and consequences and is listed in the folder's
 * README; no record names a round or a branch; working notes (docs/notes/) and generated reports
 * with machine paths are not in the repository.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../cli/helpers.js'

const DECISIONS = join(ROOT, 'docs', 'decisions')
const records = readdirSync(DECISIONS).filter((f) => f.endsWith('.md') && f !== 'README.md').sort()

describe('docs: a map and decision records (issue 37.5)', () => {
  it('docs/ARCHITECTURE.md is at most 600 lines and every relative link in it names a file of the repository', () => {
    const text = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8')
    expect(text.split('\n').length).toBeLessThanOrEqual(600)
    const links = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/i.test(l))
    expect(links.length).toBeGreaterThan(10)
    // docs/spec/ is written alongside; every other link must resolve now
    const missing = links.filter((l) => !l.startsWith('spec/')).filter((l) => !existsSync(join(ROOT, 'docs', l)))
    expect(missing).toEqual([])
  })

  it('every decision record has Context, Decision and Consequences, and the README lists every record', () => {
    expect(records.length).toBeGreaterThanOrEqual(30)
    const index = readFileSync(join(DECISIONS, 'README.md'), 'utf8')
    const listed = new Set([...index.matchAll(/\]\(([\w.-]+\.md)\)/g)].map((m) => m[1]!))
    expect(records.filter((f) => !listed.has(f))).toEqual([])
    expect([...listed].filter((f) => !records.includes(f))).toEqual([])
    for (const f of records) {
      const text = readFileSync(join(DECISIONS, f), 'utf8')
      expect(text, f).toMatch(/^# \S/)
      for (const h of ['## Context', '## Decision', '## Consequences']) expect(text.includes(`\n${h}\n`), `${f}: ${h}`).toBe(true)
    }
  })

  it('no record reads as a diary: no round numbers, branch names or working-note paths', () => {
    const diary: string[] = []
    for (const f of records) {
      const text = readFileSync(join(DECISIONS, f), 'utf8')
      for (const m of text.matchAll(/\bround \d+\b|\brounds \d+|\bbranch `[\w-]+`|docs\/notes\/|\bthis round\b/gi)) diary.push(`${f}: ${m[0]}`)
    }
    expect(diary).toEqual([])
  })

  it('no working notes and no generated mutation reports in the repository', () => {
    expect(existsSync(join(ROOT, 'docs', 'notes'))).toBe(false)
    const tracked = readFileSync(join(ROOT, '.gitignore'), 'utf8')
    for (const p of ['mutation/reports/', 'mutation/stryker-incremental.json', 'mutation.json']) expect(tracked).toContain(p)
    expect(dirname(DECISIONS)).toBe(join(ROOT, 'docs'))
  })
})
