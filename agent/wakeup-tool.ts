/**
 * The optional built-in `scheduleWakeup` tool (docs/spec/lifecycle.md §10, `createAgent({ wakeups: { tool } })`):
 * lets the model schedule a wakeup for itself. The schedule it makes is an ordinary
 * `schedule/created` that names the call (`callId`); its firing is the same as any other.
 */
import { z } from 'zod'
import { TurnlogError } from '../events/errors.js'
import { defineTool } from '../tools/define.js'
import type { AnyTool } from '../tools/types.js'
import type { ScheduleToolOptions } from './wakeup-types.js'
import type { Wakeups } from './wakeups.js'

const DAY_MS = 86_400_000

const Parameters = z.strictObject({
  delaySeconds: z.number().positive().describe('How long from now to wake up, in seconds.'),
  message: z.string().min(1).describe('The note you will receive when you wake up: say what to do then.'),
  everySeconds: z.number().positive().optional().describe('Repeat with this period, in seconds (omit for once).'),
})

/**
 * Adds the tool to `tools` (the agent's tool map, before its specs are made). A name already taken
 * by an app tool is `INVALID_OPTION`. Arguments out of `[minDelayMs, maxDelayMs]` give the call a
 * `TOOL_ERROR` result saying the bounds; nothing is scheduled then.
 */
export function scheduleWakeupTool(host: { readonly wakeups: Wakeups }, opts: ScheduleToolOptions, tools: Map<string, AnyTool>): void {
  const name = opts.name ?? 'scheduleWakeup'
  const min = opts.minDelayMs ?? 1000
  const max = opts.maxDelayMs ?? 30 * DAY_MS
  if (tools.has(name)) throw new TurnlogError('INVALID_OPTION', `wakeups.tool: a tool is already named ${name}`, { field: 'wakeups.tool.name' })
  tools.set(name, defineTool({
    name,
    description: 'Schedule a wakeup for yourself: after the delay you receive the message as a new prompt, '
      + 'even if this conversation has ended or the process restarted. Returns the wakeup id and its due time.',
    parameters: Parameters,
    execute(args, ctx) {
      const ms = (s: number) => Math.round(s * 1000)
      for (const [field, v] of [['delaySeconds', args.delaySeconds], ['everySeconds', args.everySeconds]] as const) {
        if (v !== undefined && (ms(v) < min || ms(v) > max)) {
          throw new Error(`${field} must be between ${min / 1000} and ${max / 1000} seconds`)
        }
      }
      const scheduleId = host.wakeups.schedule({
        in: ms(args.delaySeconds),
        ...(args.everySeconds !== undefined ? { every: ms(args.everySeconds) } : {}),
        message: args.message,
        deliver: opts.deliver ?? 'followup',
        whenBusy: opts.whenBusy ?? 'queue',
      }, ctx.callId)
      const p = host.wakeups.state.pending.find((x) => x.scheduleId === scheduleId)
      return { scheduleId, due: p ? new Date(p.due).toISOString() : null }
    },
  }) as AnyTool)
}
