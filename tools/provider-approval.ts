/**
 * A provider-executed call the provider asked a person to approve (issue 23: the AI SDK's
 * `tool-approval-request`, e.g. an OpenAI MCP tool with `require_approval`). turnlog does not run
 * it; it goes through the approvals of docs/spec/lifecycle.md §9 like a `needsApproval: true` tool whose "body"
 * only records the approval: the call's `tool/call` + `tool/result` are the decision, which the
 * AI SDK adapter sends back to the provider as a `tool-approval-response` with the next request
 * (approved unless the result is an error; a denial's result text is the person's reason). The
 * user's own tools are never looked up for such a call, whatever its name.
 */
import { z } from 'zod'
import type { ApprovalDecision, ApprovalBy, Block } from '../events/index.js'
import type { AnyTool } from './types.js'

/** The result text of an approved provider call (the provider runs it; what it did comes in the next response). */
export const PROVIDER_APPROVED_TEXT = 'Approved: the provider runs this call.'

/** The stand-in tool for a provider approval call named `name`. */
export function providerApprovalTool(name: string): AnyTool {
  return {
    name,
    description: 'a provider-executed call waiting for a person (run by the provider once approved)',
    parameters: z.unknown(),
    needsApproval: true,
    execute: () => PROVIDER_APPROVED_TEXT,
  }
}

/**
 * The result content of a denied provider call: the reason the person (or the expiry, a steer)
 * gave, which is what the provider receives as the response's `reason`; none when none was given.
 */
export function providerDenialContent(decided: { decision: ApprovalDecision; by: ApprovalBy } | null | undefined): Block[] {
  const d = decided?.decision
  return d !== undefined && d.kind === 'deny' && d.reason !== undefined && d.reason !== '' ? [{ type: 'text', text: d.reason }] : []
}
