import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { readLog } from '../../replay/read-log.js'
import { fork } from '../../replay/fork.js'
import { replay } from '../../replay/replay.js'
import { verify } from '../../replay/verify.js'
import { arbValidLog, checkerOptionsFor } from '../../testing/arbitraries/index.js'
import { cli, tempDir } from '../cli/helpers.js'
import { arbCommandList, arbScenario, MAX_STEPS, recordRun } from './agent-runs.js'
import { build, HEADER, jsonlBytes, opening, um } from './replay-helpers.js'
import { longRuns } from '../fc-runs.js'

/** P6 at one seq: the fork verifies, keeps the prefix verbatim, and has its surface, transcript turns and numbering. */
function checkForkAt(events: readonly LogEvent[], seq: number, check = {}): void {
  const f = fork({ header: HEADER, events }, seq, { ...check, sessionId: 'f', createdAt: 1 })
  const v = verify(f.events, check)
  if (!v.ok) throw new Error(`fork at ${seq}: ${JSON.stringify(v.violations.slice(0, 2))}`)
  expect(f.events.slice(0, seq + 1)).toEqual(events.slice(0, seq + 1))
  expect(f.header).toMatchObject({ parent: { session: HEADER.id, seq }, inheritedEventCount: seq + 1 })
  expect(f.events.at(-1)?.type).toBe('session/end-seed')
  const prefix = replay(events.slice(0, seq + 1))
  const forked = replay(f.events)
  // surface: the prefix's surface seqs stay, in order (closers may only add answers after them,
  // or replace what a cut compaction/prune owed)
  const owed = events[seq]!.type === 'compaction/summary' || events[seq]!.type === 'compaction/prune'
  if (!owed) expect(forked.surface.seqs.filter((q) => q <= seq)).toEqual(prefix.surface.seqs)
  // turn numbering continues: the next turn is the prefix's last + 1
  expect(forked.lifecycle.lastTurn).toBe(prefix.lifecycle.lastTurn)
  expect(forked.lifecycle.openTurn).toBeNull()
  // transcript: the same turns, in order
  const turnsOf = (s: typeof prefix) => (s.transcript.items as Array<{ kind?: string; turn?: number }>).filter((i) => i.turn !== undefined && i.kind === 'turn').map((i) => i.turn)
  expect(turnsOf(forked)).toEqual(turnsOf(prefix))
  // an empty inbox
  expect(forked.inbox).toEqual({ nextTurn: [], nextStep: [] })
}

// Each run forks at every seq of its log (a replay per seq, so a run costs the square of its length:
// agent runs of ~1,000 events cost seconds each): 60 runs each in `npm test`, the full 300
// with TURNLOG_LONG=1 (`npm run test:long`, and CI's Node 24 lane; test/fc-runs.ts longRuns).
// No timeout of their own: the project's (test/support/projects.ts) is 900 s in the long budget,
// which a 120 s one here overrode (CI's Node 24 lane, beside the Node 26 suite, ran past it).
describe('P6: a fork at every seq', () => {
  it('P6: forks of generated valid logs (arbValidLog) at every seq verify and keep the prefix surface, transcript turns and turn numbering', () => {
    const opts = { maxTurns: 4 }
    fc.assert(fc.property(arbValidLog(opts), (events) => {
      for (let seq = 0; seq < events.length; seq++) checkForkAt(events, seq, checkerOptionsFor(opts))
    }), { numRuns: longRuns(60, 300) })
  })

  it('P6: forks of agent runs (fuzzer-like, with cancels mid-step) at every seq verify', async () => {
    await fc.assert(fc.asyncProperty(arbScenario(), fc.scheduler(), arbCommandList(10), async (sc, s, cmds) => {
      const run = await recordRun(sc, s, cmds)
      for (let seq = 0; seq < run.events.length; seq++) checkForkAt(run.events, seq, { maxStepsPerTurn: MAX_STEPS })
    }), { numRuns: longRuns(60, 300) })
  })
})

describe('fork: examples (lifecycle "Deliberate choices" 5)', () => {
  it('L2 L12: an open turn gets forked closers; pending inbox items get canceled splices before session/end-seed; numbering continues', () => {
    const ev = build([...opening(), { type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [um('u2')] } },
      { type: 'agent/inbox/spliced', data: { target: 'next-step', start: 0, inserted: [um('u3')] } }])
    const f = fork(ev, ev.length - 1)
    expect(f.closers.map((e) => e.type)).toEqual(['step/end', 'turn/end', 'agent/inbox/spliced', 'agent/inbox/spliced', 'session/end-seed'])
    expect((f.closers[0]!.data as any).outcome).toEqual({ kind: 'failed', failure: { code: 'FORKED', message: expect.any(String) } })
    expect((f.closers[1]!.data as any).reason).toEqual({ kind: 'forked' })
    expect(f.closers[2]!.data).toEqual({ target: 'next-step', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' })
    expect(f.closers[3]!.data).toEqual({ target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' })
    expect(verify(f.events).ok).toBe(true)
    expect(replay(f.events).inbox).toEqual({ nextTurn: [], nextStep: [] })
    expect(f.header.parent).toEqual({ session: 'unknown', seq: ev.length - 1 })
  })

  it('a fork between turns adds only session/end-seed', () => {
    const ev = build([...opening(), { type: 'step/end', data: { turn: 1, step: 1, outcome: { kind: 'aborted' } } },
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } } }])
    const f = fork({ header: HEADER, events: ev }, ev.length - 1)
    expect(f.closers.map((e) => e.type)).toEqual(['session/end-seed'])
  })

  it('refuses a seq outside the log with INVALID_ARGUMENT', () => {
    const ev = build(opening())
    expect(() => fork(ev, ev.length)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
    expect(() => fork(ev, -1)).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }))
  })
})

describe('turnlog fork (CLI, in-process)', () => {
  it('writes the fork with its parent in the header; verify passes on it', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const ev = build(opening())
      const log = join(dir, 'parent.jsonl')
      writeFileSync(log, jsonlBytes(ev))
      const r = await cli(['fork', log, '--at', '3', '-o', join(dir, 'child.jsonl'), '--id', 'child'])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain('forked')
      const child = await readLog(join(dir, 'child.jsonl'))
      expect(child.header).toMatchObject({ id: 'child', parent: { session: 's1', seq: 3 }, inheritedEventCount: 4 })
      expect((await cli(['verify', join(dir, 'child.jsonl')])).code).toBe(0)
      expect(readFileSync(log)).toEqual(Buffer.from(jsonlBytes(ev)))
      expect((await cli(['fork', log, '--at', '99', '-o', join(dir, 'c2.jsonl')])).code).toBe(2)
      expect((await cli(['fork', log, '-o', join(dir, 'c3.jsonl')])).code).toBe(2)
    } finally {
      cleanup()
    }
  })
})
