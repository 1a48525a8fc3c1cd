/** The event envelope: `{ seq, time, type, data, surfaceOp?, sourceEventSeqs?, ignorable? }`. */
import { z } from 'zod'
import type { CoreEventType, EventDataMap } from './data.js'

export const SurfaceOp = z.union([
  z.literal('append'),
  z.strictObject({
    op: z.literal('replace'),
    start: z.number().int().nonnegative(),
    end: z.number().int().nonnegative(),
  }),
])
export type SurfaceOp = z.infer<typeof SurfaceOp>

export const Envelope = z.strictObject({
  seq: z.number().int().nonnegative(),
  time: z.number().int().nonnegative(),
  type: z.string().min(1),
  data: z.unknown(),
  surfaceOp: SurfaceOp.optional(),
  sourceEventSeqs: z.array(z.number().int().nonnegative()).optional(),
  ignorable: z.literal(true).optional(),
})

/** One committed event of a session log. Deep-frozen once accepted. */
export type EventOf<K extends CoreEventType> = {
  readonly seq: number
  readonly time: number
  readonly type: K
  readonly data: EventDataMap[K]
  readonly surfaceOp?: SurfaceOp
  readonly sourceEventSeqs?: readonly number[]
  readonly ignorable?: true
}

/** Any core event, discriminated by `type`. */
export type SessionEvent = { [K in CoreEventType]: EventOf<K> }[CoreEventType]

/** An event of a plugin-registered type (or an ignorable unknown one read from a stored log). */
export interface ExtensionEvent {
  readonly seq: number
  readonly time: number
  readonly type: string
  readonly data: unknown
  readonly surfaceOp?: SurfaceOp
  readonly sourceEventSeqs?: readonly number[]
  readonly ignorable?: true
}

/** What the log holds: core events, and events of registered or ignorable extension types. */
export type LogEvent = SessionEvent | ExtensionEvent

/** What a caller hands to `Session.append`: the session assigns `seq` and `time`. */
export type EventDraft = {
  [K in CoreEventType]: {
    type: K
    data: EventDataMap[K]
    surfaceOp?: SurfaceOp
    sourceEventSeqs?: number[]
    ignorable?: true
  }
}[CoreEventType]

export function isCore<K extends CoreEventType>(e: LogEvent, type: K): e is EventOf<K> {
  return e.type === type
}
