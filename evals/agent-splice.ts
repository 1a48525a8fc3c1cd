/** Which inbox splices the agent makes itself (the rest are inputs from outside: sends and edits). */
import type { EventOf } from '../events/index.js'

/** A claim (removes, no outcome) or tool contexts (post-execute `additionalContexts`). */
export function isAgentSplice(d: EventOf<'agent/inbox/spliced'>['data']): boolean {
  if (d.outcome === undefined && (d.removedCount ?? 0) > 0) return true
  return d.outcome === undefined && d.inserted.length > 0 && d.inserted.every((m) => m.source.kind === 'tool')
}
