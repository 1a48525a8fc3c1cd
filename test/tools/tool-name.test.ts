/**
 * Tool names the providers refuse are refused when the tool is defined (OpenAI function names and
 * Anthropic tool names: ASCII letters, digits, `_` and `-`, 1 to 64 characters), and a plain object
 * passed in `tools` that is not a tool (its parameters not a zod schema) is a coded error at
 * `createAgent`, not a TypeError in the middle of a turn.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent } from '../../agent/index.js'
import { TurnlogError } from '../../events/errors.js'
import { scriptedModel } from '../../models/index.js'
import { defineTool } from '../../tools/define.js'

const base = { description: 'd', parameters: z.object({}), execute: () => 'ok' }

function codeOf(f: () => unknown): string | undefined {
  try {
    f()
  } catch (err) {
    return TurnlogError.is(err) ? `${err.code} ${err.field}` : `not coded: ${String(err)}`
  }
  return undefined
}

describe('tool names and plain-object tools', () => {
  it('defineTool refuses names the providers refuse (INVALID_ARGUMENT, field name)', () => {
    for (const name of ['my tool', 'a.b', 'ünïcode', 'x'.repeat(65), 'semi;colon', 'slash/name']) {
      expect(codeOf(() => defineTool({ ...base, name })), name).toBe('INVALID_ARGUMENT name')
    }
    for (const name of ['get_weather', 'rm-rf', 'A1', 'x'.repeat(64)]) {
      expect(codeOf(() => defineTool({ ...base, name })), name).toBeUndefined()
    }
  })

  it('a plain object in tools that is not a tool is INVALID_OPTION naming the field, at createAgent (not reading \'def\')', () => {
    const model = scriptedModel([{ text: 'x' }])
    const cases: Array<[object, string]> = [
      [{ name: 'weather', description: 'd', execute: () => 'ok' }, 'tools.0.parameters'],
      [{ name: 'weather', description: 'd', parameters: { type: 'object', properties: {} }, execute: () => 'ok' }, 'tools.0.parameters'],
      [{ name: 'weather', parameters: z.object({}), execute: () => 'ok' }, 'tools.0.description'],
    ]
    for (const [plain, field] of cases) {
      let caught: unknown
      try {
        createAgent({ model, tools: [plain as never] })
      } catch (err) {
        caught = err
      }
      expect(TurnlogError.is(caught) && [caught.code, caught.field]).toEqual(['INVALID_OPTION', field])
      expect(String(caught)).not.toMatch(/reading 'def'/)
    }
  })
})
