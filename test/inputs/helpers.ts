/** Shared set-up for the input-round tests (docs/spec/lifecycle.md §11). */
import { z } from 'zod'
import type { InputRequests, LogEvent } from '../../events/index.js'
import { defineTool, type InputContext } from '../../tools/index.js'
import { REISSUE, type AnyTool } from '../../tools/types.js'

/** The JSON Schema of an address form. */
export const ADDRESS_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string', minLength: 1 }, zip: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
}

/**
 * A tool that asks `rounds` rounds (a form, then a choice, then text …) and records every body run
 * with the input it got (R10/R11: each round's body runs once, with its answer once).
 */
export function roundsTool(opts: { rounds?: number; expiresInMs?: number; state?: (round: number) => unknown } = {}) {
  const runs: Array<{ round: number; input: InputContext | undefined }> = []
  const rounds = opts.rounds ?? 1
  const tool = defineTool({
    name: 'ship',
    description: 'Ship a parcel, asking for the address',
    parameters: z.object({ item: z.string() }),
    execute: ({ item }, ctx) => {
      const asked = ctx.input?.round ?? 0
      runs.push({ round: asked, input: ctx.input })
      if (ctx.input !== undefined && ctx.input.action !== 'accept') return `not shipped: ${ctx.input.action} by ${ctx.input.by.kind}`
      if (asked < rounds) {
        const requests: InputRequests = asked === 0
          ? { address: { kind: 'form' as const, message: 'Where to?', schema: ADDRESS_SCHEMA } }
          : asked === 1 ? { speed: { kind: 'choice' as const, message: 'How fast?', options: ['slow', 'fast'] } } : { note: { kind: 'text' as const, message: `Note ${asked}?` } }
        return ctx.inputRequired({
          requests,
          ...(opts.state !== undefined ? { state: opts.state(asked + 1) } : {}),
          ...(opts.expiresInMs !== undefined ? { expiresInMs: opts.expiresInMs } : {}),
        })
      }
      return `shipped ${item} to ${JSON.stringify(ctx.input?.responses)}`
    },
  })
  return { tool, runs }
}

/** The types of the events from the first `tool/call` on, for exact sequence checks. */
export function typesFrom(events: readonly LogEvent[], type = 'tool/call'): string[] {
  const i = events.findIndex((e) => e.type === type)
  return events.slice(i).map((e) => e.type)
}

export function dataOf(events: readonly LogEvent[], type: string): Array<Record<string, any>> {
  return events.filter((e) => e.type === type).map((e) => e.data as Record<string, any>)
}

/**
 * `ship` asking one form round, concurrency safe, so another call of its step runs beside its open
 * round (docs/spec/lifecycle.md §11); records every body run with the round it continues.
 */
export function besideAskTool(): { tool: AnyTool; runs: Array<{ round: number; input: InputContext | undefined }> } {
  const runs: Array<{ round: number; input: InputContext | undefined }> = []
  const tool = defineTool({
    name: 'ship', description: 'ship', parameters: z.object({ item: z.string() }),
    isConcurrencySafe: () => true,
    execute: ({ item }, ctx) => {
      runs.push({ round: ctx.input?.round ?? 0, input: ctx.input })
      if (ctx.input === undefined) return ctx.inputRequired({ requests: { address: { kind: 'form', message: 'Where to?', schema: ADDRESS_SCHEMA } } })
      return `shipped ${item} to ${JSON.stringify(ctx.input.responses)}`
    },
  }) as AnyTool
  return { tool, runs }
}

/**
 * `slow`: a concurrency-safe body whose first run waits until the test releases it (the call that
 * runs beside an open round); `runs` numbers every run. `idempotent`: its tool is re-issued after a
 * crash (§12).
 */
export function gatedSlowTool(opts: { idempotent?: boolean } = {}): { tool: AnyTool; release: () => void; runs: number[] } {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  const runs: number[] = []
  const tool = defineTool({
    name: 'slow', description: 'slow', parameters: z.object({}),
    isConcurrencySafe: () => true,
    execute: async () => {
      runs.push(runs.length + 1)
      if (runs.length === 1) await gate
      return `slow done ${runs.length}`
    },
  }) as AnyTool
  if (opts.idempotent === true) Object.assign(tool, { [REISSUE]: true })
  return { tool, release, runs }
}

