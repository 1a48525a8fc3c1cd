/**
 * P4 on logs that hold recorded facts of the outside world (issue 10 item 9): a step with more
 * concurrency-safe calls than the pool cap, the closers of `repair`, and a resumed session
 * (prefix + closers + resume splice + resume turn + the resumed run).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, type TurnlogAgent } from '../../agent/agent.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ModelAdapter } from '../../models/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { repairEvents } from '../../replay/repair.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool } from '../../tools/types.js'
import { HEADER, jsonlBytes } from './replay-helpers.js'

const lookup = () => defineTool({
  name: 'lookup', description: 'Look up', parameters: z.object({ n: z.number() }), isConcurrencySafe: () => true,
  execute: async ({ n }) => ({ n }),
}) as AnyTool

const calls = (k: number) => ({ toolCalls: Array.from({ length: k }, (_, n) => ({ name: 'lookup', args: { n } })) })

function clock(): () => number {
  let t = 1_764_450_000_000
  return () => (t += 3)
}

async function diverges(events: readonly LogEvent[], opts: Parameters<typeof reexecute>[1] = {}): Promise<string | null> {
  const r = await reexecute(events, { tools: [lookup()], stallMs: 300, ...opts })
  return r.ok ? null : r.divergence.diff
}

describe('P4: more calls than the pool cap', () => {
  for (const [k, cap] of [[12, 10], [5, 2], [3, 1], [25, 10]] as const) {
    it(`P4: one step of ${k} instant concurrency-safe calls at maxParallelToolCalls ${cap} re-executes identically`, async () => {
      let n = 0
      const a = createAgent({ model: scriptedModel([calls(k), { text: 'done' }]), tools: [lookup()], clock: clock(), ids: () => `i${++n}`, maxParallelToolCalls: cap })
      a.followup('go')
      await a.whenIdle()
      expect(verify(a.events).ok).toBe(true)
      expect(await diverges(a.events, { maxParallelToolCalls: cap })).toBeNull()
    })
  }
})

/** A model that plays `script` and then hangs mid-stream on the request after it: the crash point. */
function crashingModel(script: Parameters<typeof scriptedModel>[0], onHang: () => void): ModelAdapter {
  const inner = scriptedModel(script)
  let i = 0
  const len = Array.isArray(script) ? script.length : Infinity
  return {
    info: { name: 'scripted' },
    stream(req, signal) {
      if (i++ < len) return inner.stream(req, signal)
      return (async function* () {
        yield { type: 'block-start' as const, index: 0, blockType: 'text' as const }
        yield { type: 'text-delta' as const, index: 0, text: 'half' }
        onHang()
        await new Promise(() => {})
      })()
    },
  }
}

describe('P4: repaired and resumed logs (closers and resume boundaries are recorded facts)', () => {
  it('P4 P5: a log cut mid-turn (a call started, no result) and repaired re-executes identically, closers included', async () => {
    let n = 0
    let hung!: () => void
    const stuck = new Promise<void>((r) => (hung = r))
    const slow = defineTool({
      name: 'lookup', description: 'Look up', parameters: z.object({ n: z.number() }), isConcurrencySafe: () => true,
      execute: async ({ n: x }) => { if (x === 1) { hung(); await new Promise(() => {}) } return { n: x } },
    }) as AnyTool
    const a = createAgent({ model: scriptedModel([calls(3), { text: 'never' }]), tools: [slow], clock: clock(), ids: () => `i${++n}` })
    a.followup('go')
    await stuck
    const repaired = repairEvents({ header: HEADER, events: [...a.events] })
    expect(repaired.closers.map((e) => e.type)).toContain('turn/end')
    expect(repaired.closers.some((e) => (e.data as any).error?.code === 'TOOL_OUTCOME_UNKNOWN')).toBe(true)
    expect(await diverges(repaired.log.events)).toBeNull()
  })

  it('P4 P5: a log cut mid-stream and repaired (interrupted message, failed step) re-executes identically', async () => {
    let n = 0
    let hung!: () => void
    const stuck = new Promise<void>((r) => (hung = r))
    const a = createAgent({ model: crashingModel([calls(2)], hung), tools: [lookup()], clock: clock(), ids: () => `i${++n}` })
    a.followup('go')
    await stuck
    const repaired = repairEvents({ header: HEADER, events: [...a.events] })
    expect(await diverges(repaired.log.events)).toBeNull()
  })

  it('P4 §8: a resumed session (prefix + closers + re-insertion + resume turn + resumed run + a later followup) re-executes identically', async () => {
    let n = 0
    let hung!: () => void
    const stuck = new Promise<void>((r) => (hung = r))
    const a = createAgent({ model: crashingModel([calls(2)], hung), tools: [lookup()], clock: clock(), ids: () => `i${++n}` })
    a.followup('go')
    a.followup('second')
    await stuck
    const crashed = [...a.events]
    const b = await resumeAgent({ log: { header: HEADER, events: crashed }, model: scriptedModel([calls(2), { text: 'ok' }, { text: 'two' }, { text: 'three' }]), tools: [lookup()], clock: clock(), ids: () => `j${++n}` }) as TurnlogAgent
    await b.whenIdle()
    b.followup('third')
    await b.whenIdle()
    expect(b.events.some((e) => e.type === 'turn/start' && (e.data as any).cause?.kind === 'resume')).toBe(true)
    expect(verify(b.events).ok).toBe(true)
    expect(await diverges(b.events)).toBeNull()
  })
})

describe('P4 on repaired demo sessions (the README recipe: head -c N demo.jsonl | repair | reexec)', () => {
  it('P4 P5: the demo session cut at every event boundary and repaired re-executes identically', async () => {
    const { demoHooks, demoTools, runDemoSession } = await import('../../cli/demo-session.js')
    const { header, events } = await runDemoSession({ startTime: 1_800_000_000_000 })
    const failures: string[] = []
    for (let cut = 1; cut <= events.length; cut++) {
      const repaired = repairEvents({ header, events: events.slice(0, cut) })
      const r = await reexecute(repaired.log, { tools: demoTools(), hooks: demoHooks, stallMs: 300 })
      if (!r.ok) failures.push(`cut ${cut}: ${r.divergence.diff.split('\n')[0]}`)
    }
    expect(failures).toEqual([])
  })

  it('P4 P5: the README recipe (14000 bytes of demo.jsonl, repaired) re-executes identically', async () => {
    const { demoHooks, demoTools, runDemoSession } = await import('../../cli/demo-session.js')
    const { repair } = await import('../../replay/repair.js')
    const { header, events } = await runDemoSession({ startTime: 1_800_000_000_000 })
    const bytes = jsonlBytes(events, header)
    const repaired = await repair(bytes.subarray(0, 14_000))
    expect(repaired.closers.length).toBeGreaterThan(0)
    const r = await reexecute(repaired.log, { tools: demoTools(), hooks: demoHooks, stallMs: 300 })
    expect(r.ok ? null : r.divergence.diff).toBeNull()
  })
})
