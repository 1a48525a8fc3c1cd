/**
 * An MCP `CallToolResult` as a turnlog tool output (docs/spec/lifecycle.md §12), without loss:
 * text → text; image → image; audio → a file block; a resource link → a text line naming it; an
 * embedded resource → its text (or a file block of its blob). Every block that is not plain text
 * or an image keeps the MCP block it came from under `providerData.mcp` (the key no model provider
 * reads: logged, never sent). `structuredContent` is kept the same way on the first block, or as
 * its JSON text when there is no content. `isError` makes the output an error result the model sees.
 */
import type { Block } from '../events/index.js'

/** The members of an MCP call result this reads (the SDK's `CallToolResult`, structurally). */
export interface McpCallResult {
  content?: unknown
  structuredContent?: unknown
  isError?: unknown
}

type Obj = Record<string, unknown>

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** JSON copy without `_meta` members of the server's bookkeeping at the top (kept deeper down). */
function keep(block: Obj): Obj {
  return JSON.parse(JSON.stringify(block)) as Obj
}

function blockOf(b: unknown): Block {
  if (!isObj(b)) return { type: 'text', text: JSON.stringify(b) ?? '' }
  switch (b['type']) {
    case 'text':
      return typeof b['text'] === 'string' && b['annotations'] === undefined && b['_meta'] === undefined
        ? { type: 'text', text: b['text'] }
        : { type: 'text', text: String(b['text'] ?? ''), providerData: { mcp: keep(b) } }
    case 'image':
      return { type: 'image', mediaType: String(b['mimeType'] ?? 'application/octet-stream'), data: String(b['data'] ?? ''), ...(b['annotations'] !== undefined || b['_meta'] !== undefined ? { providerData: { mcp: keep({ ...b, data: undefined }) } } : {}) }
    case 'audio':
      return { type: 'file', mediaType: String(b['mimeType'] ?? 'application/octet-stream'), data: String(b['data'] ?? ''), providerData: { mcp: keep({ ...b, data: undefined }) } }
    case 'resource_link': {
      const label = typeof b['title'] === 'string' ? b['title'] : String(b['name'] ?? b['uri'] ?? '')
      return { type: 'text', text: `[resource] ${label} <${String(b['uri'] ?? '')}>`, providerData: { mcp: keep(b) } }
    }
    case 'resource': {
      const r = isObj(b['resource']) ? b['resource'] : {}
      if (typeof r['blob'] === 'string') {
        return { type: 'file', mediaType: String(r['mimeType'] ?? 'application/octet-stream'), data: r['blob'], providerData: { mcp: keep({ ...b, resource: { ...r, blob: undefined } }) } }
      }
      return { type: 'text', text: String(r['text'] ?? ''), providerData: { mcp: keep({ ...b, resource: { ...r, text: undefined } }) } }
    }
    default:
      // a kind this version does not know: its JSON, the block kept whole
      return { type: 'text', text: JSON.stringify(b), providerData: { mcp: keep(b) } }
  }
}

/** The tool output for a call result: `{content, isError?}` (tools/define.ts `outputToOutcome`). */
export function outputOf(result: McpCallResult): { content: Block[]; isError?: true } {
  const content = Array.isArray(result.content) ? result.content.map(blockOf) : []
  if (result.structuredContent !== undefined) {
    const structured = JSON.parse(JSON.stringify(result.structuredContent)) as unknown
    if (content.length === 0) content.push({ type: 'text', text: JSON.stringify(structured), providerData: { mcp: { structuredContent: structured } } })
    else {
      const first = content[0]!
      const pd = (first as { providerData?: Record<string, Record<string, unknown>> }).providerData
      content[0] = { ...first, providerData: { ...pd, mcp: { ...pd?.['mcp'], structuredContent: structured } } } as Block
    }
  }
  return result.isError === true ? { content, isError: true } : { content }
}
