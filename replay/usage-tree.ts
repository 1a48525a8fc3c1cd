/**
 * Usage roll-up from the store (docs/spec/lifecycle.md §10): a session's usage folded with its children's, each
 * child's log read from the same store (the children its log names in `child/spawned`, recursively).
 * The roll-up itself is the pure reducer in reducers/usage-tree.ts.
 */
import type { LogEvent } from '../events/index.js'
import { ownUsage, rollUpUsage, spawnedChildren, type UsageRollUp } from '../reducers/usage-tree.js'
import type { LogStore } from '../stores/types.js'

/**
 * The usage roll-up of `sessionId` and every descendant in `store`. A `child/spawned` whose child
 * log is not in the store (a crash between the event and the child's creation) counts nothing.
 */
export async function usageTree(store: LogStore, sessionId: string, seen: Set<string> = new Set()): Promise<UsageRollUp> {
  seen.add(sessionId)
  const events = await readEvents(store, sessionId)
  const children: Record<string, UsageRollUp> = {}
  for (const id of spawnedChildren(events)) {
    if (seen.has(id) || !(await store.has(id))) continue
    children[id] = await usageTree(store, id, seen)
  }
  return rollUpUsage(ownUsage(events), children)
}

async function readEvents(store: LogStore, id: string): Promise<LogEvent[]> {
  const r = await store.open(id, 'read')
  try {
    const out: LogEvent[] = []
    for await (const e of r.events()) out.push(e)
    return out
  } finally {
    await r.close?.()
  }
}
