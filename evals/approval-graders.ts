/**
 * "Asked for approval before tool T" (docs/spec/api.md "Golden sessions", docs/spec/lifecycle.md §9): a grader over the
 * re-run's approvals (the approvals reducer in `log.state.approvals`) and its tool calls.
 */
import type { EventOf } from '../events/index.js'
import type { Grader } from './evaluate-types.js'

/** Which tools the grader watches: a name, a list of names, or a test of the name. */
export type ToolMatch = string | readonly string[] | ((name: string) => boolean)

function matcher(tool: ToolMatch): (name: string) => boolean {
  if (typeof tool === 'function') return tool
  const names = new Set(typeof tool === 'string' ? [tool] : tool)
  return (name) => names.has(name)
}

/**
 * Passes when every call of the tool(s) in the re-run's live part was asked about (a
 * `tool/approval-requested` for that call: `needsApproval` before its `tool/call`, an `ask` right
 * after) — so no body of those tools ran without a person's `approve` (L17 orders the rest).
 * `atLeastOnce`: the re-run must also call the tool at least once (else a re-run that never calls
 * it passes: there was nothing to ask). The reason names the first call that was not asked about.
 */
export function askedForApprovalBefore(tool: ToolMatch, opts: { atLeastOnce?: boolean } = {}): Grader {
  const watched = matcher(tool)
  const label = typeof tool === 'function' ? 'the watched tools' : typeof tool === 'string' ? tool : tool.join(', ')
  return {
    name: `asked for approval before ${label}`,
    grade: (log, _golden, ctx) => {
      const asked = new Set<string>()
      for (const r of Object.values(log.state.approvals.byId)) asked.add(`${r.turn}.${r.step}.${r.callId}`)
      let calls = 0
      for (let i = ctx.run.liveFrom; i < log.events.length; i++) {
        const e = log.events[i]!
        if (e.type !== 'tool/call') continue
        const d = (e as EventOf<'tool/call'>).data
        if (!watched(d.name)) continue
        calls++
        if (!asked.has(`${d.turn}.${d.step}.${d.callId}`)) {
          return { pass: false, reason: `turn ${d.turn} step ${d.step}: ${d.name} (call ${d.callId}, seq ${e.seq}) was called without asking for approval` }
        }
      }
      if (calls === 0 && opts.atLeastOnce === true) return { pass: false, reason: `the re-run never called ${label}` }
      return true
    },
  }
}
