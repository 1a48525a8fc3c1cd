/**
 * The conformance corpus (docs/spec/corpus/, corpus.json): `verify` — the function and the
 * `turnlog verify` command — gives every valid log no violation and every invalid log the code and
 * seq the manifest names (L1–L21, W1–W3, SCHEMA), every rule the checker can report has at
 * least one invalid log, and the reader — `readLog` and the command — refuses every unreadable log
 * with the code and line named. Rebuild with `npm run docs:corpus` (test/spec/build-corpus.ts).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/errors.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { cli } from '../cli/helpers.js'
import { recordsOf, type CorpusEntry } from './corpus-format.js'

const ROOT = join(import.meta.dirname, '..', '..')
const CORPUS = join(ROOT, 'docs', 'spec', 'corpus')
const manifest = JSON.parse(readFileSync(join(CORPUS, 'corpus.json'), 'utf8')) as { format: number; logs: CorpusEntry[] }

function events(file: string): unknown[] {
  const text = readFileSync(join(CORPUS, file), 'utf8')
  expect(JSON.parse(text.slice(0, text.indexOf('\n')))).toMatchObject({ type: 'session', format: 1 })
  return recordsOf(text)
}

const unreadable = (e: CorpusEntry) => e.file.startsWith('unreadable/')

/** Every rule id the checker's sources can report (`emit('L5', …)` and the like). */
function checkerRuleIds(): string[] {
  const dir = join(ROOT, 'events', 'invariants')
  const ids = new Set<string>()
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/\(['"]((?:L|W)\d+)['"]/g)) ids.add(m[1]!)
  }
  return [...ids].sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
}

describe('the conformance corpus (docs/spec/corpus/)', () => {
  it('corpus.json lists every log of the corpus, and every listed log exists', () => {
    const onDisk = ['valid', 'invalid', 'unreadable'].flatMap((d) => readdirSync(join(CORPUS, d)).filter((f) => f.endsWith('.jsonl')).map((f) => `${d}/${f}`))
    expect(manifest.logs.map((e) => e.file).sort()).toEqual(onDisk.sort())
    expect(manifest.format).toBe(1)
  })

  it('L1–L21, W1–W3: every rule the checker reports has at least one invalid log, and SCHEMA too', () => {
    const covered = new Set(manifest.logs.flatMap((e) => (e.expect && !unreadable(e) ? [e.expect.code] : [])))
    const rules = checkerRuleIds()
    expect(rules.length).toBeGreaterThanOrEqual(23)
    for (const id of [...rules, 'SCHEMA']) expect(covered, `no invalid log for ${id}`).toContain(id)
  })

  it('the reader\'s refusals are covered: each format defect has an unreadable log', () => {
    const codes = manifest.logs.filter(unreadable).map((e) => e.expect!.code).sort()
    expect(codes).toEqual(['CHECKSUM_MISMATCH', 'EMPTY_LOG', 'FUTURE_FORMAT', 'INVALID_HEADER', 'MALFORMED_LINE', 'MISSING_HEADER', 'TORN_TAIL'])
  })

  for (const entry of manifest.logs.filter(unreadable)) {
    it(`${entry.expect!.code}: readLog refuses ${entry.file}${entry.expect!.line ? ` at line ${entry.expect!.line}` : ''}`, async () => {
      const err = await readLog(join(CORPUS, entry.file)).then(() => null, (e: unknown) => e)
      expect(TurnlogError.is(err), String(err)).toBe(true)
      const e = err as TurnlogError
      expect({ code: e.code, line: e.line }).toEqual({ code: entry.expect!.code, line: entry.expect!.line })
    })
  }

  for (const entry of manifest.logs.filter((e) => !unreadable(e))) {
    const title = entry.valid
      ? `${entry.file}: valid (no violation)`
      : `${entry.expect!.code}: ${entry.file} is refused at seq ${entry.expect!.seq}`
    it(title, () => {
      const result = verify(events(entry.file), entry.options ?? {})
      if (entry.valid) {
        expect(result.violations).toEqual([])
        expect(result.ok).toBe(true)
      } else {
        const first = result.violations[0]
        expect(first && { code: first.invariant, seq: first.seq }, JSON.stringify(result.violations.slice(0, 3))).toEqual(entry.expect)
      }
    })
  }

  it('turnlog verify agrees on every log: exit 0, exit 1 with the expected first violation, or exit 2 naming the reader\'s code', async () => {
    for (const entry of manifest.logs) {
      const r = await cli(['verify', join('docs', 'spec', 'corpus', entry.file)])
      if (unreadable(entry)) {
        expect(r.code, `${entry.file}: ${r.stdout}${r.stderr}`).toBe(2)
        expect(r.stderr, entry.file).toContain(entry.expect!.code)
      } else if (entry.valid) {
        expect(r.code, `${entry.file}: ${r.stdout}${r.stderr}`).toBe(0)
      } else {
        expect(r.code, `${entry.file}: ${r.stdout}${r.stderr}`).toBe(1)
        const firstListed = r.stdout.split('\n')[1] ?? ''
        expect(firstListed, entry.file).toContain(`${entry.expect!.code} at seq ${entry.expect!.seq}:`)
      }
    }
  })
})
