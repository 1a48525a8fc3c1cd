/** Shared by the postgres worker tests: a scripted agent, reading a session back, the answered-check. */
import { z } from 'zod'
import type { LogEvent } from '../../../events/envelope.js'
import { scriptedModel } from '../../../models/index.js'
import { defineTool } from '../../../tools/index.js'
import { verify } from '../../../replay/verify.js'
import type { PostgresStore } from '../../../stores/postgres/index.js'

export const echo = defineTool({
  name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }),
  isConcurrencySafe: () => true,
  execute: async ({ text }) => text,
})

/** A model that calls `echo` once, then answers: two steps per turn. */
export function echoAgent() {
  return {
    model: scriptedModel((request) => {
      const last = request.messages[request.messages.length - 1]
      if (last?.role === 'tool') return { text: 'done' }
      return { toolCalls: [{ name: 'echo', args: { text: 'x' } }] }
    }, { info: { name: 'scripted' } }),
    tools: [echo],
    system: 'worker test',
  }
}

export async function readAll(store: PostgresStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  const out: LogEvent[] = []
  for await (const e of r.events()) out.push(e)
  return out
}

/** How often each message id appears as a `user/message`, and which have no complete final answer (`finish: 'stop'`, not written by repair) after them. */
export function answered(events: readonly LogEvent[]): { count: Map<string, number>; unanswered: string[] } {
  const count = new Map<string, number>()
  const unanswered: string[] = []
  const open: string[] = []
  for (const e of events) {
    if (e.type === 'user/message') {
      const id = (e.data as { message: { id: string } }).message.id
      count.set(id, (count.get(id) ?? 0) + 1)
      open.push(id)
    } else if (e.type === 'assistant/message' && !(e.data as { interrupted?: boolean }).interrupted && (e.data as { finish: string }).finish === 'stop') {
      open.length = 0
    }
  }
  unanswered.push(...open)
  return { count, unanswered }
}

export function verifyOk(events: readonly LogEvent[]): string[] {
  const v = verify(events)
  return v.violations.map((x) => `${x.invariant}@${x.seq}: ${x.message}`)
}

export async function until(cond: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
