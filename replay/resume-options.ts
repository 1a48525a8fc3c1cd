/**
 * The options `resumeAgent` and `openAgent` accept, as a zod schema checked at the call, before
 * anything is read or written (issue 27 item 5): the agent's options (agent/options-schema.ts)
 * without `prefix` (the log is the prefix), plus the resume options. A new `ResumeOptions` or
 * `OpenOptions` member needs a line here: `SameKeys` (checked in resume.ts and open-agent.ts,
 * which own the types) makes a missing or an extra one a compile error.
 */
import { z } from 'zod'
import { AGENT_OPTION_FIELDS, checkOptionFields } from '../agent/options-schema.js'

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
}

const { log: _log, ...withoutLog } = RESUME_OPTION_FIELDS
void _log

/** `openAgent`'s options: the resume options without `log`, plus the new session's `header`. */
export const OPEN_OPTION_FIELDS = {
  ...withoutLog,
  header: z.strictObject({
    createdAt: z.number().optional(),
    parent: z.strictObject({ session: z.string(), seq: z.number().int().min(0) }).optional(),
    inheritedEventCount: z.number().int().min(0).optional(),
  }),
}

/** Throws `INVALID_OPTION` naming the field (`fnName: unknown option 'autoStrat' (did you mean …)`). */
export function checkResumeOptions(options: unknown, fnName: string, fields: Record<string, z.ZodType> = RESUME_OPTION_FIELDS): void {
  checkOptionFields(options, fields, fnName)
}

/** `true` when a schema's fields are exactly an options type's keys; else the odd keys (a compile error where asserted). */
export type SameKeys<Fields, Options> = [Exclude<keyof Options, keyof Fields> | Exclude<keyof Fields, keyof Options>] extends [never]
  ? true
  : Exclude<keyof Options, keyof Fields> | Exclude<keyof Fields, keyof Options>
