/**
 * `turnlog replay` shows what a session waited for (docs/spec/lifecycle.md §9, §10): approval requests,
 * decisions (who, when, edited arguments, reason, how long), parked time, a budget end with its
 * limit, a child session with where to read it (in the parent) and its parent (in the child);
 * `--json` holds the same facts in the transcript; `--at` lists the open approvals and wakeups.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { writeLog } from '../../replay/write-log.js'
import { approvalSession, budgetSession, CHILD_ID, familySession } from '../fixtures/view-logs.js'
import { cli, tempDir } from './helpers.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())
let approvals: string
let approvalEvents: LogEvent[]
let budget: string
const family = join(tmp.dir, 'family')

beforeAll(async () => {
  approvalEvents = (await approvalSession()).events
  approvals = join(tmp.dir, 'ap1.jsonl')
  await writeLog(approvals, { header: { type: 'session', format: 1, id: 'ap1', createdAt: 0 }, events: approvalEvents })
  budget = join(tmp.dir, 'bu1.jsonl')
  await writeLog(budget, { header: { type: 'session', format: 1, id: 'bu1', createdAt: 0 }, events: await budgetSession() })
  await familySession(family)
})

/** The lines that contain each fragment, in this order (each after the previous). */
function inOrder(out: string, fragments: string[]): void {
  const lines = out.split('\n')
  let at = -1
  for (const f of fragments) {
    const i = lines.findIndex((l, k) => k > at && l.includes(f))
    expect(i, `missing or out of order: ${f}\n${out}`).toBeGreaterThan(at)
    at = i
  }
}

describe('turnlog replay: approvals, parked time, budgets, children', () => {
  it('L17/L18: requests, parked time and decisions (who, edited arguments, reason, wait) in log order inside their step', async () => {
    const r = await cli(['replay', approvals])
    expect(r.code).toBe(0)
    inOrder(r.stdout, [
      'Turn 1',
      'assistant  → read({"path":"a"})',
      '? approval m2 asked for rm({"path":"b"}) c2 #17',
      '? approval m3 asked for rm({"path":"c"}) c3 #18',
      'tool       read c1 ← read a #20',
      '⏸ parked, waiting for m2, m3 · 3 h 2 min (until #25) #21',
      '✓ approval m3 approved by ann with edited arguments {"path":"c2"} after 3 h 2 min, at 2025-11-30T',
      '✗ approval m2 denied by bob: keep b after 3 h 2 min',
      'tool       rm c2 ← ✗ DENIED',
      'tool       rm c3 ← rm c2 #28',
      'Turn 2',
      'user (wakeup w-done)',
      '? approval m6 asked for rm({"path":"d"}) c4 #56',
      '⏸ parked, waiting for m6 · still parked: the log ends here #57',
      'Summary',
      '  approvals    3 asked · 1 approved, 1 denied, 1 open · parked 3 h 2 min · parked now',
      '  wakeups      3 set · 1 fired · 1 canceled · 1 pending (next w-pending at 2025-11-30T',
    ])
  })

  it('--json: the transcript steps carry approvals, parked and children', async () => {
    const r = await cli(['replay', approvals, '--json'])
    expect(r.code).toBe(0)
    const state = JSON.parse(r.stdout)
    const step = state.transcript.items[0].items[0]
    expect(step.approvals.map((a: any) => [a.approvalId, a.decision.kind, a.decision.by])).toEqual([
      ['m2', 'deny', { kind: 'user', id: 'bob' }], ['m3', 'approve', { kind: 'user', id: 'ann' }],
    ])
    expect(step.approvals[1].decision.arguments).toBe('{"path":"c2"}')
    expect(step.parked[0]).toMatchObject({ seq: 21, end: { seq: 25 } })
  })

  it('--at SEQ lists the open approvals and the pending wakeups as of SEQ', async () => {
    const r = await cli(['replay', approvals, '--at', '21'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('  approvals    2 open · parked since seq 21')
    expect(r.stdout).toContain('    m2 rm({"path":"b"}) c2 #17')
    const end = await cli(['replay', approvals, '--at', String(approvalEvents.length - 1)])
    expect(end.stdout).toContain('  wakeups      1 pending')
    expect(end.stdout).toContain('    w-pending due 2025-11-30T')
  })

  it('L20: a budget end is labelled with its limit', async () => {
    const r = await cli(['replay', budget])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('■ turn 1 ended: budget: tokens 1,200/1,000 (turn)')
  })

  it('L19: the parent shows its child with the file to read; the child names its parent and call', async () => {
    const parent = await cli(['replay', join(family, 'p1.jsonl')])
    expect(parent.code).toBe(0)
    inOrder(parent.stdout, [
      'assistant  → research(',
      `↳ child session ${CHILD_ID} (call c1) · turnlog replay ${join(family, `${CHILD_ID}.jsonl`)}`,
      'tool       research c1 ← Rayleigh scattering.',
      `  children     1 (${CHILD_ID})`,
    ])
    const child = await cli(['replay', join(family, `${CHILD_ID}.jsonl`)])
    expect(child.code).toBe(0)
    expect(child.stdout.split('\n')[0]).toContain(`session ${CHILD_ID} · `)
    expect(child.stdout.split('\n')[0]).toMatch(/child of session p1 \(call c1, seq \d+\)/)
  })
})
