/**
 * `turnlog/mcp`: tools from Model Context Protocol servers, durable (docs/spec/lifecycle.md §12).
 *
 * ```ts
 * import { mcpTools } from 'turnlog/mcp'
 * const tools = await mcpTools({ servers: {
 *   files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] },
 *   github: { url: 'https://…/mcp', auth: { headers: { Authorization: `Bearer ${token}` } } },
 * } })
 * const agent = createAgent({ model, tools: [...tools] })
 * // …
 * await tools.close()
 * ```
 *
 * `@modelcontextprotocol/client` (2.4 or later) is an optional peer dependency of this subpath
 * only: it speaks both protocol eras (2025-11-25 and 2026-07-28) over stdio and Streamable HTTP.
 */
import { TOOL_CATALOG, type AnyTool } from '../tools/types.js'
import { McpCatalog } from './catalog.js'
import { ServerConnection } from './connection.js'
import { loadSdk } from './sdk.js'
import type { McpTools, McpToolsOptions } from './types.js'
import { TurnlogError } from '../events/index.js'

export type { DriftPolicy, McpAuth, McpHttpServer, McpServerCommon, McpServerConfig, McpStdioServer, McpToolOverride, McpTools, McpToolsOptions } from './types.js'
export { outputOf, type McpCallResult } from './content.js'

/**
 * Connects to every server (in parallel), lists their tools and returns them as turnlog tools.
 *
 * - Names: a tool keeps its server's name when that is unique among these servers' tools, else
 *   `server__tool` (`tools[name].name` overrides); the log's `source` says where each came from.
 * - Policy from annotations unless overridden per tool: `readOnlyHint: true` → a parallel call;
 *   `destructiveHint: true` (without `readOnlyHint`) → `needsApproval`; `idempotentHint: true` →
 *   re-issued after a crash. No annotations: an exclusive call, no approval, never re-issued.
 * - A list change (notification, reconnect) reaches the model at the next step boundary as a
 *   `request/header {reason: 'change'}`; a changed definition of a tool the session already
 *   offered follows the server's `onDrift` (`'ask'` by default: each call needs a person's approval).
 *
 * Rejects with `MCP_CONNECT` naming the server when one cannot be started, reached or initialised
 * within `connectTimeoutMs` (the others are closed first). Credentials never reach the log or an
 * error message.
 */
export async function mcpTools(options: McpToolsOptions): Promise<McpTools> {
  if (typeof options !== 'object' || options === null || typeof options.servers !== 'object' || options.servers === null) {
    throw new TurnlogError('INVALID_ARGUMENT', 'mcpTools needs { servers: { name: { command } | { url } } }', { field: 'servers' })
  }
  for (const [name, config] of Object.entries(options.servers)) {
    const ok = typeof config === 'object' && config !== null && (typeof (config as { command?: unknown }).command === 'string' || typeof (config as { url?: unknown }).url === 'string' || (config as { url?: unknown }).url instanceof URL)
    if (!ok) throw new TurnlogError('INVALID_ARGUMENT', `mcpTools: server '${name}' needs a command (stdio) or a url (Streamable HTTP)`, { field: `servers.${name}` })
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new TurnlogError('INVALID_ARGUMENT', `mcpTools: server name ${JSON.stringify(name)} must be 1 to 64 of A-Za-z0-9_-`, { field: `servers.${name}` })
  }
  const sdk = await loadSdk()
  const servers = Object.entries(options.servers).map(([name, config]) => new ServerConnection(name, config, options, sdk))
  const closeAll = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.close()))
  }
  const started = await Promise.allSettled(servers.map((s) => s.start()))
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed !== undefined) {
    await closeAll()
    throw failed.reason
  }
  const catalog = new McpCatalog(servers)
  const tools = [...catalog.current(() => undefined)] as McpTools
  Object.defineProperty(tools, 'close', { value: closeAll, enumerable: false })
  return tools
}

/** True for a tool made by `mcpTools`. */
export function isMcpTool(tool: AnyTool): boolean {
  return (tool as { [TOOL_CATALOG]?: unknown })[TOOL_CATALOG] instanceof McpCatalog
}
