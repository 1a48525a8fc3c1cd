/**
 * `turnlog verify LOG --children` (L19 across logs, replay/verify-family.ts), JSONL: the family of
 * a real subagent run beside LOG passes; a child whose header names another call, and a parent
 * whose call's result is not its child's answer, are listed with their code, file, seq or line
 * and field, exit 1; a child log that cannot be read is a violation naming its read error.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { encodeEvent, encodeHeader, type LogHeader } from '../../events/jsonl.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { cli } from './helpers.js'

const CHILD = 'p.c1-1-c1'
const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'turnlog-verify-children-'))
  dirs.push(d)
  return d
}

let dir = ''
let parent: { header: LogHeader; events: LogEvent[] }
let child: { header: LogHeader; events: LogEvent[] }
beforeAll(async () => {
  dir = await tmp()
  const agent = createAgent({
    store: jsonlStore(dir), sessionId: 'p', system: 'parent',
    tools: [defineSubagent({
      name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
      agent: () => ({ model: scriptedModel(() => ({ text: 'Rayleigh scattering.' })), system: 'child' }),
    })],
    model: scriptedModel([{ toolCalls: [{ name: 'research', args: { question: 'why blue' }, id: 'c1' }] }, { text: 'parent done' }]),
  })
  agent.followup('go')
  await agent.whenIdle()
  await agent.flush()
  await agent.dispose()
  const p = await readLog(join(dir, 'p.jsonl'))
  const c = await readLog(join(dir, `${CHILD}.jsonl`))
  parent = { header: p.header, events: p.events as LogEvent[] }
  child = { header: c.header, events: c.events as LogEvent[] }
})

const bytes = (header: LogHeader, events: readonly LogEvent[]) =>
  [encodeHeader({ ...header, checksums: 'crc32' }), ...events.map((e) => encodeEvent(e, { checksums: true }))].join('\n') + '\n'

describe('turnlog verify --children', () => {
  it('L19: a real family passes: the parent\'s line, then the family\'s', async () => {
    const r = await cli(['verify', join(dir, 'p.jsonl'), '--children'])
    expect(r.code, r.stderr + r.stdout).toBe(0)
    expect(r.stdout).toMatch(/^OK .*p\.jsonl: \d+ events, 1 turn, every invariant holds\nOK family of .*p\.jsonl: 2 sessions \(1 child\), every family rule holds \(L19\)\n$/)
  })

  it('L19: a child header naming another call and a result that is not the child\'s answer are listed with code, file, position and field; exit 1', async () => {
    const d = await tmp()
    const res = parent.events.find((e) => e.type === 'tool/result') as EventOf<'tool/result'>
    const events = parent.events.map((e) => (e === res ? { ...res, data: { ...res.data, message: { ...res.data.message, content: [{ type: 'text', text: 'made up' }] } } } as LogEvent : e))
    await writeFile(join(d, 'p.jsonl'), bytes(parent.header, events))
    await writeFile(join(d, `${CHILD}.jsonl`), bytes(child.header, child.events))
    const r = await cli(['verify', join(d, 'p.jsonl'), '--children'])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain('FAIL family of')
    expect(r.stdout).toContain(`L19 FAMILY_ANSWER ${join(d, 'p.jsonl')} seq ${res.seq} (data.message.content): call c1's result is "made up", its child ${CHILD} answered "Rayleigh scattering."`)

    const h = await tmp()
    await writeFile(join(h, 'p.jsonl'), await readFile(join(dir, 'p.jsonl')))
    await writeFile(join(h, `${CHILD}.jsonl`), bytes({ ...child.header, parent: { ...child.header.parent!, callId: 'c7' } }, child.events))
    const r2 = await cli(['verify', join(h, 'p.jsonl'), '--children'])
    expect(r2.code).toBe(1)
    expect(r2.stdout).toContain(`L19 FAMILY_HEADER ${join(h, `${CHILD}.jsonl`)} line 1 (parent.callId): child ${CHILD}: its header names call c7, the parent's child/spawned call c1`)
    // without --children the parent alone is valid
    expect((await cli(['verify', join(h, 'p.jsonl')])).code).toBe(0)
  })

  it('L19: a torn child log is a violation naming its read error; a child\'s own violation keeps its id', async () => {
    const d = await tmp()
    await writeFile(join(d, 'p.jsonl'), await readFile(join(dir, 'p.jsonl')))
    await writeFile(join(d, `${CHILD}.jsonl`), bytes(child.header, child.events) + '{"seq":')
    const r = await cli(['verify', join(d, 'p.jsonl'), '--children'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/L19 FAMILY_CHILD_UNREADABLE .*p\.c1-1-c1\.jsonl line \d+: the log of child p\.c1-1-c1 \(call c1 of p\) cannot be read: TORN_TAIL/)

    // the child's own log broken (a step/start removed): listed with its own invariant id
    const i = child.events.findIndex((e) => e.type === 'step/start')
    const broken = child.events.filter((_, k) => k !== i).map((e, k) => ({ ...e, seq: k }) as LogEvent)
    await writeFile(join(d, `${CHILD}.jsonl`), bytes(child.header, broken))
    const r2 = await cli(['verify', join(d, 'p.jsonl'), '--children'])
    expect(r2.code).toBe(1)
    expect(r2.stdout).toMatch(/ L\d+ INVARIANT .*p\.c1-1-c1\.jsonl seq \d+/)
  })

  it('L19 (issue 38.28): an orphan child log (its header names a member as parent, no child/spawned names it) is FAMILY_UNSPAWNED; one past the parent\'s end is listed, not a violation', async () => {
    const d = await tmp()
    await writeFile(join(d, 'p.jsonl'), await readFile(join(dir, 'p.jsonl')))
    await writeFile(join(d, `${CHILD}.jsonl`), await readFile(join(dir, `${CHILD}.jsonl`)))
    const stray = 'p.c1-1-zz'
    await writeFile(join(d, `${stray}.jsonl`), bytes({ ...child.header, id: stray, parent: { session: 'p', seq: 3, callId: 'zz' } }, []))
    const r = await cli(['verify', join(d, 'p.jsonl'), '--children'])
    expect(r.code, r.stdout).toBe(1)
    expect(r.stdout).toContain(`L19 FAMILY_UNSPAWNED ${join(d, `${stray}.jsonl`)} line 1 (parent): the log of ${stray} names p as its parent (seq 3, call zz), but no child/spawned of p names it`)

    const e = await tmp()
    await writeFile(join(e, 'p.jsonl'), await readFile(join(dir, 'p.jsonl')))
    await writeFile(join(e, `${CHILD}.jsonl`), await readFile(join(dir, `${CHILD}.jsonl`)))
    await writeFile(join(e, `${stray}.jsonl`), bytes({ ...child.header, id: stray, parent: { session: 'p', seq: parent.events.length + 2, callId: 'zz' } }, []))
    // a log of another session (prefix alike, parent another) is no one's concern here
    await writeFile(join(e, 'p.c2-1-other.jsonl'), bytes({ ...child.header, id: 'p.c2-1-other', parent: { session: 'q', seq: 1, callId: 'x' } }, []))
    const r2 = await cli(['verify', join(e, 'p.jsonl'), '--children'])
    expect(r2.code, r2.stdout).toBe(0)
    expect(r2.stdout).toContain(`names p as its parent at seq ${parent.events.length + 2}, past the end of its log`)
    expect(r2.stdout).not.toContain('p.c2-1-other')
  })
})
