/**
 * Re-attach when the crashed step held more than its running children (docs/spec/lifecycle.md §8, §9, §10;
 * L6, L17, L19), real processes: the parent process is SIGKILLed while its subagent call's child
 * runs and the same step also holds (a) an open approval request of a later call, or (b) an
 * ordinary call running in parallel. `resumeAgent` re-attaches the child (its answer is the call's
 * one result) and the rest of the step continues as it stood: (a) the request stays open, the step
 * parks, a decision runs the call; (b) the ordinary call gets its §8 repair result
 * (`TOOL_OUTCOME_UNKNOWN`), in model order after the child's (L6). No repair closers in the parent.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineSubagent } from '../../agent/index.js'
import type { EventOf, LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { verifyChild } from '../../replay/verify-child.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { defineTool } from '../../tools/define.js'
import { childLib, ROOT } from '../stores/child-lib.js'

const SCRIPT = fileURLToPath(new URL('./children/crash-step.mjs', import.meta.url))
const CHILD = 'p.c1-1-c1'
let lib = ''
const dirs: string[] = []
beforeAll(() => {
  lib = childLib()
}, 300_000)
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

/** Runs the parent process until it prints RUNNING, then SIGKILLs it. */
async function crash(mode: 'request' | 'mixed'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-reattach-step-'))
  dirs.push(dir)
  const proc = spawn(process.execPath, [SCRIPT, lib, dir, 'p', mode], { cwd: ROOT, stdio: 'pipe' })
  let out = ''
  let err = ''
  const exited = new Promise<void>((r) => proc.on('exit', () => r()))
  await new Promise<void>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (out.includes('RUNNING')) resolve()
    })
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
    void exited.then(() => reject(new Error(`the parent process exited before RUNNING: ${out} ${err}`)))
  })
  proc.kill('SIGKILL')
  await exited
  return dir
}

async function events(dir: string, id: string): Promise<LogEvent[]> {
  return (await readLog(join(dir, `${id}.jsonl`))).events as LogEvent[]
}

/** The resumed parent's tools: the child now answers at once; `rm` counts its runs. */
function tools(ran: string[]) {
  return [
    defineSubagent({
      name: 'research', description: 'Looks something up', parameters: z.object({ question: z.string() }),
      isConcurrencySafe: () => true,
      agent: () => ({ model: scriptedModel(() => ({ text: 'Rayleigh scattering.' })), system: 'child' }),
    }),
    defineTool({
      name: 'rm', description: 'removes a file', parameters: z.object({ path: z.string() }), needsApproval: true,
      execute: ({ path }) => {
        ran.push(`rm ${path}`)
        return 'removed'
      },
    }),
    defineTool({
      name: 'wait', description: 'waits', parameters: z.object({ ms: z.number() }), isConcurrencySafe: () => true,
      execute: () => {
        ran.push('wait')
        return 'waited'
      },
    }),
  ]
}

const results = (evs: readonly LogEvent[]) =>
  (evs.filter((e) => e.type === 'tool/result') as EventOf<'tool/result'>[]).map((e) => ({
    callId: e.data.callId, code: e.data.error?.code ?? null,
    text: e.data.message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join(''),
  }))
const turnEnds = (evs: readonly LogEvent[]) => evs.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)

async function checkChild(dir: string, parent: readonly LogEvent[]): Promise<void> {
  const child = await events(dir, CHILD)
  // the child was repaired (its interrupted turn closed) and re-ran its prompt to the end
  expect(turnEnds(child)).toEqual(['interrupted', 'completed'])
  expect(verify(child).violations).toEqual([])
  expect(verifyChild('p', parent, (await readLog(join(dir, `${CHILD}.jsonl`))).header)).toEqual([])
}

describe('re-attach when the crashed step holds more than its children (docs/spec/lifecycle.md §10)', () => {
  it('L17 L19: a request of the step is open while the child runs: the child is re-attached, its answer is the call\'s result, then the step parks on the request and a decision runs the call', async () => {
    const dir = await crash('request')
    const before = await events(dir, 'p')
    expect(before.filter((e) => e.type === 'tool/approval-requested')).toHaveLength(1)
    expect(results(before)).toEqual([])

    const ran: string[] = []
    const parent = await resumeAgent({
      store: jsonlStore(dir), sessionId: 'p', system: 'parent', tools: tools(ran),
      model: scriptedModel(() => ({ text: 'parent done' })),
    })
    try {
      expect(await parent.whenSettled()).toBe('parked')
      expect(results(parent.events)).toEqual([{ callId: 'c1', code: null, text: 'Rayleigh scattering.' }])
      const open = parent.approvals()
      expect(open).toMatchObject([{ callId: 'r1', name: 'rm', session: 'p' }])
      expect(ran).toEqual([])
      await parent.decide(open[0]!.approvalId, { kind: 'approve' })
      await parent.whenIdle()
      await parent.flush()
    } finally {
      await parent.dispose()
    }
    const after = await events(dir, 'p')
    expect(ran).toEqual(['rm tmp'])
    expect(results(after)).toEqual([
      { callId: 'c1', code: null, text: 'Rayleigh scattering.' },
      { callId: 'r1', code: null, text: 'removed' },
    ])
    expect(turnEnds(after)).toEqual(['completed'])
    expect(after.filter((e) => e.type === 'child/spawned')).toHaveLength(1)
    expect(verify(after).violations).toEqual([])
    await checkChild(dir, after)
  }, 60_000)

  it('L6 L19: an ordinary call ran beside the child: the child is re-attached, the ordinary call gets its §8 repair result TOOL_OUTCOME_UNKNOWN, results in model order, the body is not run again', async () => {
    const dir = await crash('mixed')
    const before = await events(dir, 'p')
    expect(before.filter((e) => e.type === 'tool/call').map((e) => (e as EventOf<'tool/call'>).data.callId)).toEqual(['c1', 'w1'])
    expect(results(before)).toEqual([])

    const ran: string[] = []
    const parent = await resumeAgent({
      store: jsonlStore(dir), sessionId: 'p', system: 'parent', tools: tools(ran),
      model: scriptedModel(() => ({ text: 'parent done' })),
    })
    try {
      await parent.whenIdle()
      await parent.flush()
    } finally {
      await parent.dispose()
    }
    const after = await events(dir, 'p')
    expect(ran).toEqual([])
    const r = results(after)
    expect(r.map((x) => [x.callId, x.code])).toEqual([['c1', null], ['w1', 'TOOL_OUTCOME_UNKNOWN']])
    expect(r[0]!.text).toBe('Rayleigh scattering.')
    expect(r[1]!.text).toContain("The outcome of tool 'wait' is unknown")
    expect(turnEnds(after)).toEqual(['completed'])
    expect(verify(after).violations).toEqual([])
    await checkChild(dir, after)
  }, 60_000)
})
