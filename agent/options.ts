/**
 * The checks `createAgent` makes of its options before anything else exists: the model, the
 * limits, the tool names. Each bad option is a coded `INVALID_OPTION` naming the field, not a
 * `TypeError` from deep inside the driver.
 */
import { TurnlogError } from '../events/index.js'
import type { AnyTool } from '../tools/types.js'
import type { AgentOptions } from './types.js'

/** The default of `AgentOptions.cancelGraceMs`. */
export const DEFAULT_CANCEL_GRACE_MS = 5000

/** The options' limits and tools, checked. */
export interface AgentLimits {
  maxStepsPerTurn: number
  maxParallelToolCalls: number
  cancelGraceMs: number
  tools: ReadonlyMap<string, AnyTool>
}

/** `createAgent({})` and friends: a coded error naming the field, not a `TypeError` from deep inside. */
export function assertModel(options: unknown): asserts options is AgentOptions {
  if (typeof options !== 'object' || options === null) {
    throw new TurnlogError('INVALID_OPTION', 'createAgent needs an options object with a model', { field: 'model' })
  }
  let stream: unknown
  try {
    const model = (options as { model?: unknown }).model
    stream = typeof model === 'object' && model !== null ? (model as { stream?: unknown }).stream : undefined
  } catch {
    stream = undefined
  }
  if (typeof stream !== 'function') {
    throw new TurnlogError('INVALID_OPTION', 'options.model must be a ModelAdapter ({ stream(request, signal) })', { field: 'model' })
  }
}

/** Checks, in this order, `maxStepsPerTurn`, `maxParallelToolCalls`, `cancelGraceMs` and the tool names. */
export function checkLimits(options: AgentOptions): AgentLimits {
  const maxSteps = options.maxStepsPerTurn ?? 64
  if (!Number.isInteger(maxSteps) || maxSteps < 1) {
    throw new TurnlogError('INVALID_OPTION', 'maxStepsPerTurn must be a positive integer', { field: 'maxStepsPerTurn' })
  }
  const maxPar = options.maxParallelToolCalls ?? 10
  if (!Number.isInteger(maxPar) || maxPar < 1) {
    throw new TurnlogError('INVALID_OPTION', 'maxParallelToolCalls must be a positive integer', { field: 'maxParallelToolCalls' })
  }
  const grace = options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS
  if (typeof grace !== 'number' || !(grace >= 0) || !Number.isFinite(grace)) {
    throw new TurnlogError('INVALID_OPTION', 'cancelGraceMs must be a finite number >= 0', { field: 'cancelGraceMs' })
  }
  const tools = new Map<string, AnyTool>()
  for (const t of options.tools ?? []) {
    if (tools.has(t.name)) throw new TurnlogError('INVALID_OPTION', `two tools are named ${t.name}`, { field: 'tools' })
    tools.set(t.name, t)
  }
  return { maxStepsPerTurn: maxSteps, maxParallelToolCalls: maxPar, cancelGraceMs: grace, tools }
}
