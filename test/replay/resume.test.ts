import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createAgent, type TurnlogAgent } from '../../agent/agent.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ModelAdapter } from '../../models/index.js'
import { replay } from '../../replay/replay.js'
import type { RepairResult } from '../../replay/repair.js'
import { resumeAgent } from '../../replay/resume.js'
import { verify } from '../../replay/verify.js'
import { tempDir } from '../cli/helpers.js'
import { HEADER, jsonlBytes } from './replay-helpers.js'

/** A model whose first request streams one chunk and then never ends: the process "crashes" there. */
function hangingModel(): ModelAdapter {
  return {
    info: { name: 'm' },
    async *stream() {
      yield { type: 'block-start', index: 0, blockType: 'text' }
      yield { type: 'text-delta', index: 0, text: 'thinking' }
      await new Promise(() => {})
    },
  }
}

/** Runs an agent until it hangs mid-stream with two followups and an inject pending; returns its log. */
async function crashedLog(): Promise<readonly LogEvent[]> {
  let n = 0
  let t = 1_000
  const a = createAgent({ model: hangingModel(), system: 'sys', ids: () => `m${++n}`, clock: () => (t += 5) }) as TurnlogAgent
  a.followup('first')
  a.followup('second')
  a.followup('third')
  a.inject('some context')
  await new Promise((r) => setTimeout(r, 20))
  return [...a.events] // the process dies here: nothing more is written
}

const prompts = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'user/message').map((e) => ((e.data as any).message.content[0].text as string))

describe('resumeAgent (issue "Resume", P5)', () => {
  it('P5 L11 (§8): pending followups and injects survive a crash; the interrupted prompt is re-run by a resume turn; turn numbering continues; the first request logs request/header resume', async () => {
    const crashed = await crashedLog()
    expect(replay(crashed).lifecycle.openTurn).toBe(1)
    let repaired: RepairResult | null = null
    const agent = (await resumeAgent({
      log: { header: HEADER, events: crashed },
      model: scriptedModel(() => ({ text: 'ok' })),
      system: 'sys',
      onRepaired: (r) => (repaired = r),
    })) as TurnlogAgent
    expect(repaired!.closers.map((e) => e.type)).toEqual(['assistant/message', 'step/end', 'turn/end'])
    await agent.whenIdle()
    const after = agent.events.slice(crashed.length)
    const starts = after.filter((e) => e.type === 'turn/start').map((e) => e.data)
    // 'first' was entered and never answered (only repair's interrupted message): turn 2 re-runs it
    expect(starts).toEqual([{ turn: 2, cause: { kind: 'resume', of: 1, maxResumeRuns: 3 } }, { turn: 3 }, { turn: 4 }])
    // the resume turn claims next-step input only (the inject), then the prompts run in their order
    expect(prompts(after)).toEqual(['some context', 'second', 'third'])
    expect(after.find((e) => e.type === 'request/header')?.data).toMatchObject({ reason: 'resume' })
    expect(after.filter((e) => e.type === 'turn/end').map((e) => (e.data as any).reason.kind)).toEqual(['interrupted', 'completed', 'completed', 'completed']) // repair's closer first
    expect(verify(agent.events).ok).toBe(true)
    expect(agent.inbox.nextTurn).toEqual([])
    expect(agent.sessionId).toBe(HEADER.id)
  })

  it('P5 L11 (§8 opt-out): rerunInterrupted: false runs only the pending prompts (the behaviour before §8)', async () => {
    const crashed = await crashedLog()
    const agent = (await resumeAgent({
      log: { header: HEADER, events: crashed }, model: scriptedModel(() => ({ text: 'ok' })), system: 'sys', rerunInterrupted: false,
    })) as TurnlogAgent
    await agent.whenIdle()
    const after = agent.events.slice(crashed.length)
    expect(after.filter((e) => e.type === 'turn/start').map((e) => e.data)).toEqual([{ turn: 2 }, { turn: 3 }])
    expect(prompts(after)).toEqual(['some context', 'second', 'third'])
    expect(verify(agent.events).ok).toBe(true)
  })

  it('runPending: false leaves the prompts pending until the next waking delivery', async () => {
    const crashed = await crashedLog()
    const agent = await resumeAgent({ log: crashed, model: scriptedModel(() => ({ text: 'ok' })), runPending: false })
    await agent.whenIdle()
    expect(agent.inbox.nextTurn.map((m) => m.id)).toEqual(['m2', 'm3'])
    expect(agent.status).toBe('idle')
  })

  it('P5: resumes from a JSONL path with a torn tail (quarantined), then runs a followup', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const crashed = await crashedLog()
      const bytes = jsonlBytes(crashed)
      const file = join(dir, 'crashed.jsonl')
      writeFileSync(file, bytes.subarray(0, bytes.length - 7))
      let q: RepairResult['quarantined'] = null
      const agent = await resumeAgent({ log: file, model: scriptedModel(() => ({ text: 'ok' })), onRepaired: (r) => (q = r.quarantined) })
      expect(q).not.toBeNull()
      await agent.whenIdle()
      agent.followup('fourth')
      await agent.whenIdle()
      expect(prompts(agent.events).at(-1)).toBe('fourth')
      expect(verify(agent.events).ok).toBe(true)
    } finally {
      cleanup()
    }
  })
})

describe('resumeAgent from a store (repair under the write lock)', () => {
  it('P5: a jsonlStore session with a torn tail and an open turn: torn bytes quarantined by the store, closers appended through the handle, pending prompts run, the log verifies on reopen', async () => {
    const { jsonlStore } = await import('../../stores/jsonl/index.js')
    const { appendFileSync, readdirSync } = await import('node:fs')
    const { dir, cleanup } = tempDir()
    try {
      const crashed = await crashedLog()
      const store = jsonlStore(dir)
      await store.create('s1', { createdAt: 1 })
      const w = await store.open('s1', 'write')
      await w.append(crashed, { expectedSeq: 0 })
      await w.close()
      appendFileSync(join(dir, 's1.jsonl'), '{"seq":999,"ti')
      const agent = await resumeAgent({ store: jsonlStore(dir), sessionId: 's1', model: scriptedModel(() => ({ text: 'ok' })) })
      await agent.whenIdle()
      await (agent as unknown as { flush(): Promise<void> }).flush()
      await agent.dispose()
      expect(readdirSync(dir).some((f) => f.startsWith('s1.quarantine'))).toBe(true)
      const r = await jsonlStore(dir).open('s1', 'read')
      const events: LogEvent[] = []
      for await (const e of r.events()) events.push(e)
      await r.close()
      expect(events.slice(0, crashed.length)).toEqual(crashed)
      expect(events[crashed.length + 2]?.data).toMatchObject({ reason: { kind: 'interrupted' } })
      expect(prompts(events.slice(crashed.length))).toEqual(['some context', 'second', 'third'])
      // §8: the interrupted turn 1 is re-run by turn 2 before the pending prompts
      expect(events.find((e) => e.type === 'turn/start' && (e.data as any).turn === 2)?.data).toEqual({ turn: 2, cause: { kind: 'resume', of: 1, maxResumeRuns: 3 } })
      expect(verify(events).ok).toBe(true)
    } finally {
      cleanup()
    }
  })
})
