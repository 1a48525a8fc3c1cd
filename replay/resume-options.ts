/**
 * The options `resumeAgent` (and `openAgent`) accept, as a zod schema checked at the call, before
 * anything is read or written (issue 27 item 5): the agent's options (agent/options-schema.ts)
 * without `prefix` (the log is the prefix), plus the resume options. A new `ResumeOptions` member
 * needs a line here (the `satisfies` makes a missing one a compile error).
 */
import { z } from 'zod'
import { AGENT_OPTION_FIELDS, checkOptionFields } from '../agent/options-schema.js'
import type { ResumeOptions } from './resume.js'

const { prefix: _prefix, ...agentFields } = AGENT_OPTION_FIELDS
void _prefix

export const RESUME_OPTION_FIELDS = {
  ...agentFields,
  log: z.union([
    z.string(), z.instanceof(Uint8Array), z.array(z.unknown()), z.looseObject({ events: z.array(z.unknown()) }),
  ], { error: 'must be a JSONL path, its bytes, { header, events } or an array of events' }),
  autoStart: z.boolean(),
  runPending: z.boolean(),
  rerunInterrupted: z.boolean(),
  onRepaired: z.custom<(...a: never[]) => unknown>((v) => typeof v === 'function', { error: 'must be a function' }),
} satisfies Record<keyof ResumeOptions, z.ZodType>

/** Throws `INVALID_OPTION` naming the field (`fnName: unknown option 'autoStrat' (did you mean …)`). */
export function checkResumeOptions(options: unknown, fnName: string, fields: Record<string, z.ZodType> = RESUME_OPTION_FIELDS): void {
  checkOptionFields(options, fields, fnName)
}
