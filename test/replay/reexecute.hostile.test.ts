/**
 * Issue 24 item 4: re-execution on hostile logs ends. A splice that logs nothing when re-issued (an
 * empty one, a removal past the end, a cancel-clear of an empty list) used to count as progress, so
 * the pump re-issued it forever at 100% CPU (`turnlog reexec` on a 2-line log). Every log must end
 * with a result (reproduced or a divergence) or a coded error (P4; docs/spec/reliability.md "Bad input": never hang).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/errors.js'
import type { LogEvent } from '../../events/index.js'
import { reexecute } from '../../replay/reexecute.js'
import { fcRuns } from '../fc-runs.js'
import { cli, ROOT, tempDir } from '../cli/helpers.js'

const T0 = 1_764_450_000_000
const HUNG = Symbol('hung')

/** reexecute, or HUNG when it has not settled after `ms` (a hang detector for the property's shrinking,
 * far above what any of these tiny logs needs; the assertion is "it ended", not how fast). */
async function bounded(events: readonly LogEvent[], ms = 10_000): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const hung = new Promise<typeof HUNG>((r) => (timer = setTimeout(() => r(HUNG), ms)))
  try {
    return await Promise.race([
      reexecute(events, { stallMs: 20, maxAttempts: 4 }).catch((err: unknown) => ({ thrown: err })),
      hung,
    ])
  } finally {
    clearTimeout(timer)
  }
}

function expectEnded(r: unknown): void {
  expect(r).not.toBe(HUNG)
  if (r !== null && typeof r === 'object' && 'thrown' in r) {
    // a refusal is a coded error, never a crash of the host
    expect(TurnlogError.is((r as { thrown: unknown }).thrown)).toBe(true)
    return
  }
  expect(r).toHaveProperty('ok')
}

const emptySplice = (seq: number): LogEvent =>
  ({ seq, time: T0 + seq, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [] } }) as unknown as LogEvent

describe('reexecute on hostile logs ends (issue 24 item 4; P4, "Bad input")', () => {
  it('P4: a log of one empty splice diverges at seq 0 (the splice logs nothing) instead of spinning', async () => {
    const r = await bounded([emptySplice(0)])
    expect(r).not.toBe(HUNG)
    expect(r).toMatchObject({ ok: false, divergence: { seq: 0, kind: 'missing' } })
    const d = (r as { divergence: { diff: string } }).divergence
    expect(d.diff).toMatch(/logged nothing/)
  })

  it('P4: `turnlog reexec` on the 2-line log exits 1 with the divergence', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const file = join(dir, 'empty-splice.jsonl')
      writeFileSync(file, `{"type":"session","format":1,"id":"x","createdAt":${T0}}\n${JSON.stringify(emptySplice(0))}\n`)
      const run = await Promise.race([cli(['reexec', file]), new Promise<typeof HUNG>((r) => setTimeout(() => r(HUNG), 10_000).unref())])
      expect(run).not.toBe(HUNG)
      const { code, stdout } = run as { code: number; stdout: string }
      expect(code).toBe(1)
      expect(stdout).toMatch(/DIVERGED .* at seq 0 \(missing\)/)
    } finally {
      cleanup()
    }
  })

  const message = fc.record({
    id: fc.constantFrom('m1', 'm2', 'm3'),
    text: fc.string({ maxLength: 3 }),
    kind: fc.constantFrom('user', 'tool'),
  }).map(({ id, text, kind }) => ({ id, role: 'user', content: [{ type: 'text', text }], source: kind === 'tool' ? { kind: 'tool', callId: 'c1' } : { kind: 'user' } }))
  const splice = fc.record({
    target: fc.constantFrom('next-turn', 'next-step'),
    start: fc.integer({ min: 0, max: 3 }),
    removedCount: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
    inserted: fc.array(message, { maxLength: 2 }),
    outcome: fc.option(fc.constant('canceled'), { nil: undefined, freq: 4 }),
  }).map((d) => ({ type: 'agent/inbox/spliced', data: Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined)) }))
  const other = fc.oneof(
    fc.integer({ min: 1, max: 3 }).map((turn) => ({ type: 'turn/start', data: { turn } })),
    fc.integer({ min: 1, max: 3 }).map((turn) => ({ type: 'turn/end', data: { turn, reason: { kind: 'completed' } } })),
    fc.constant({ type: 'session/end-seed', data: {} }),
  )
  const log = fc.array(fc.oneof({ arbitrary: splice, weight: 4 }, { arbitrary: other, weight: 1 }), { minLength: 1, maxLength: 6 })
    .map((xs) => xs.map((x, seq) => ({ seq, time: T0 + seq, ...x }) as unknown as LogEvent))

  it('P4: logs of empty, out-of-range and odd splices end with a result or a coded error', async () => {
    await fc.assert(
      fc.asyncProperty(log, async (events) => {
        expectEnded(await bounded(events))
      }),
      { numRuns: fcRuns(150) },
    )
  }, 120_000)
})

describe('reexecute on a log cut mid-stream (issue 24 item 4)', () => {
  it('P4: the agent still waiting past the recorded end is an `extra` divergence with a readable diff, not a TypeError', async () => {
    const lines = readFileSync(join(ROOT, 'examples/weather.jsonl'), 'utf8').split('\n').filter(Boolean)
    // seq 0..8: the model stream is cut after 3 chunks (the header without tools: none are passed)
    const events = lines.slice(1, 10).map((l) => JSON.parse(l) as LogEvent & { data: { tools?: unknown[] } })
    events.find((e) => e.type === 'request/header')!.data.tools = []
    const r = await bounded(events)
    expect(r).toMatchObject({ ok: false, divergence: { seq: 9, kind: 'extra', expected: null, actual: null } })
    expect((r as { divergence: { diff: string } }).divergence.diff).toMatch(/^seq 9: the recorded log ends at seq 8, but the agent waits /)
  })
})
