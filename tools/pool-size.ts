/** The tool pool's size option (`maxParallelToolCalls`, docs/spec/lifecycle.md §5): its default and its check. */
import { TurnlogError } from '../events/index.js'

/** The default of `maxParallelToolCalls`. */
export const DEFAULT_MAX_PARALLEL_TOOL_CALLS = 10

/** Refuses a pool size that is not a positive integer (`INVALID_OPTION`). The agent calls it at creation. */
export function assertMaxParallelToolCalls(value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new TurnlogError('INVALID_OPTION', `maxParallelToolCalls must be a positive integer, got ${String(value)}`, {
      field: 'maxParallelToolCalls',
    })
  }
}
