/**
 * Every agent test fails on an `agent/error` it did not ask for (issue 15 part 3). The driver's
 * catch-all and emergency close turn a broken machine target or action into an `agent/error` and
 * a log that still verifies, so a test that only checks the log can pass over such a defect; this
 * guard makes it fail instead. A test that provokes errors on purpose names them (`expected`).
 *
 * Imports only the public agent types, so it keeps working while agent/ is split into files.
 */
import { expect, onTestFinished } from 'vitest'
import type { Agent } from '../../agent/index.js'

/** One `agent/error` as the hook reports it. */
export interface AgentErrorRecord {
  error: unknown
  where: string
}

/** An error a test provokes on purpose: its `where`, its error code, or a predicate. */
export type ExpectedAgentError = string | ((e: AgentErrorRecord) => boolean)

function codeOf(error: unknown): string | undefined {
  try {
    const code = (error as { code?: unknown } | null)?.code
    return typeof code === 'string' ? code : undefined
  } catch {
    return undefined // a hostile error object (user-values tests): no code
  }
}

function matches(e: AgentErrorRecord, x: ExpectedAgentError): boolean {
  return typeof x === 'function' ? x(e) : e.where === x || codeOf(e.error) === x
}

function describeError(e: AgentErrorRecord): string {
  let message = ''
  try {
    message = e.error instanceof Error ? e.error.message : String(e.error)
  } catch {
    message = '(unprintable)'
  }
  return `${e.where}: ${codeOf(e.error) ?? '-'} ${message}`
}

/** The records matching none of `expected`, one line each (where, code, message). */
export function unexpectedAgentErrors(errors: readonly AgentErrorRecord[], expected: readonly ExpectedAgentError[]): string[] {
  return errors.filter((e) => !expected.some((x) => matches(e, x))).map(describeError)
}

/**
 * Records every `agent/error` of `agent` and, when the running test finishes, fails it if any of
 * them matches none of `expected` (a `where`, an error code, or a predicate). Call it inside a test
 * (it registers with `onTestFinished`). Returns the live list of records, for tests that assert
 * on the errors themselves.
 */
export function guardAgentErrors(
  agent: Pick<Agent, 'on'>,
  expected: readonly ExpectedAgentError[] = [],
  errors: AgentErrorRecord[] = [],
): AgentErrorRecord[] {
  agent.on('agent/error', (e) => {
    errors.push({ error: e.error, where: e.where })
  })
  onTestFinished(() => {
    expect(unexpectedAgentErrors(errors, expected).join('\n'), 'agent/error events the test did not expect').toBe('')
  })
  return errors
}
