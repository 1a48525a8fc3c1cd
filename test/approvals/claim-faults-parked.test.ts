/**
 * A JSONL decision claim that fails while parked (docs/spec/lifecycle.md §9; docs/spec/reliability.md "Faults"): the
 * agent's own decisions — a cancel's `by: canceled`, a steer's `by: superseded`, an expiry's
 * `by: expired` — are claimed in the store first. A claim fault is reported (`agent/error`, coded)
 * and the decision is retried (bounded backoff; the expiry timer re-armed), so the cancel, the
 * steer and the expiry still take effect exactly once and nothing wedges the agent.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/index.js'
import { TurnlogError, type EventOf, type LogEvent } from '../../events/index.js'
import { readLog } from '../../replay/read-log.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { faultyFs } from '../stores/faulty-fs.js'
import { scriptedModel } from '../../models/index.js'
import { countingTool, manualClock, manualTimers, settle } from './helpers.js'

/** Asks for `rm b` until the conversation holds a tool result, then answers. */
const rmOnce = () => scriptedModel((request) => (request.messages.some((m) => m.role === 'tool') ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'b' }, id: 'c1' }] }))

const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

/** An agent on a JSONL store with a fault-injecting fs, parked on `rm b`. */
async function parkedAgent(opts: { timeoutMs?: number; clock?: () => number; timers?: ReturnType<typeof manualTimers>['timers'] } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-claimpark-'))
  dirs.push(dir)
  const ffs = faultyFs()
  const { tool, runs } = countingTool('rm', { needsApproval: true, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) })
  const agent = createAgent({
    store: jsonlStore(dir, { fs: ffs }), sessionId: 's', model: rmOnce(), tools: [tool], system: 'sys',
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.timers ? { timers: opts.timers } : {}),
  })
  const errors: unknown[] = []
  agent.on('agent/error', ({ error }) => errors.push(error))
  agent.followup('delete b')
  expect(await agent.whenSettled()).toBe('parked')
  const approvalId = agent.approvals()[0]!.approvalId
  /** The log on disk after the agent is disposed: it verifies. */
  const logged = async () => {
    await agent.dispose()
    const ev = (await readLog(join(dir, 's.jsonl'))).events as LogEvent[]
    expect(verify(ev).violations).toEqual([])
    return ev
  }
  return { agent, ffs, runs, errors, approvalId, logged }
}

const decided = (ev: readonly LogEvent[]) => ev.filter((e): e is EventOf<'tool/approval-decided'> => e.type === 'tool/approval-decided').map((e) => [e.data.approvalId, e.data.decision.kind, e.data.by.kind])
const results = (ev: readonly LogEvent[]) => ev.filter((e): e is EventOf<'tool/result'> => e.type === 'tool/result').map((e) => e.data.error?.code ?? 'ok')
const ends = (ev: readonly LogEvent[]) => ev.filter((e): e is EventOf<'turn/end'> => e.type === 'turn/end').map((e) => e.data.reason.kind)
const codes = (errors: readonly unknown[]) => errors.map((e) => (TurnlogError.is(e) ? e.code : String(e)))

describe('a decision claim that fails while parked (docs/spec/lifecycle.md §9)', () => {
  it('L18 R9: a cancel whose claim fails once is reported and retried: the turn ends aborted, the request decided canceled exactly once', async () => {
    const p = await parkedAgent()
    p.ffs.failClaim('sync', 'EIO')
    p.agent.cancel()
    await p.agent.whenIdle()
    expect(p.agent.status).toBe('idle')
    expect(codes(p.errors)).toEqual(['FSYNC_FAILED'])
    const ev = await p.logged()
    expect(decided(ev)).toEqual([[p.approvalId, 'deny', 'canceled']])
    expect(results(ev)).toEqual(['ABORTED_BEFORE_DISPATCH'])
    expect(ends(ev)).toEqual(['aborted'])
    expect(p.runs).toEqual([])
  })

  it('L18 R9: a steer whose supersede claim fails once is reported and retried: superseded exactly once, the steer enters the next step', async () => {
    const p = await parkedAgent()
    p.ffs.failClaim('link', 'EIO')
    const id = p.agent.steer('no, leave b alone')
    await p.agent.whenIdle()
    expect(p.agent.status).toBe('idle')
    expect(codes(p.errors)).toEqual(['IO_ERROR'])
    const ev = await p.logged()
    expect(decided(ev)).toEqual([[p.approvalId, 'deny', 'superseded']])
    expect(results(ev)).toEqual(['DENIED'])
    expect(ev.filter((e): e is EventOf<'user/message'> => e.type === 'user/message').map((e) => e.data.message.id)).toContain(id)
    expect(ends(ev)).toEqual(['completed'])
    expect(p.runs).toEqual([])
  })

  it('R9: an expiry whose claim fails once is reported and re-armed: it expires exactly once', async () => {
    const clock = manualClock()
    const timers = manualTimers()
    const p = await parkedAgent({ timeoutMs: 60_000, clock: clock.now, timers: timers.timers })
    expect(timers.armed()).toEqual([60_000])
    p.ffs.failClaim('create', 'EMFILE')
    clock.advance(60_000)
    timers.fire()
    await settle()
    expect(codes(p.errors)).toEqual(['IO_ERROR'])
    expect(p.agent.status).toBe('parked') // nothing was decided …
    expect(timers.armed()).toHaveLength(1) // … and the expiry is armed again
    timers.fire()
    await p.agent.whenIdle()
    expect(p.agent.status).toBe('idle')
    const ev = await p.logged()
    expect(decided(ev)).toEqual([[p.approvalId, 'deny', 'expired']])
    expect(results(ev)).toEqual(['APPROVAL_EXPIRED'])
    expect(ends(ev)).toEqual(['completed'])
    expect(p.runs).toEqual([])
  })
})
