/**
 * A person's decision after the approval's `expiresAt` is refused (`APPROVAL_DECIDED`) when no
 * process runs the session (docs/spec/lifecycle.md §9 "Expiry"): the approved body never runs, and the log
 * gets no person's decision for it.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import { TurnlogError } from '../../events/errors.js'
import { scriptedModel } from '../../models/index.js'
import { readLog } from '../../replay/read-log.js'
import { decideInStore } from '../../stores/decide.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { defineTool } from '../../tools/define.js'

const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

describe('a late decision is refused (lifecycle §9)', () => {
  it('L17 R9: decided after expiresAt while nothing runs (JSONL): APPROVAL_DECIDED, nothing logged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-late-'))
    dirs.push(dir)
    const store = jsonlStore(dir)
    const rmTool = defineTool({
      name: 'rm', description: 'removes', parameters: z.object({ path: z.string() }), needsApproval: true,
      approval: { timeoutMs: 1000 }, execute: () => 'ok',
    })
    const agent = createAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'rm', args: { path: 'x' }, id: 'k1' }] }, { text: 'done' }]),
      tools: [rmTool], store, sessionId: 's', clock: () => 5_000,
    })
    agent.followup('go')
    expect(await agent.whenSettled()).toBe('parked')
    const id = agent.approvals()[0]!.approvalId
    await agent.dispose()
    let caught: unknown
    try {
      await decideInStore(store, 's', id, { kind: 'approve' }, { clock: () => 9_000 })
    } catch (err) {
      caught = err
    }
    expect(TurnlogError.is(caught) && caught.code).toBe('APPROVAL_DECIDED')
    expect((await readLog(join(dir, 's.jsonl'))).events.some((e) => e.type === 'tool/approval-decided')).toBe(false)
  })
})
