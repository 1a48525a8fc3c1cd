/**
 * Resume's give-up is shown (docs/spec/lifecycle.md §8 as amended, issue 24): `turnlog replay` names the
 * acknowledged messages left unanswered and the runs, the report's timeline marks the record.
 * (`turnlog sessions`: test/stores/postgres/given-up.test.ts.)
 */
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writeLog } from '../../replay/write-log.js'
import { buildTimeline } from '../../replay/timeline.js'
import { givenUpLog } from '../replay/given-up-log.js'
import { cli, tempDir } from './helpers.js'

const tmp = tempDir()
afterAll(() => tmp.cleanup())

describe('a give-up is shown', () => {
  it('L13 §8: turnlog replay prints "given up after 3 runs" with the unanswered message id; verify accepts the log', async () => {
    const { events, id } = await givenUpLog()
    const file = join(tmp.dir, 'given-up.jsonl')
    await writeLog(file, { header: { type: 'session', format: 1, id: 'g', createdAt: 0 }, events })
    const r = await cli(['replay', file])
    expect(r.code, r.stderr).toBe(0)
    const line = r.stdout.split('\n').find((l) => l.includes('given up'))
    expect(line).toContain('turn 4 given up after 3 runs, maxResumeRuns 3')
    expect(line).toContain(`1 message(s) unanswered: ${id}`)
    expect((await cli(['verify', file])).code).toBe(0)
  })

  it('L13 §8: the report timeline (buildTimeline) marks the give-up with its message', async () => {
    const { events, id } = await givenUpLog()
    const marks = buildTimeline(events, []).marks.filter((m) => m.label.includes('given up'))
    expect(marks).toEqual([expect.objectContaining({ seq: events.length - 1, kind: 'failure' })])
    expect(marks[0]!.label).toContain(id)
  })
})
