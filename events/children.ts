/**
 * The child-session vocabulary (docs/spec/lifecycle.md §10, docs/spec/events.md): `child/spawned`, logged in the
 * parent while a subagent call runs (between its `tool/call` and its `tool/result`, L19). Kept in
 * its own file so that the core table (data.ts) only spreads it in.
 */
import { z } from 'zod'

const turnNo = z.number().int().positive()
const stepNo = z.number().int().positive()

export const CHILD_EVENT_DATA = {
  'child/spawned': z.strictObject({ turn: turnNo, step: stepNo, callId: z.string().min(1), child: z.string().min(1) }),
} as const
