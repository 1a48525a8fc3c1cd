/** The result of a call refused before it started (L17), split out so the scheduler's import graph stays a tree. */
import { isProviderApproval, type ToolErrorInfo } from '../events/index.js'
import type { CallRec } from './call-record.js'
import { errorOutcome } from './define.js'
import { providerDenialContent } from './provider-approval.js'
import type { ToolOutcome } from './types.js'

/**
 * The result of a call denied before it started: its error, and for a provider's call the reason
 * the provider receives as the result text (issue 23).
 */
export function refusedOutcome(rec: CallRec, error: ToolErrorInfo): ToolOutcome {
  const outcome = errorOutcome(error.code, error.message)
  if (isProviderApproval(rec.requested)) outcome.content = providerDenialContent(rec.approval?.decided)
  return outcome
}
