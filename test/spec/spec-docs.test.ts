/**
 * docs/spec/ describes what the code has: every core event type of events/data.ts has its row in
 * docs/spec/events.md naming each member of its data, every rule id the checker reports (L, W) is
 * defined in docs/spec/invariants.md, and docs/spec/lifecycle.md keeps the section numbers the code cites
 * (§1–§12 and "Deliberate choices" 1–7).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { EVENT_DATA } from '../../events/data.js'

const ROOT = join(import.meta.dirname, '..', '..')
const spec = (f: string) => readFileSync(join(ROOT, f), 'utf8')

describe('docs/spec/events.md covers the vocabulary of events/data.ts', () => {
  const doc = spec('docs/spec/events.md')
  const rows = doc.split('\n').filter((l) => l.startsWith('| `'))
  for (const [type, schema] of Object.entries(EVENT_DATA)) {
    it(`${type}: a row, naming every member of its data`, () => {
      const row = rows.find((l) => l.startsWith(`| \`${type}\` |`))
      expect(row, `no row for ${type} in docs/spec/events.md`).toBeDefined()
      const keys = Object.keys((schema as z.ZodObject).shape)
      const missing = keys.filter((k) => !new RegExp(`\\b${k}\\b`).test(row!))
      expect(missing, `members of ${type} the row does not name`).toEqual([])
    })
  }
})

describe('docs/spec/invariants.md defines every rule the checker reports', () => {
  const doc = spec('docs/spec/invariants.md')
  const dir = join(ROOT, 'events', 'invariants')
  const ids = new Set<string>()
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/\(['"]((?:L|W)\d+)['"]/g)) ids.add(m[1]!)
  }
  it('finds the rules', () => expect(ids.size).toBeGreaterThanOrEqual(23))
  for (const id of ids) {
    it(`${id} is defined`, () => expect(doc).toContain(`- **${id}** `))
  }
  it('R1–R11 and P1–P7 are defined', () => {
    for (let i = 1; i <= 11; i++) expect(doc).toContain(`- **R${i}** `)
    for (let i = 1; i <= 7; i++) expect(doc).toContain(`- **P${i}** `)
  })
})

describe('docs/spec/lifecycle.md keeps the section numbers citations use', () => {
  const doc = spec('docs/spec/lifecycle.md')
  it('§1–§12 in order, then the pictures and the deliberate choices 1–7', () => {
    const heads = doc.split('\n').filter((l) => l.startsWith('## ')).map((l) => l.slice(3))
    const numbered = heads.filter((h) => /^\d+\./.test(h)).map((h) => Number(h.split('.')[0]))
    expect(numbered).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
    expect(heads.slice(-2)).toEqual(['The machines, as pictures', 'Deliberate choices'])
    const choices = doc.slice(doc.indexOf('## Deliberate choices')).split('\n').filter((l) => /^\d+\. /.test(l))
    expect(choices.map((l) => Number(l.split('.')[0]))).toEqual([1, 2, 3, 4, 5, 6, 7])
  })
  it('§3 and §4 keep their numbered items (cited as §3.8, §4.6)', () => {
    const section = (n: number) => doc.slice(doc.indexOf(`## ${n}. `), doc.indexOf(`## ${n + 1}. `))
    for (const n of [3, 4]) {
      const items = section(n).split('\n').filter((l) => /^\d+\. /.test(l)).map((l) => Number(l.split('.')[0]))
      expect(items).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    }
  })
})
