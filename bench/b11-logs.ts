/**
 * B11's session logs (bench/b11-sqlite.ts): one parked on an open approval (docs/spec/lifecycle.md §9) and one
 * with a wakeup due (docs/spec/lifecycle.md §10), each made once by a real agent on the memory store.
 */
import { z } from 'zod'
import { createAgent } from '../agent/index.js'
import type { LogEvent } from '../events/envelope.js'
import { scriptedModel } from '../models/index.js'
import { memoryStore } from '../stores/memory.js'
import { defineTool } from '../tools/index.js'

/** A session parked on one approval of `rm` (nothing decided). */
export async function parkedLog(): Promise<LogEvent[]> {
  const rm = defineTool({ name: 'rm', description: 'delete', parameters: z.object({ path: z.string() }), needsApproval: true, execute: () => 'deleted' })
  const agent = createAgent({
    store: memoryStore(), sessionId: 'p', tools: [rm], system: 'b11',
    model: scriptedModel((request) => {
      const last = request.messages[request.messages.length - 1]
      return last?.role === 'tool' ? { text: 'done' } : { toolCalls: [{ name: 'rm', args: { path: 'b' } }] }
    }),
  })
  agent.followup('delete b')
  await agent.whenSettled()
  await agent.flush()
  const events = [...(agent.events as readonly LogEvent[])]
  await agent.dispose()
  if (!events.some((e) => e.type === 'step/parked')) throw new Error('B11: the parked template did not park')
  return events
}

/** A session with a wakeup that was due an hour ago. */
export async function dueLog(): Promise<LogEvent[]> {
  const agent = createAgent({ model: scriptedModel(() => ({ text: 'ok' })), store: memoryStore(), sessionId: 'd', wakeups: { timer: false } })
  agent.schedule({ at: Date.now() - 3_600_000, message: 'check the build', id: 'due' })
  await agent.flush()
  const events = [...(agent.events as readonly LogEvent[])]
  await agent.dispose()
  return events
}
