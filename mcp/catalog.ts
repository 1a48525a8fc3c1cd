/**
 * The servers' tools as turnlog tools (docs/spec/lifecycle.md §12): names, policy from
 * annotations, the `source` logged with each definition, and drift. One catalog per `mcpTools`;
 * the agent reads it again at each step boundary when a list moved (agent/tool-catalogs.ts).
 */
import { createHash } from 'node:crypto'
import { jsonSchema } from '../tools/json-schema.js'
import { TOOL_NAME } from '../tools/define.js'
import { REISSUE, TOOL_CATALOG, type AnyTool, type ToolCatalog, type ToolContext } from '../tools/types.js'
import { isMcpInputRequired, responsesOf, roundOf } from './rounds.js'
import { outputOf } from './content.js'
import type { ListedTool, ServerConnection } from './connection.js'
import type { McpToolOverride } from './types.js'

const DEFAULT_TIMEOUT_MS = 60_000

/** A canonical JSON text (keys sorted) of a value. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`
  if (typeof v === 'object' && v !== null) {
    return `{${Object.keys(v).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

/** The hash of a tool's definition on its server: what the model sees of it and its annotations. */
export function definitionHash(t: ListedTool): string {
  const def = { name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema, annotations: t.annotations }
  return `sha256:${createHash('sha256').update(canonical(def)).digest('hex').slice(0, 32)}`
}

/** A name the providers accept: invalid characters become `_`, at most 64. */
function safeName(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)
  return s === '' ? '_' : s
}

/** What the catalog knows of an MCP tool (the tool's own, not on its object's surface). */
export interface McpToolInfo {
  server: string
  tool: string
  hash: string
  /** May be called again after a crash interrupted it. */
  idempotent: boolean
}

/** @internal The key of {@link McpToolInfo} on a tool made here. */
export const MCP_TOOL: unique symbol = Symbol.for('turnlog.mcpTool')

export class McpCatalog implements ToolCatalog {
  readonly #servers: readonly ServerConnection[]
  /** Tools made, by server, name, hash, drift mode: the same object while nothing changes (specs are cached per object). */
  readonly #made = new Map<string, AnyTool>()

  constructor(servers: readonly ServerConnection[]) {
    this.#servers = servers
  }

  get version(): number {
    let v = 0
    for (const s of this.#servers) v += s.version
    return v
  }

  current(offered: (mcp: string, tool: string) => string | undefined): readonly AnyTool[] {
    // names: a server's name when unique among the servers' tools, else server__tool
    const count = new Map<string, number>()
    for (const s of this.#servers) {
      for (const t of s.tools) {
        if (typeof t?.name !== 'string' || s.config.tools?.[t.name]?.enabled === false) continue
        const n = safeName(s.config.tools?.[t.name]?.name ?? t.name)
        count.set(n, (count.get(n) ?? 0) + 1)
      }
    }
    const out: AnyTool[] = []
    for (const s of this.#servers) {
      for (const t of s.tools) {
        if (typeof t?.name !== 'string' || t.name === '') continue
        const o: McpToolOverride = s.config.tools?.[t.name] ?? {}
        if (o.enabled === false) continue
        const hash = definitionHash(t)
        const first = offered(s.name, t.name)
        let drift: 'none' | 'ask' = 'none'
        if (first !== undefined && first !== hash) {
          const policy = s.config.onDrift ?? 'ask'
          if (policy === 'block') continue
          if (policy === 'ask') drift = 'ask'
        }
        const base = safeName(t.name)
        const name = o.name ?? (count.get(base)! > 1 ? safeName(`${s.name}__${t.name}`) : base)
        if (!TOOL_NAME.test(name)) continue
        const key = `${s.name}\u0000${t.name}\u0000${hash}\u0000${drift}\u0000${name}`
        let tool = this.#made.get(key)
        if (tool === undefined) {
          tool = this.#make(s, t, o, name, hash, drift === 'ask')
          this.#made.set(key, tool)
        }
        out.push(tool)
      }
    }
    return out
  }

  #make(s: ServerConnection, t: ListedTool, o: McpToolOverride, name: string, hash: string, drifted: boolean): AnyTool {
    const a = t.annotations ?? {}
    const readOnly = a.readOnlyHint === true
    const concurrencySafe = o.concurrencySafe ?? readOnly
    const needsApproval = drifted || (o.needsApproval ?? (a.destructiveHint === true && !readOnly))
    const idempotent = o.idempotent ?? a.idempotentHint === true
    const timeoutMs = o.timeoutMs ?? s.config.timeoutMs ?? DEFAULT_TIMEOUT_MS
    const info: McpToolInfo = { server: s.name, tool: t.name, hash, idempotent }
    let parameters
    try {
      parameters = jsonSchema(typeof t.inputSchema === 'object' && t.inputSchema !== null ? t.inputSchema : { type: 'object' })
    } catch {
      // a schema the validator cannot take: the model still sees an object, the server validates
      parameters = jsonSchema({ type: 'object' })
    }
    const description = typeof t.description === 'string' ? t.description : (t.title ?? a.title ?? '')
    const tool = {
      name,
      description,
      parameters,
      timeoutMs,
      needsApproval,
      source: { mcp: s.name, tool: t.name, hash },
      [TOOL_CATALOG]: this,
      [MCP_TOOL]: info,
      // an idempotent tool's call that a crash interrupted is issued again on resume (else TOOL_OUTCOME_UNKNOWN)
      ...(idempotent ? { [REISSUE]: true } : {}),
      ...(concurrencySafe ? { isConcurrencySafe: () => true } : {}),
      // the SDK request gets a little longer than the call's timeout: the scheduler decides
      // TOOL_TIMEOUT and aborts the signal, which cancels the request on the wire
      execute: async (args: unknown, ctx: ToolContext) => {
        // a round's answer (docs/spec/lifecycle.md §11) re-issues the call with the responses and the server's state
        const retry = ctx.input !== undefined ? responsesOf(ctx.input) : undefined
        const r = await s.call(t.name, args, { signal: ctx.signal, timeoutMs: timeoutMs + 1000, resend: idempotent || readOnly, ...(retry !== undefined ? { retry } : {}) })
        if (!isMcpInputRequired(r)) return outputOf(r)
        const round = roundOf(r)
        if ('error' in round) return { content: [{ type: 'text', text: `MCP server '${s.name}': ${round.error}.` }], isError: true }
        return ctx.inputRequired({ requests: round.requests, state: round.state })
      },
    }
    return tool as unknown as AnyTool
  }
}
