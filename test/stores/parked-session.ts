/**
 * A JSONL session parked on one approval of a tool `rm` that needs it (docs/spec/lifecycle.md §9), for the
 * decision-claim tests: made once per file, copied for each case; and its resume in this process,
 * which counts the approved body's runs (R10) and checks the log.
 */
import { copyFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { createAgent } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { resumeAgent } from '../../replay/index.js'
import { verify } from '../../replay/verify.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { countingTool } from '../approvals/helpers.js'

/** The model asks for `rm b` once, then answers whatever follows a tool result. */
export const rmModel = () => scriptedModel((request) => {
  const last = request.messages[request.messages.length - 1]
  return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'b' }, id: 'c1' }] }
})

export function parkedSessions(prefix: string) {
  const dirs: string[] = []
  let template = ''
  const tmp = async () => {
    const d = await mkdtemp(join(tmpdir(), prefix))
    dirs.push(d)
    return d
  }
  return {
    tmp,
    /** Parks session `s` once; returns its open approval's id. */
    async setup(): Promise<string> {
      template = await tmp()
      const { tool } = countingTool('rm', { needsApproval: true })
      const agent = createAgent({ store: jsonlStore(template), sessionId: 's', model: rmModel(), tools: [tool], system: 'sys' })
      agent.followup('delete b')
      expect(await agent.whenSettled()).toBe('parked')
      const id = agent.approvals()[0]!.approvalId
      await agent.dispose()
      return id
    },
    /** A fresh directory holding a copy of the parked session (no owner runs it). */
    async copy(): Promise<string> {
      const d = await tmp()
      await copyFile(join(template, 's.jsonl'), join(d, 's.jsonl'))
      return d
    },
    async cleanup(): Promise<void> {
      for (const d of dirs) await rm(d, { recursive: true, force: true })
    },
  }
}

/** Resumes session `s` of `dir` in this process until idle: returns the approved body's runs (R10); the log verifies and its turn completed. */
export async function resumeRuns(dir: string): Promise<string[]> {
  const { tool, runs } = countingTool('rm', { needsApproval: true })
  const agent = await resumeAgent({ store: jsonlStore(dir), sessionId: 's', model: rmModel(), tools: [tool], system: 'sys' })
  await agent.whenIdle()
  await agent.dispose()
  const ev = (await readLog(join(dir, 's.jsonl'))).events as LogEvent[]
  expect(verify(ev).violations).toEqual([])
  expect(ev.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: { kind: string } }).reason.kind)).toEqual(['completed'])
  return runs
}
