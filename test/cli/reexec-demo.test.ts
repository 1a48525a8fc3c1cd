/** P4 on the README's main job: the demo session re-executes against today's code, event for event. */
import { describe, expect, it } from 'vitest'
import { demoHooks, demoTools, runDemoSession } from '../../cli/demo-session.js'
import { reexecute } from '../../replay/index.js'

describe('the demo session', () => {
  it('P4: re-executes to the identical log with the demo tools and hooks (examples/demo-tools.mjs)', async () => {
    const { header, events } = await runDemoSession({ startTime: 1_800_000_000_000 })
    const r = await reexecute({ header, events }, { tools: demoTools(), hooks: demoHooks })
    expect(r).toMatchObject({ ok: true })
  })

  it('P4: without the pre-step hook the re-execution diverges where the prompt was rejected', async () => {
    const { header, events } = await runDemoSession({ startTime: 1_800_000_000_000 })
    const r = await reexecute({ header, events }, { tools: demoTools() })
    expect(r.ok).toBe(false)
    if (r.ok) return
    const blockedEnd = events.find((e) => e.type === 'turn/end' && (e.data as { reason: { kind: string } }).reason.kind === 'blocked')!
    // the recorded turn 2 ends blocked right after its claim; today's code enters the prompt instead
    expect(r.divergence.seq).toBe(blockedEnd.seq)
  })
})
