/**
 * The exact coded errors of bad options and bad message inputs (R7: bad input gets a clear, coded
 * error naming its field): `checkLimits` in agent/options.ts and `toUserMessage` in
 * agent/messages.ts, called as `createAgent` and the inbox calls call them.
 */
import { describe, expect, it } from 'vitest'
import { toUserMessage } from '../../agent/messages.js'
import { checkLimits } from '../../agent/options.js'
import type { AgentOptions } from '../../agent/types.js'
import { TurnlogError } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'

function thrown(f: () => unknown): TurnlogError {
  try {
    f()
  } catch (err) {
    expect(err).toBeInstanceOf(TurnlogError)
    return err as TurnlogError
  }
  throw new Error('did not throw')
}

const base = (o: Partial<AgentOptions>): AgentOptions => ({ model: scriptedModel([]), ...o }) as AgentOptions

describe('checkLimits: each limit refused with its own message and field (R7)', () => {
  it.each([
    [{ maxStepsPerTurn: 0 }, 'maxStepsPerTurn must be a positive integer', 'maxStepsPerTurn'],
    [{ maxStepsPerTurn: 1.5 }, 'maxStepsPerTurn must be a positive integer', 'maxStepsPerTurn'],
    [{ maxParallelToolCalls: 0 }, 'maxParallelToolCalls must be a positive integer', 'maxParallelToolCalls'],
    [{ maxParallelToolCalls: Number.NaN }, 'maxParallelToolCalls must be a positive integer', 'maxParallelToolCalls'],
    [{ cancelGraceMs: -1 }, 'cancelGraceMs must be a finite number >= 0', 'cancelGraceMs'],
    [{ cancelGraceMs: Number.POSITIVE_INFINITY }, 'cancelGraceMs must be a finite number >= 0', 'cancelGraceMs'],
  ] as const)('%j → INVALID_OPTION %s', (opts, message, field) => {
    const e = thrown(() => checkLimits(base(opts)))
    expect(e.code).toBe('INVALID_OPTION')
    expect(e.message).toBe(`INVALID_OPTION: ${message} (field ${field})`)
    expect(e.field).toBe(field)
  })

  it('valid limits pass through, with the defaults for the absent ones', () => {
    const l = checkLimits(base({ maxStepsPerTurn: 3 }))
    expect([l.maxStepsPerTurn, l.maxParallelToolCalls, l.tools.size]).toEqual([3, 10, 0])
  })
})

describe('toUserMessage: what is not a message input (R7)', () => {
  it.each([[null, 'object'], [42, 'number'], [undefined, 'undefined'], [{ text: 'hi' }, 'object']] as const)(
    '%j is INVALID_MESSAGE with the shape it must have and the type it got',
    (input, got) => {
      const e = thrown(() => toUserMessage(input as never, () => 'id1'))
      expect(e.code).toBe('INVALID_MESSAGE')
      expect(e.message).toBe('INVALID_MESSAGE: a message is a string or { content: Block[], id?, source? } (field message)')
      expect(e.field).toBe('message')
      expect(e.info).toEqual({ got })
    },
  )
})
