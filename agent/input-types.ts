/**
 * The input-round types of the agent's handle (docs/spec/lifecycle.md §11): what `agent.inputs()`
 * lists, what `agent.answer` takes, the `inputs` option. Split from inputs.ts (no import circle).
 */
import type { InputRequests } from '../events/index.js'

/** `inputs` options (docs/spec/lifecycle.md §11). */
export interface InputOptions {
  /** A steer while rounds are open: `'supersede'` (default) answers them `cancel` `by: superseded`
   * (their bodies are called with it); `'queue'` keeps them open and the steer waits. */
  onSteer?: 'supersede' | 'queue'
  /** The cap of a round's `state` in bytes of its JSON text (default 64 KB); a larger one is the
   * call's `INPUT_STATE_TOO_LARGE` result. */
  maxStateBytes?: number
}

/** An open input round, as `agent.inputs()` lists it. */
export interface OpenInput {
  requestId: string
  callId: string
  /** The tool's name and the call's arguments (the model's raw JSON string). */
  name: string
  arguments: string
  round: number
  requests: InputRequests
  /** Epoch ms (the agent's clock) when it is answered `cancel` `by: expired`. */
  expiresAt?: number
  session: string
  turn: number
  step: number
  /** Seq of its `tool/input-requested`. */
  seq: number
}

/** What an answer may be, as a caller gives it. */
export type InputAnswerInput = { action: 'accept'; responses: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' }

