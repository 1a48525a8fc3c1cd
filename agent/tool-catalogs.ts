/**
 * Live tool lists (docs/spec/lifecycle.md §12): tools that carry a `ToolCatalog` (turnlog/mcp's
 * servers) are read again at each step boundary when their list moved, so a change reaches the
 * model only there, as a `request/header {reason: 'change'}` (the step driver logs a header
 * whenever the tools differ). The app's own tools never change. Drift is measured against the
 * definition the session first offered the model, read from the log's headers, so it holds
 * across processes.
 */
import type { EventOf, LogEvent, ToolSpec } from '../events/index.js'
import { errorText, toolSpec } from '../tools/define.js'
import { TOOL_CATALOG, type AnyTool, type ToolCatalog } from '../tools/types.js'

/** What the refresh needs of its agent. */
export interface CatalogHost {
  tools: ReadonlyMap<string, AnyTool>
  toolSpecs: readonly ToolSpec[]
  readonly session: { readonly events: readonly LogEvent[] }
  reportError(error: unknown, where: string): void
}

interface CatalogState {
  /** The agent's tools in their order: an own tool, or a catalog standing where its first tool stood. */
  plan: Array<AnyTool | ToolCatalog>
  /** The version of each catalog last read (-1: never). */
  seen: Map<ToolCatalog, number>
  /** The tools each catalog gave last (kept when a read fails). */
  last: Map<ToolCatalog, readonly AnyTool[]>
  /** `mcp\0tool` → the hash the session first offered. */
  offered: Map<string, string>
  /** Events of the log already scanned for headers. */
  scanned: number
}

const states = new WeakMap<CatalogHost, CatalogState | null>()

function catalogOf(tool: AnyTool): ToolCatalog | undefined {
  try {
    return (tool as { [TOOL_CATALOG]?: ToolCatalog })[TOOL_CATALOG]
  } catch {
    return undefined
  }
}

function stateOf(agent: CatalogHost): CatalogState | null {
  let st = states.get(agent)
  if (st !== undefined) return st
  const plan: Array<AnyTool | ToolCatalog> = []
  const seen = new Map<ToolCatalog, number>()
  const last = new Map<ToolCatalog, readonly AnyTool[]>()
  for (const tool of agent.tools.values()) {
    const c = catalogOf(tool)
    if (c === undefined) plan.push(tool)
    else if (!seen.has(c)) {
      seen.set(c, -1)
      plan.push(c)
      last.set(c, [...agent.tools.values()].filter((t) => catalogOf(t) === c))
    }
  }
  st = seen.size === 0 ? null : { plan, seen, last, offered: new Map(), scanned: 0 }
  states.set(agent, st)
  return st
}

/** Reads the headers logged since the last call: the first hash offered per source. */
function scanHeaders(st: CatalogState, events: readonly LogEvent[]): void {
  for (let i = st.scanned; i < events.length; i++) {
    const e = events[i]!
    if (e.type !== 'request/header') continue
    for (const t of (e as EventOf<'request/header'>).data.tools) {
      if (t.source === undefined) continue
      const key = `${t.source.mcp}\u0000${t.source.tool}`
      if (!st.offered.has(key)) st.offered.set(key, t.source.hash)
    }
  }
  st.scanned = events.length
}

/**
 * At a step boundary: when a live list moved (or at the first step), the agent's tools become the
 * own tools plus each list's current tools, in the options' order. A list that throws keeps its
 * last tools (reported as `agent/error`); a name taken by an earlier tool is skipped (reported).
 */
export function refreshTools(agent: CatalogHost): void {
  const st = stateOf(agent)
  if (st === null) return
  let moved = false
  for (const [c, v] of st.seen) {
    let now: number
    try {
      now = c.version
    } catch {
      now = v
    }
    if (now !== v) moved = true
  }
  if (!moved) return
  scanHeaders(st, agent.session.events)
  const offered = (mcp: string, tool: string): string | undefined => st.offered.get(`${mcp}\u0000${tool}`)
  const map = new Map<string, AnyTool>()
  const add = (t: AnyTool): void => {
    if (map.has(t.name)) {
      agent.reportError(new Error(`a live tool list offers a second tool named '${t.name}': it is left out`), 'tools')
      return
    }
    map.set(t.name, t)
  }
  for (const entry of st.plan) {
    if (!st.seen.has(entry as ToolCatalog)) {
      add(entry as AnyTool)
      continue
    }
    const c = entry as ToolCatalog
    try {
      st.seen.set(c, c.version)
      const tools = [...c.current(offered)]
      st.last.set(c, tools)
    } catch (err) {
      agent.reportError(new Error(`reading a live tool list failed: ${errorText(err)}`), 'tools')
    }
    for (const t of st.last.get(c) ?? []) add(t)
  }
  const specs: ToolSpec[] = []
  for (const t of map.values()) {
    try {
      specs.push(toolSpec(t))
    } catch (err) {
      map.delete(t.name)
      agent.reportError(err, 'tools')
    }
  }
  agent.tools = map
  agent.toolSpecs = specs
}
