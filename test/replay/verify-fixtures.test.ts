/**
 * Every fixture under test/fixtures/{valid,invalid} is verified and compared with expected.json,
 * whose results were written from construction by build-fixtures.mjs (not from running verify).
 * Each invalid fixture breaks one invariant; the test title names it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { verify } from '../../replay/verify.js'

const root = join(import.meta.dirname, '..', 'fixtures')
const expected = JSON.parse(readFileSync(join(root, 'expected.json'), 'utf8')) as Record<
  string,
  { ok: boolean; firstViolation: { invariant: string; seq: number } | null }
>

/** The events of a fixture: JSONL, header line first (a plain JSON.parse per line). */
function readFixture(rel: string): unknown[] {
  const lines = readFileSync(join(root, rel), 'utf8').split('\n').filter((l) => l.length > 0)
  const header = JSON.parse(lines[0]!) as { type?: unknown; format?: unknown }
  expect(header).toMatchObject({ type: 'session', format: 1 })
  return lines.slice(1).map((l) => JSON.parse(l) as unknown)
}

const files = ['valid', 'invalid'].flatMap((dir) =>
  readdirSync(join(root, dir)).filter((f) => f.endsWith('.jsonl')).sort().map((f) => `${dir}/${f}`),
)

describe('verify on the fixtures', () => {
  it('every fixture has an expected result and every expected result has a fixture', () => {
    expect(files.length).toBeGreaterThan(90)
    expect([...files].sort()).toEqual(Object.keys(expected).sort())
  })

  it('there is at least one invalid fixture per invariant L1–L16 (and SCHEMA)', () => {
    const covered = new Set(Object.values(expected).flatMap((x) => (x.firstViolation ? [x.firstViolation.invariant] : [])))
    for (let i = 1; i <= 16; i++) expect(covered, `L${i}`).toContain(`L${i}`)
    expect(covered).toContain('SCHEMA')
  })

  for (const rel of files) {
    const want = expected[rel]
    const id = want?.firstViolation ? want.firstViolation.invariant : 'L1–L16'
    const title = want?.ok
      ? `${id}: ${rel} is a valid log`
      : `${id}: ${rel} is refused at seq ${want?.firstViolation?.seq}`
    it(title, () => {
      expect(want, `no entry for ${rel} in expected.json`).toBeDefined()
      const result = verify(readFixture(rel))
      const first = result.violations[0]
      expect({ ok: result.ok, firstViolation: first ? { invariant: first.invariant, seq: first.seq } : null }, JSON.stringify(first))
        .toEqual(want)
      if (first) expect(first.message.length).toBeGreaterThan(0)
    })
  }
})
