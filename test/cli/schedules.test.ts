/**
 * `turnlog schedules LOG` (docs/spec/lifecycle.md §10): the pending wakeups with their due times and the ones
 * that fired or were canceled; `--json`; `--cancel ID` appends `schedule/canceled` through the
 * store's single writer (the log still verifies, W1), refuses an id that is not pending, and refuses
 * while another handle owns the session (nothing written).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeLog } from '../../replay/write-log.js'
import { jsonlStore } from '../../stores/jsonl/store.js'
import { approvalSession } from '../fixtures/view-logs.js'
import { cli, tempDir } from './helpers.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())
const log = join(tmp.dir, 'ap1.jsonl')
beforeAll(async () => {
  const { events } = await approvalSession()
  await writeLog(log, { header: { type: 'session', format: 1, id: 'ap1', createdAt: 0 }, events })
})

describe('turnlog schedules', () => {
  it('W1/W2: lists the pending wakeup with its due time, and the fired and canceled ones; --json has the reducer\'s pending list', async () => {
    const r = await cli(['schedules', log])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.split('\n')
    expect(lines[0]).toBe(`${log}: 1 pending wakeup`)
    expect(lines[1]).toMatch(/^ {2}w-pending due 2025-11-30T\S+Z followup, when busy queue · fired 0× · set at seq 43$/)
    expect(lines).toContain('2 done:')
    expect(lines).toContain('  w-done fired 1× (set at seq 38)')
    expect(lines).toContain('  w-cancel canceled at seq 40 (set at seq 39)')
    const j = JSON.parse((await cli(['schedules', log, '--json'])).stdout)
    expect(j.pending.map((p: { scheduleId: string }) => p.scheduleId)).toEqual(['w-pending'])
    expect(j.all.map((p: { scheduleId: string }) => p.scheduleId)).toEqual(['w-done', 'w-cancel', 'w-pending'])
  })

  it('W1: --cancel refuses an id that is not pending and, while another handle owns the session, writes nothing', async () => {
    const before = readFileSync(log, 'utf8')
    const unknown = await cli(['schedules', log, '--cancel', 'w-done'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('no pending wakeup "w-done"')
    expect(unknown.stderr).toContain('pending: w-pending')
    const owner = await jsonlStore(tmp.dir).open('ap1', 'write')
    try {
      const owned = await cli(['schedules', log, '--cancel', 'w-pending'])
      expect(owned.code).toBe(2)
      expect(owned.stderr).toContain('SESSION_OWNED')
    } finally {
      await owner.close()
    }
    expect(readFileSync(log, 'utf8')).toBe(before)
  })

  it('W1: --cancel appends schedule/canceled; the wakeup is no longer pending and the log verifies', async () => {
    const r = await cli(['schedules', log, '--cancel', 'w-pending'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain('w-pending: canceled (seq 58)')
    expect((await cli(['schedules', log])).stdout.split('\n')[0]).toBe(`${log}: 0 pending wakeups`)
    const v = await cli(['verify', log])
    expect(v.code, v.stdout + v.stderr).toBe(0)
    const last = JSON.parse(readFileSync(log, 'utf8').trim().split('\n').pop()!)
    expect(last).toMatchObject({ seq: 58, type: 'schedule/canceled', data: { scheduleId: 'w-pending' } })
  })
})
