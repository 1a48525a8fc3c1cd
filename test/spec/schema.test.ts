/**
 * The log format as JSON Schema (docs/spec/schema/, `turnlog schema`): the checked-in files are
 * what the code generates (a drift fails here: run `npm run docs:schema`), every example and
 * fixture log of the repository validates with an independent validator (ajv, draft 2020-12, not
 * zod), and a line whose field changed its JSON type is refused by both ajv and the reader's
 * registry (property test). L1 aside, the invariants are not the schema's business: invalid fixtures
 * that break an L rule still have valid lines; the SCHEMA ones do not.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { coreEventTypes, logJsonSchemas, schemaFileText } from '../../events/json-schema.js'
import { defaultRegistry } from '../../events/registry.js'
import { runDemoSession } from '../../cli/demo-session.js'
import { encodeEvent, encodeHeader } from '../../events/jsonl.js'
import { cli, tempDir } from '../cli/helpers.js'

const ROOT = join(import.meta.dirname, '..', '..')
const SCHEMA_DIR = join(ROOT, 'docs', 'spec', 'schema')

function filesUnder(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith(suffix))
    .map((d) => join(d.parentPath, d.name))
    .sort()
}

function validators() {
  const ajv = new Ajv2020({ strict: true, allErrors: false })
  const read = (f: string) => JSON.parse(readFileSync(join(SCHEMA_DIR, f), 'utf8')) as object
  return { header: ajv.compile(read('header.schema.json')), event: ajv.compile(read('event.schema.json')), ajv, read }
}

/** Every JSONL log the repository keeps: examples, goldens, the verify fixtures, the corpus. */
function repositoryLogs(): string[] {
  return [
    ...filesUnder(join(ROOT, 'examples'), '.jsonl'),
    ...filesUnder(join(ROOT, 'test', 'fixtures', 'valid'), '.jsonl'),
    ...filesUnder(join(ROOT, 'test', 'fixtures', 'invalid'), '.jsonl'),
    // the corpus's unreadable/ logs break the JSONL format itself, below what a schema can say
    ...filesUnder(join(ROOT, 'docs', 'spec', 'corpus'), '.jsonl').filter((f) => !f.includes('/unreadable/')),
  ]
}

function linesOf(path: string): unknown[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l) as unknown)
}

/** Logs meant to fail validation: their file name starts with SCHEMA-, except the two whose
 * defect JSON Schema cannot see (a -0 and a lone surrogate are well-shaped JSON values; the reader
 * refuses them, docs/spec/events.md "The envelope"). */
const beyondSchema = (path: string) => /(^|\/)SCHEMA-(lone-surrogate|negative-zero)\.jsonl$/.test(path)
const schemaInvalid = (path: string) => /(^|\/)SCHEMA-[^/]*$/.test(path) && !beyondSchema(path)

describe('docs/spec/schema/ (turnlog schema)', () => {
  it('the checked-in schema files are exactly what the code generates (run `npm run docs:schema` after changing events/)', () => {
    const generated = logJsonSchemas()
    const onDisk = filesUnder(SCHEMA_DIR, '.json').map((f) => relative(SCHEMA_DIR, f).split('\\').join('/'))
    expect(onDisk).toEqual(Object.keys(generated).sort())
    for (const [rel, doc] of Object.entries(generated)) {
      expect(readFileSync(join(SCHEMA_DIR, rel), 'utf8'), rel).toBe(schemaFileText(doc))
    }
  })

  it('has one file per core event type, and event.schema.json names every type', () => {
    const generated = logJsonSchemas()
    const types = coreEventTypes()
    expect(Object.keys(generated).filter((k) => k.startsWith('events/'))).toHaveLength(types.length)
    const dispatch = (generated['event.schema.json']!.allOf as Array<{ if: { properties: { type: { const?: string } } } }>)
      .map((b) => b.if.properties.type.const).filter((t) => t !== undefined)
    expect(dispatch).toEqual(types)
  })

  it('is valid JSON Schema 2020-12 (ajv compiles every file in strict mode)', () => {
    const { ajv, read } = validators()
    for (const f of filesUnder(SCHEMA_DIR, '.json')) expect(() => ajv.compile(read(relative(SCHEMA_DIR, f))), f).not.toThrow()
  })

  it('turnlog schema prints event.schema.json; -o DIR writes the same files as docs/spec/schema/', async () => {
    const printed = await cli(['schema'])
    expect(printed.code).toBe(0)
    expect(printed.stdout).toBe(readFileSync(join(SCHEMA_DIR, 'event.schema.json'), 'utf8'))
    const { dir, cleanup } = tempDir()
    try {
      const r = await cli(['schema', '-o', dir])
      expect(r.code, r.stderr).toBe(0)
      const written = filesUnder(dir, '.json').map((f) => relative(dir, f))
      expect(written).toEqual(filesUnder(SCHEMA_DIR, '.json').map((f) => relative(SCHEMA_DIR, f)))
      for (const f of written) expect(readFileSync(join(dir, f), 'utf8'), f).toBe(readFileSync(join(SCHEMA_DIR, f), 'utf8'))
    } finally {
      cleanup()
    }
  })
})

describe('every log the repository keeps validates with ajv (draft 2020-12), not zod', () => {
  const { header, event } = validators()
  const logs = repositoryLogs()

  it('finds the logs (examples, fixtures, corpus)', () => {
    expect(logs.length).toBeGreaterThan(100)
  })

  for (const path of logs) {
    const rel = relative(ROOT, path)
    const title = schemaInvalid(rel) ? `${rel}: a line is refused`
      : beyondSchema(rel) ? `${rel}: every line is well-shaped (the defect is the reader's to refuse)` : `${rel}: header and every event line are valid`
    it(title, () => {
      const [h, ...events] = linesOf(path)
      expect(header(h), JSON.stringify(header.errors)).toBe(true)
      const verdicts = events.map((e) => event(e))
      if (schemaInvalid(rel)) expect(verdicts).toContain(false)
      else expect(verdicts.every(Boolean), JSON.stringify(event.errors)).toBe(true)
    })
  }

  it('a log written with checksums (the demo session, every record ending in crc) validates', async () => {
    const { header: h, events } = await runDemoSession({ searchDelayMs: 0, startTime: 1764450000000, sessionId: 'schema-demo' })
    const lines = [encodeHeader({ ...h, checksums: 'crc32' }), ...events.map((e) => encodeEvent(e, { checksums: true }))]
    const [head, ...rest] = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(header(head)).toBe(true)
    expect(rest.every((e) => typeof e.crc === 'string')).toBe(true)
    for (const e of rest) expect(event(e), JSON.stringify([e, event.errors])).toBe(true)
    // and a crc that is not eight lowercase hex digits is refused
    expect(event({ ...rest[0], crc: 'ABCDEF01' })).toBe(false)
  })
})

// ---------------------------------------------------------------- mutations (property test)

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
type Path = Array<string | number>

/** Members whose value is open JSON by design (provider data, tool results, call configuration
 * extras, JSON Schemas of tool parameters, opaque state): a type change there is still valid. */
const OPEN = new Set(['providerData', 'result', 'config', 'parameters', 'state', 'responses', 'schema', 'structuredContent', 'info'])

function paths(v: Json, at: Path = []): Path[] {
  const out: Path[] = at.length ? [at] : []
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])))
  else if (v !== null && typeof v === 'object') for (const k of Object.keys(v)) out.push(...paths(v[k]!, [...at, k]))
  return out
}

function get(v: Json, p: Path): Json {
  return p.reduce<Json>((x, k) => (x as Record<string | number, Json>)[k]!, v)
}

function set(v: Json, p: Path, value: Json): Json {
  if (p.length === 0) return value
  const [k, ...rest] = p
  if (Array.isArray(v)) return v.map((x, i) => (i === k ? set(x, rest, value) : x))
  const o = v as Record<string, Json>
  return { ...o, [k as string]: set(o[k as string]!, rest, value) }
}

/** A value of a different JSON type than `v`. */
function otherType(v: Json, pick: number): Json {
  const options: Json[] = [7, 'x', true, null, [], { k: 1 }]
  const same = (x: Json) =>
    (x === null) === (v === null) && Array.isArray(x) === Array.isArray(v) && typeof x === typeof v
  const candidates = options.filter((x) => !same(x))
  return candidates[pick % candidates.length]!
}

describe('a line whose field changed its JSON type is refused (property)', () => {
  const { event } = validators()
  const pool = [
    ...filesUnder(join(ROOT, 'test', 'fixtures', 'valid'), '.jsonl'),
    ...filesUnder(join(ROOT, 'examples'), '.jsonl'),
    ...filesUnder(join(ROOT, 'docs', 'spec', 'corpus', 'valid'), '.jsonl'),
  ].flatMap((f) => linesOf(f).slice(1))
    // the events as the reader validates them: a line's `crc` member is the JSONL codec's, checked
    // and removed before an event is validated (with it, the reader refuses every line whatever the
    // mutation, and a change to an open field made ajv and the reader disagree: seed 50813726)
    .map((line) => {
      const { crc: _crc, ...event } = line as Record<string, unknown>
      return event
    }) as Json[]
  // one event per core type at least (else the property would not reach them)
  it('the pool of valid events covers most core types', () => {
    const seen = new Set(pool.map((e) => (e as { type: string }).type))
    expect(seen.size).toBeGreaterThanOrEqual(Math.min(15, coreEventTypes().length))
  })

  it('a typed field changed to another JSON type: ajv and the reader both refuse the line', () => {
    fc.assert(
      fc.property(fc.nat(pool.length - 1), fc.nat(), fc.nat(5), (i, j, pick) => {
        const e = pool[i]!
        // an ignorable event of a type the reader does not know carries opaque data: not typed
        const opaqueData = (e as { ignorable?: unknown }).ignorable === true
        const typed = paths(e).filter((p) => !p.some((k) => typeof k === 'string' && OPEN.has(k)) && !(opaqueData && p[0] === 'data'))
        fc.pre(typed.length > 0)
        const p = typed[j % typed.length]!
        const mutated = set(e, p, otherType(get(e, p), pick))
        const why = `${JSON.stringify(p)} in ${JSON.stringify(mutated).slice(0, 300)}`
        expect(event(mutated), why).toBe(false)
        expect(defaultRegistry.isValid(mutated), why).toBe(false)
      }),
      { numRuns: 1000 },
    )
  })

  it('any field changed to another JSON type, open ones included: ajv and the reader agree', () => {
    fc.assert(
      fc.property(fc.nat(pool.length - 1), fc.nat(), fc.nat(5), (i, j, pick) => {
        const e = pool[i]!
        // an ignorable event of a type the reader does not know carries opaque data (as above)
        const opaqueData = (e as { ignorable?: unknown }).ignorable === true
        const all = paths(e).filter((p) => !(opaqueData && p[0] === 'data'))
        fc.pre(all.length > 0)
        const p = all[j % all.length]!
        const mutated = set(e, p, otherType(get(e, p), pick))
        expect(event(mutated), JSON.stringify(p)).toBe(defaultRegistry.isValid(mutated))
      }),
      { numRuns: 1000 },
    )
  })

  it('an unknown type is refused unless the event is ignorable, by both', () => {
    const e = { seq: 0, time: 0, type: 'vendor/thing', data: { any: 1 } }
    expect(event(e)).toBe(false)
    expect(defaultRegistry.isValid(e)).toBe(false)
    expect(event({ ...e, ignorable: true })).toBe(true)
    expect(defaultRegistry.isValid({ ...e, ignorable: true })).toBe(true)
  })
})
