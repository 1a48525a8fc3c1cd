/**
 * Issue 9 item 3: the races of docs/spec/lifecycle.md §6 from the `agent/status` listener and from
 * `runMaintenance`. R5: a cancel is never lost; dispose waits for the turn to close (L2: every
 * `turn/start` has its `turn/end`) and never starts queued work.
 */
import { describe, expect, it } from 'vitest'
import type { Timers } from '../../agent/index.js'
import { scriptedModel } from '../../models/index.js'
import { data, endKinds, makeAgent, valid } from './contain-helpers.js'

function countingModel() {
  const base = scriptedModel(() => ({ text: 'answer' }))
  const m = { calls: 0, stream: (req: Parameters<typeof base.stream>[0], s: AbortSignal) => (m.calls++, base.stream(req, s)) }
  return m
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
}

describe('status-listener races (item 3)', () => {
  it('R5: cancel() from the agent/status listener as the status becomes running ends that turn aborted; no model call', async () => {
    const model = countingModel()
    const { agent } = makeAgent(null, { model })
    const off = agent.on('agent/status', (e) => {
      if (e.status === 'running') agent.cancel({ kind: 'user' })
    })
    agent.followup('hi')
    await agent.whenIdle()
    expect(model.calls).toBe(0)
    expect(data(agent.events, 'turn/end').map((d) => d.reason)).toEqual([{ kind: 'aborted', cause: { kind: 'user' } }])
    expect(agent.status).toBe('idle')
    valid(agent.events)
    off()
    agent.followup('again')
    await agent.whenIdle()
    expect(endKinds(agent.events)).toEqual(['aborted', 'completed'])
  })

  it('L2/R5: dispose() from the agent/status listener closes the turn it opened (turn/end aborted disposed); no model call', async () => {
    const model = countingModel()
    const { agent } = makeAgent(null, { model })
    let disposing: Promise<void> | undefined
    agent.on('agent/status', (e) => {
      if (e.status === 'running') disposing ??= agent.dispose()
    })
    agent.followup('hi')
    await disposing
    expect(model.calls).toBe(0)
    expect(data(agent.events, 'turn/start').length).toBe(data(agent.events, 'turn/end').length)
    expect(data(agent.events, 'turn/end').map((d) => d.reason)).toEqual([{ kind: 'aborted', cause: { kind: 'disposed' } }])
    valid(agent.events)
  })

  it('R8: dispose() during runMaintenance aborts the task\'s signal, waits for it, and never starts the queued followup', async () => {
    const model = countingModel()
    const { agent } = makeAgent(null, { model })
    let signal!: AbortSignal
    let finish!: (v: string) => void
    const m = agent.runMaintenance((s) => {
      signal = s
      return new Promise<string>((r) => (finish = r))
    })
    agent.followup('queued during maintenance') // latched
    let disposed = false
    const d = agent.dispose().then(() => (disposed = true))
    expect(signal.aborted).toBe(true)
    await settle()
    expect(disposed).toBe(false) // it waits for the task
    finish('done')
    await d
    expect(await m).toBe('done')
    await settle()
    expect(model.calls).toBe(0)
    expect(data(agent.events, 'turn/start')).toEqual([])
    valid(agent.events)
  })

  it('R8: dispose() during a maintenance task that never settles returns after the grace period', async () => {
    const fired: Array<() => void> = []
    const timers: Partial<Timers> = { setTimeout: (fn) => (fired.push(fn), fired.length), clearTimeout: () => {} }
    const { agent, errors } = makeAgent([], { timers, cancelGraceMs: 50, expectErrors: ['runMaintenance'] })
    void agent.runMaintenance(() => new Promise(() => {}))
    let disposed = false
    const d = agent.dispose().then(() => (disposed = true))
    await settle()
    expect(disposed).toBe(false)
    for (const f of fired) f()
    await d
    expect(errors.map((e) => e.where)).toContain('runMaintenance')
  })
})
