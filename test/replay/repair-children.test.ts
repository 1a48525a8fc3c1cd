/**
 * Repair of a crashed parent whose subagent call was running (docs/spec/lifecycle.md §10, L19, L5): every
 * repair entry point gives the call its finished child's outcome when it can read the child's log
 * (the store, or the JSONL directory), and `TOOL_OUTCOME_UNKNOWN` when the outcome is unknown —
 * no child log, a child still running, no reader, or a log that is not this call's child (its
 * header names another parent or call: never someone else's answer).
 */
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { encodeEvent, encodeHeader, type LogHeader } from '../../events/jsonl.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { readChildOutcomes } from '../../replay/child-outcome.js'
import { repair, repairEvents, repairFile } from '../../replay/repair.js'
import { repairSession } from '../../replay/repair-session.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { cli } from '../cli/helpers.js'

const CHILD = 'p.c1-1-c1'
const ANSWER = [{ type: 'text', text: 'Rayleigh scattering.' }]
const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'turnlog-repair-children-'))
  dirs.push(d)
  return d
}

const research = () => defineSubagent({
  name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
  agent: () => ({ model: scriptedModel(() => ({ text: 'Rayleigh scattering.' })), system: 'child' }),
})

/** A finished family in `dir` (parent `p`, one child), and the parent cut before its call's result. */
let family: { dir: string; parent: { header: LogHeader; events: LogEvent[] }; crashed: LogEvent[]; child: { header: LogHeader; events: LogEvent[] } }
beforeAll(async () => {
  const dir = await tmp()
  const agent = createAgent({
    store: jsonlStore(dir), sessionId: 'p', system: 'parent', tools: [research()],
    model: scriptedModel([{ toolCalls: [{ name: 'research', args: { question: 'why is the sky blue' }, id: 'c1' }] }, { text: 'parent done' }]),
  })
  agent.followup('go')
  await agent.whenIdle()
  await agent.flush()
  await agent.dispose()
  const parent = await readLog(join(dir, 'p.jsonl'))
  const child = await readLog(join(dir, `${CHILD}.jsonl`))
  const cut = parent.events.findIndex((e) => e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.callId === 'c1')
  expect(cut).toBeGreaterThan(0)
  family = {
    dir,
    parent: { header: parent.header, events: parent.events as LogEvent[] },
    crashed: parent.events.slice(0, cut) as LogEvent[],
    child: { header: child.header, events: child.events as LogEvent[] },
  }
})

function bytesOf(header: LogHeader, events: readonly LogEvent[]): string {
  return [encodeHeader({ ...header, checksums: 'crc32' }), ...events.map((e) => encodeEvent(e, { checksums: true }))].join('\n') + '\n'
}

/**
 * A directory holding the crashed parent as `p.jsonl` (what a store reads) and, unless `child` is
 * null, the child's log as given.
 */
async function crashedDir(child: { header: LogHeader; events: readonly LogEvent[] } | null = family.child): Promise<string> {
  const d = await tmp()
  await writeFile(join(d, 'p.jsonl'), bytesOf(family.parent.header, family.crashed))
  if (child !== null) await writeFile(join(d, `${CHILD}.jsonl`), bytesOf(child.header, child.events))
  return d
}

const resultOf = (closers: readonly LogEvent[]) => {
  const rs = closers.filter((e): e is EventOf<'tool/result'> => e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.callId === 'c1')
  expect(rs).toHaveLength(1)
  return rs[0]!.data
}
const answered = (closers: readonly LogEvent[]) => {
  const r = resultOf(closers)
  expect(r.error).toBeUndefined()
  expect(r.message.content).toEqual(ANSWER)
}
const unknown = (closers: readonly LogEvent[]) => expect(resultOf(closers).error?.code).toBe('TOOL_OUTCOME_UNKNOWN')

/** Every repair entry point over the crashed parent in `d`: the closers each wrote. */
async function everyEntryPoint(d: string): Promise<Record<string, LogEvent[]>> {
  const out: Record<string, LogEvent[]> = {}
  out['repair(path)'] = (await repair(join(d, 'p.jsonl'))).closers
  const bytes = new TextEncoder().encode(bytesOf(family.parent.header, family.crashed))
  out['repair(bytes, childLogs: store)'] = (await repair(bytes, { childLogs: jsonlStore(d) })).closers
  out['repair(bytes, childLogs: dir)'] = (await repair(bytes, { childLogs: d })).closers
  const log = { header: family.parent.header, events: family.crashed }
  out['repairEvents(readChildOutcomes)'] = repairEvents(log, { children: await readChildOutcomes(jsonlStore(d), log) }).closers
  const o = await tmp()
  out.repairFile = (await repairFile(join(d, 'p.jsonl'), join(o, 'out.jsonl'))).closers
  const c = await cli(['repair', join(d, 'p.jsonl'), '-o', join(o, 'cli.jsonl')])
  expect(c.code, c.stderr).toBe(0)
  out['turnlog repair'] = (await readLog(join(o, 'cli.jsonl'))).events.slice(family.crashed.length) as LogEvent[]
  // the store's repair writes into the store: on a copy
  const s = await tmp()
  await copyFile(join(d, 'p.jsonl'), join(s, 'p.jsonl'))
  await copyFile(join(d, `${CHILD}.jsonl`), join(s, `${CHILD}.jsonl`)).catch(() => {})
  out.repairSession = (await repairSession(jsonlStore(s), 'p')).closers
  // resumeAgent on a log continued into a store holding the child (no subagent tool: nothing re-attaches)
  const r = await tmp()
  await copyFile(join(d, `${CHILD}.jsonl`), join(r, `${CHILD}.jsonl`)).catch(() => {})
  let closers: LogEvent[] = []
  const agent = await resumeAgent({
    log: [...family.crashed], store: jsonlStore(r), sessionId: 'p', system: 'parent', autoStart: false,
    model: scriptedModel(() => ({ text: 'resumed' })), onRepaired: (x) => void (closers = x.closers),
  })
  await agent.dispose()
  out['resumeAgent({ log, store })'] = closers
  for (const [k, v] of Object.entries(out)) expect(verify([...family.crashed, ...v]).violations, k).toEqual([])
  return out
}

describe('repair of a parent whose subagent call was running (docs/spec/lifecycle.md §10)', () => {
  it('L19 L5: every repair entry point gives the call its finished child\'s answer', async () => {
    const d = await crashedDir()
    const all = await everyEntryPoint(d)
    for (const [k, closers] of Object.entries(all)) {
      expect(resultOf(closers).message.content, k).toEqual(ANSWER)
      answered(closers)
    }
  })

  it('L5: without a reader for the children (bytes alone, an in-memory log) the outcome is TOOL_OUTCOME_UNKNOWN', async () => {
    const bytes = new TextEncoder().encode(bytesOf(family.parent.header, family.crashed))
    unknown((await repair(bytes)).closers)
    unknown(repairEvents({ header: family.parent.header, events: family.crashed }).closers)
    // the path's directory is not read when told not to
    const d = await crashedDir()
    unknown((await repair(join(d, 'p.jsonl'), { childLogs: false })).closers)
  })

  it('L5: a child that has not ended, or has no log, gives TOOL_OUTCOME_UNKNOWN at every entry point', async () => {
    const open = family.child.events.findIndex((e) => e.type === 'turn/end')
    for (const d of [await crashedDir({ header: family.child.header, events: family.child.events.slice(0, open) }), await crashedDir(null)]) {
      for (const [k, closers] of Object.entries(await everyEntryPoint(d))) expect(resultOf(closers).error?.code, k).toBe('TOOL_OUTCOME_UNKNOWN')
    }
  })

  it('L19: a log under the child\'s name whose header names another parent, call or seq is not this call\'s child: TOOL_OUTCOME_UNKNOWN', async () => {
    const p = family.child.header.parent!
    for (const parent of [{ ...p, session: 'someone-else' }, { ...p, callId: 'c9' }, { ...p, seq: p.seq + 1 }]) {
      const d = await crashedDir({ header: { ...family.child.header, parent }, events: family.child.events })
      for (const [k, closers] of Object.entries(await everyEntryPoint(d))) expect(resultOf(closers).error?.code, k).toBe('TOOL_OUTCOME_UNKNOWN')
    }
  })
})
