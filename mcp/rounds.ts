/**
 * MCP input rounds (docs/spec/lifecycle.md §11, §12). A 2026-07-28 `input_required` result is a
 * turnlog round: its elicitations become `requests` (a form elicitation → `form`, a URL
 * elicitation → `url`), and its opaque `requestState` travels in the round's `state`, so the
 * answer re-issues `tools/call` with `inputResponses` and that state from whichever process holds
 * the session then. Nothing of the question lives in memory.
 */
import type { InputRequests } from '../events/index.js'
import type { InputContext } from '../tools/types.js'

/** What an `input_required` result carries (the SDK's manual multi-round-trip value, structurally). */
export interface McpInputRequired {
  resultType: 'input_required'
  inputRequests?: Record<string, { method?: string; params?: Record<string, unknown> }>
  requestState?: string
}

/** The round's state in the log: the server's opaque state and the kind of each request. */
export interface McpRoundState {
  mcp: { requestState?: string; kinds: Record<string, 'form' | 'url'> }
}

export function isMcpInputRequired(v: unknown): v is McpInputRequired {
  return typeof v === 'object' && v !== null && (v as { resultType?: unknown }).resultType === 'input_required'
}

/**
 * The round for an `input_required` result, or a reason it cannot be one (a request this client
 * cannot put to a person: sampling, roots).
 */
export function roundOf(r: McpInputRequired): { requests: InputRequests; state: McpRoundState } | { error: string } {
  const requests: InputRequests = {}
  const kinds: Record<string, 'form' | 'url'> = {}
  for (const [key, entry] of Object.entries(r.inputRequests ?? {})) {
    const p = entry?.params ?? {}
    const message = typeof p['message'] === 'string' ? p['message'] : ''
    if (entry?.method !== 'elicitation/create') return { error: `the server asked for '${String(entry?.method)}' (request '${key}'), which turnlog cannot put to a person` }
    if (p['mode'] === 'url' && typeof p['url'] === 'string') {
      requests[key] = { kind: 'url', message, url: p['url'] }
      kinds[key] = 'url'
    } else {
      const schema = typeof p['requestedSchema'] === 'object' && p['requestedSchema'] !== null ? p['requestedSchema'] as Record<string, unknown> : { type: 'object' }
      requests[key] = { kind: 'form', message, schema }
      kinds[key] = 'form'
    }
  }
  if (Object.keys(requests).length === 0) return { error: 'the server asked for input without a request' }
  return { requests, state: { mcp: { ...(r.requestState !== undefined ? { requestState: r.requestState } : {}), kinds } } }
}

/** The `inputResponses` and `requestState` that answer a round, from the person's answer. */
export function responsesOf(input: InputContext): { inputResponses: Record<string, unknown>; requestState?: string } {
  const st = (input.state as Partial<McpRoundState> | undefined)?.mcp
  const kinds = st?.kinds ?? {}
  const inputResponses: Record<string, unknown> = {}
  for (const key of Object.keys(kinds)) {
    if (input.action !== 'accept') inputResponses[key] = { action: input.action }
    else if (kinds[key] === 'url') inputResponses[key] = { action: 'accept' }
    else inputResponses[key] = { action: 'accept', content: input.responses?.[key] ?? {} }
  }
  return { inputResponses, ...(st?.requestState !== undefined ? { requestState: st.requestState } : {}) }
}
