/**
 * A crashed parent re-attaches its running child (docs/spec/lifecycle.md §10, L19), real processes: a parent
 * process is SIGKILLed while its subagent call's child runs (or right after the child ended,
 * before the parent logged the call's result); `resumeAgent` of the parent resumes the child
 * session (the child's own repair and resume turn), awaits its outcome and delivers it as the
 * call's one `tool/result` — never `TOOL_OUTCOME_UNKNOWN` while the child's log can tell.
 */
import { spawn } from 'node:child_process'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { repairFile } from '../../replay/repair.js'
import { repairSession } from '../../replay/repair-session.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { verifyChild } from '../../replay/verify-child.js'
import { verifyFamily } from '../../replay/verify-family.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { childLib, ROOT } from '../stores/child-lib.js'

const CHILD = fileURLToPath(new URL('./children/crash-parent.mjs', import.meta.url))
let lib = ''
const dirs: string[] = []
beforeAll(() => {
  lib = childLib()
}, 300_000)
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

/** Runs the parent process until it prints `until`, then SIGKILLs it. */
async function runAndKill(dir: string, mode: string, until: string): Promise<void> {
  const proc = spawn(process.execPath, [CHILD, lib, dir, 'p', mode], { cwd: ROOT, stdio: 'pipe' })
  let out = ''
  let err = ''
  const exited = new Promise<void>((r) => proc.on('exit', () => r()))
  await new Promise<void>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (out.includes(until)) resolve()
    })
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
    void exited.then(() => reject(new Error(`the parent process exited before ${until}: ${out} ${err}`)))
  })
  proc.kill('SIGKILL')
  await exited
}

const research = (answer: string) => defineSubagent({
  name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
  agent: () => ({ model: scriptedModel(() => ({ text: answer })), system: 'child' }),
})

async function events(dir: string, id: string): Promise<LogEvent[]> {
  return (await readLog(join(dir, `${id}.jsonl`))).events as LogEvent[]
}

const resultsOf = (evs: readonly LogEvent[], callId: string) =>
  evs.filter((e): e is EventOf<'tool/result'> => e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.callId === callId)

describe('a crashed parent re-attaches its child (docs/spec/lifecycle.md §10)', () => {
  it('L19: SIGKILL while the child runs; resumeAgent resumes the child, its answer is the call\'s one result; the parent\'s turn goes on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-reattach-'))
    dirs.push(dir)
    await runAndKill(dir, 'child-running', 'RUNNING')
    const before = await events(dir, 'p')
    expect(before.some((e) => e.type === 'child/spawned')).toBe(true)
    expect(resultsOf(before, 'c1')).toEqual([])

    const store = jsonlStore(dir)
    const parent = await resumeAgent({
      store, sessionId: 'p', system: 'parent', tools: [research('Rayleigh scattering.')],
      model: scriptedModel(() => ({ text: 'parent done' })),
    })
    await parent.whenIdle()
    await parent.flush()
    await parent.dispose()

    const after = await events(dir, 'p')
    const results = resultsOf(after, 'c1')
    expect(results).toHaveLength(1)
    expect(results[0]!.data.error).toBeUndefined()
    expect(results[0]!.data.message.content).toEqual([{ type: 'text', text: 'Rayleigh scattering.' }])
    // the step went on where it stood: no repair closers in the parent, its turn completed
    expect(after.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['completed'])
    expect(after.filter((e) => e.type === 'child/spawned')).toHaveLength(1)
    expect(verify(after).violations).toEqual([])

    const child = await events(dir, 'p.c1-1-c1')
    // the child was repaired (its interrupted turn closed) and re-ran its prompt to the end
    expect(child.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['interrupted', 'completed'])
    expect(verify(child).violations).toEqual([])
    const header = (await readLog(join(dir, 'p.c1-1-c1.jsonl'))).header
    expect(verifyChild('p', after, header)).toEqual([])
    // the family as one (L19 across the logs: the call's answer is the child's, no child left running)
    const parentHeader = (await readLog(join(dir, 'p.jsonl'))).header
    expect((await verifyFamily({ header: parentHeader, events: after }, dir)).violations).toEqual([])
  }, 60_000)

  it('L19: SIGKILL after the child ended, before the parent logged the result: repair (store and file) and resume take the child\'s outcome from its log', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-reattach-'))
    dirs.push(dir)
    await runAndKill(dir, 'child-done', 'DONE')
    const childBefore = await events(dir, 'p.c1-1-c1')
    expect(childBefore.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['completed'])
    expect(resultsOf(await events(dir, 'p'), 'c1')).toEqual([])
    const answer = [{ type: 'text', text: 'Rayleigh scattering.' }]
    const copy = async (): Promise<string> => {
      const d = await mkdtemp(join(tmpdir(), 'turnlog-reattach-'))
      dirs.push(d)
      await cp(dir, d, { recursive: true })
      return d
    }

    // the store's repair (no agent, no tools): the call's result is the child's answer
    const d1 = await copy()
    const r = await repairSession(jsonlStore(d1), 'p')
    const closed = resultsOf(r.closers, 'c1')
    expect(closed).toHaveLength(1)
    expect(closed[0]!.data.error).toBeUndefined()
    expect(closed[0]!.data.message.content).toEqual(answer)
    expect(verify(r.events).violations).toEqual([])

    // `turnlog repair LOG -o OUT`: the child's log beside LOG
    const out = join(await copy(), 'out.jsonl')
    const f = await repairFile(join(dir, 'p.jsonl'), out)
    expect(resultsOf(f.closers, 'c1').map((e) => e.data.message.content)).toEqual([answer])

    // resume: the call re-attaches the finished child (nothing re-run in the child)
    const d2 = await copy()
    const parent = await resumeAgent({
      store: jsonlStore(d2), sessionId: 'p', system: 'parent', tools: [research('a second answer')],
      model: scriptedModel(() => ({ text: 'parent done' })),
    })
    await parent.whenIdle()
    await parent.flush()
    await parent.dispose()
    const after = await events(d2, 'p')
    expect(resultsOf(after, 'c1').map((e) => e.data.message.content)).toEqual([answer])
    expect(verify(after).violations).toEqual([])
    expect(await events(d2, 'p.c1-1-c1')).toEqual(childBefore)
  }, 60_000)
})
