/**
 * Execution-mode classification (docs/spec/lifecycle.md §5): a call is `parallel` only if its tool exists, its
 * arguments parse and validate, and `isConcurrencySafe(args)` returns exactly `true`. Anything
 * else — an unknown tool, invalid arguments, no classifier, a truthy non-`true`, a throw — is
 * `exclusive`. Pure: the scheduler calls it again right before each start.
 */
import type { ToolCallBlock } from '../events/index.js'
import { prepareCall, type PreparedCall } from './define.js'
import type { AnyTool } from './types.js'

export type { ExecutionMode } from '../machines/call.js'
import type { ExecutionMode } from '../machines/call.js'

export function classify(call: Pick<ToolCallBlock, 'name' | 'arguments'>, tools: ReadonlyMap<string, AnyTool>): ExecutionMode {
  return classifyPrepared(prepareCall(call, tools))
}

/** Classification of a call already resolved by `prepareCall`. */
export function classifyPrepared(prepared: PreparedCall): ExecutionMode {
  const { tool, args, problem } = prepared
  if (tool === undefined || problem !== undefined) return 'exclusive'
  // The classifier is read inside the guard too: a tool's getter is user code.
  try {
    if (typeof tool.isConcurrencySafe !== 'function') return 'exclusive'
    return tool.isConcurrencySafe(args) === true ? 'parallel' : 'exclusive'
  } catch {
    return 'exclusive'
  }
}
