/** Shared by the postgres worker tests: a scripted agent, reading a session back, the answered-check. */
import { z } from 'zod'
import type { LogEvent } from '../../../events/envelope.js'
import { scriptedModel } from '../../../models/index.js'
import { defineTool } from '../../../tools/index.js'
import { verify } from '../../../replay/verify.js'
import type { LogStore } from '../../../stores/types.js'

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

export async function readAll(store: Pick<LogStore, 'open'>, id: string): Promise<LogEvent[]> {
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

export async function until(
  cond: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000, describe?: () => Promise<string>,
): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${describe ? `: ${await describe()}` : ''}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

// the fault tests' worker children: the shared harness (test/support/line-child.ts)
export { LineChild } from '../../support/line-child.js'

/** Per sent id: how often a splice inserted it, how often it became a `user/message`. */
export function moves(events: readonly LogEvent[]): { inserted: Map<string, number>; messages: Map<string, number>; resumedFrom: Map<string, string[]> } {
  const inserted = new Map<string, number>()
  const messages = new Map<string, number>()
  const resumedFrom = new Map<string, string[]>()
  for (const e of events) {
    if (e.type === 'agent/inbox/spliced') {
      for (const m of (e.data as { inserted: Array<{ id: string; source?: { kind: string; of?: string } }> }).inserted) {
        inserted.set(m.id, (inserted.get(m.id) ?? 0) + 1)
        if (m.source?.kind === 'resume' && typeof m.source.of === 'string') {
          resumedFrom.set(m.source.of, [...(resumedFrom.get(m.source.of) ?? []), m.id])
        }
      }
    } else if (e.type === 'user/message') {
      const id = (e.data as { message: { id: string } }).message.id
      messages.set(id, (messages.get(id) ?? 0) + 1)
    }
  }
  return { inserted, messages, resumedFrom }
}

/** The acknowledged ids resume's give-up records name (docs/spec/lifecycle.md §8: given up, never silent). */
export function givenUpIds(events: readonly LogEvent[]): Set<string> {
  const out = new Set<string>()
  for (const e of events) if (e.type === 'resume/given-up') for (const id of (e.data as { messages: string[] }).messages) out.add(id)
  return out
}
