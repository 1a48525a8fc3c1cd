import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/agent.js'
import type { AgentOptions } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { fork } from '../../replay/fork.js'
import { resumeAgent } from '../../replay/resume.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import { cli, ROOT, tempDir } from '../cli/helpers.js'
import { HEADER, jsonlBytes } from './replay-helpers.js'

const weather = (safe = true) => defineTool({ name: 'weather', description: 'Current weather', parameters: z.object({ city: z.string() }), isConcurrencySafe: () => safe, execute: async ({ city }) => ({ city, tempC: 21 }) }) as AnyTool
const search = (timeoutMs?: number) => defineTool({
  name: 'search', description: 'Search', parameters: z.object({ q: z.string() }), isConcurrencySafe: () => true,
  ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  execute: async ({ q }, { signal }) => {
    if (q === 'boom') throw new Error('search backend down')
    if (q === 'slow') await new Promise((r) => signal.addEventListener('abort', r))
    return `results for ${q}`
  },
}) as AnyTool

const SCRIPT: ScriptedEntry[] = [
  { toolCalls: [{ name: 'weather', args: { city: 'Paris' } }, { name: 'weather', args: { city: 'Tokyo' } }, { name: 'search', args: { q: 'boom' } }] },
  { throw: { code: 'SERVER', message: 'upstream 503' } },
  { text: 'Paris is sunny.', chunkSize: 5 },
  { text: 'Blocked? no.' },
]

const base = (): Omit<AgentOptions, 'model'> => ({
  tools: [weather(), search()],
  system: 'You are terse.',
  timers: { sleep: async () => {}, random: () => 0.5 },
})

/** Records a session: tools in parallel (one throws), a retried SERVER failure, a steer, two prompts. */
async function record(): Promise<readonly LogEvent[]> {
  let n = 0
  let t = 1_764_450_000_000
  const agent = createAgent({ ...base(), model: scriptedModel(SCRIPT, { info: { name: 'scripted' } }), clock: () => (t += 3), ids: () => `m${++n}` })
  agent.followup('Weather in Paris and Tokyo?')
  agent.steer('Be brief.')
  await agent.whenIdle()
  agent.followup('Thanks')
  await agent.whenIdle()
  return agent.events
}

const seqOf = (events: readonly LogEvent[], pred: (e: LogEvent) => boolean) => events.find(pred)!.seq

describe('reexecute: a recorded session reproduces (P4)', () => {
  it('P4: the same code reproduces the log exactly, time included', async () => {
    const events = await record()
    const r = await reexecute(events, base())
    expect(r).toEqual({ ok: true, eventCount: events.length })
  })

  it('P4: served outcomes: TOOL_TIMEOUT (the call\'s timer fires), TOOL_ERROR, a tools/execute HOOK_ERROR', async () => {
    let t = 0
    const opts = {
      tools: [weather(), search(50)],
      system: 's',
      timers: { sleep: async () => {}, random: () => 0.5 },
      hooks: { 'tools/execute': async (p: { args: unknown }, next: () => Promise<unknown>) => { if ((p.args as { city?: string }).city === 'Oslo') throw new Error('hook says no'); return next() } },
    } as unknown as Omit<AgentOptions, 'model'>
    const agent = createAgent({ ...opts, clock: () => (t += 1), model: scriptedModel([{ toolCalls: [{ name: 'search', args: { q: 'slow' } }, { name: 'search', args: { q: 'boom' } }, { name: 'weather', args: { city: 'Oslo' } }] }, { text: 'done' }]) })
    agent.followup('go')
    await agent.whenIdle()
    const codes = agent.events.filter((e) => e.type === 'tool/result').map((e) => (e.data as any).error?.code)
    expect(codes).toEqual(['TOOL_TIMEOUT', 'TOOL_ERROR', 'HOOK_ERROR'])
    const r = await reexecute(agent.events, { tools: opts.tools!, system: 's' })
    expect(r.ok).toBe(true)
  })

  it('P4: a resumed session (its inherited prefix ends with closers) re-executes from the prefix', async () => {
    const events = await record()
    const cut = events.findIndex((e) => e.type === 'assistant/chunk') + 1
    const resumed = await resumeAgent({ log: { header: HEADER, events: events.slice(0, cut) }, ...base(), model: scriptedModel([{ text: 'again' }]), clock: () => 1 })
    await resumed.whenIdle()
    resumed.followup('more')
    await resumed.whenIdle()
    // a fork's seed marks the inherited prefix: re-execute the fork's continuation
    const f = fork({ header: HEADER, events: resumed.events }, resumed.events.length - 1)
    const agent = createAgent({ ...base(), prefix: f.events, model: scriptedModel([{ text: 'forked reply' }]), clock: () => 7, ids: () => 'x1' })
    agent.followup('continue')
    await agent.whenIdle()
    const r = await reexecute(agent.events, base())
    expect(r.ok).toBe(true)
  })
})

describe('reexecute: one change, one divergence at the right seq (P4)', () => {
  it('P4: a changed hook decision (pre-step rejects) diverges at the first step/start', async () => {
    const events = await record()
    const r = await reexecute(events, { ...base(), hooks: { 'agent/pre-step': () => ({ kind: 'reject' }) } })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.divergence.seq).toBe(seqOf(events, (e) => e.type === 'step/start'))
    expect(r.divergence.kind).toBe('mismatch')
    expect(r.divergence.expected?.type).toBe('step/start')
    expect(r.divergence.actual?.data).toMatchObject({ reason: { kind: 'blocked' } })
    expect(r.divergence.diff).toContain('expected step/start, got turn/end')
  })

  it('P4: a changed tool order (weather is no longer parallel-safe) diverges at the second tool/call', async () => {
    const events = await record()
    const r = await reexecute(events, { ...base(), tools: [weather(false), search()] })
    expect(r.ok).toBe(false)
    if (r.ok) return
    const calls = events.filter((e) => e.type === 'tool/call')
    expect(r.divergence.seq).toBe(calls[1]!.seq)
    expect(r.divergence.expected?.type).toBe('tool/call')
    expect(r.divergence.actual?.type).toBe('tool/result')
  })

  it('P4: a changed system prompt diverges at the first request/header, with the system in the diff', async () => {
    const events = await record()
    const r = await reexecute(events, { ...base(), system: 'You are verbose.' })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.divergence.seq).toBe(seqOf(events, (e) => e.type === 'request/header'))
    expect(r.divergence.diff).toContain('data.system: "You are terse." → "You are verbose."')
  })

  it('P4: a changed retry rule (SERVER no longer retried) diverges at the llm/retry', async () => {
    const events = await record()
    const r = await reexecute(events, { ...base(), retry: { retryOn: ['RATE_LIMIT'] } })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.divergence.seq).toBe(seqOf(events, (e) => e.type === 'llm/retry'))
    expect(r.divergence.actual?.data).toMatchObject({ reason: { kind: 'error' } })
  })

  it('P4: a changed clock is reported on time unless compareTime is false', async () => {
    const events = await record()
    const shifted = events.map((e) => ({ ...e, time: e.time + 1 }))
    expect((await reexecute(shifted, base())).ok).toBe(true) // the clock serves the recorded times
    const r = await reexecute(events.slice(0, -1), base())
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.divergence.kind).toBe('extra')
  })
})

describe('turnlog reexec (CLI, in-process)', () => {
  it('prints OK for a reproduced fixture and the divergence (exit 1) for a changed system prompt', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const events = await record()
      const log = join(dir, 'session.jsonl')
      writeFileSync(log, jsonlBytes(events))
      const mod = join(ROOT, 'test/replay/fixtures/reexec-tools.mjs')
      const ok = await cli(['reexec', log, '--tools', mod])
      expect(ok.stderr).toBe('')
      expect(ok.code).toBe(0)
      expect(ok.stdout).toContain(`re-executed ${events.length} events, identical`)
      const changed = join(dir, 'changed.mjs')
      writeFileSync(changed, `export * from ${JSON.stringify(mod)}\nexport const system = 'You are verbose.'\n`)
      const bad = await cli(['reexec', log, '--tools', changed])
      expect(bad.code).toBe(1)
      expect(bad.stdout).toContain(`DIVERGED ${log} at seq ${seqOf(events, (e) => e.type === 'request/header')}`)
      expect(bad.stdout).toContain('data.system')
      const missing = await cli(['reexec', log, '--tools', join(dir, 'nope.mjs')])
      expect(missing.code).toBe(2)
    } finally {
      cleanup()
    }
  })
})
