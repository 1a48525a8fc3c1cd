/**
 * The mark of a `defineSubagent` tool (docs/spec/lifecycle.md §10): a non-enumerable symbol member, so that
 * `resumeAgent` (replay/resume.ts) and the agent's restore of a crashed step (agent.ts) know which
 * running calls re-attach their child. Its own file: agent.ts reads it, and subagent.ts (which
 * creates child agents) imports agent.ts.
 */

/** Marks a `defineSubagent` tool (not enumerable). */
const SUBAGENT: unique symbol = Symbol.for('turnlog.subagent')

/** @internal Marks `tool` as made by `defineSubagent`. */
export function markSubagent(tool: object): void {
  Object.defineProperty(tool, SUBAGENT, { value: true })
}

/** @internal The tool was made by `defineSubagent` (docs/spec/lifecycle.md §10: its running call can re-attach its child). */
export function isSubagent(tool: unknown): boolean {
  try {
    return typeof tool === 'object' && tool !== null && (tool as { [SUBAGENT]?: unknown })[SUBAGENT] === true
  } catch {
    return false // a hostile proxy is no subagent
  }
}
