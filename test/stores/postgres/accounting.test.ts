/**
 * The kill loops' accounting (accounting.ts; issue 24 items 1 and 8, docs/spec/lifecycle.md §8) can fail: on
 * hand-made logs, each way an acknowledged message can go wrong is counted and named (never moved:
 * lost; moved or logged twice: duplicated; logged and never answered nor named: silent), and the
 * two good ends are told apart (answered; named by `resume/given-up`, through a §8 copy).
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../../events/envelope.js'
import type { PostgresStore } from '../../../stores/postgres/index.js'
import { account, accountingLine } from './accounting.js'

const ev = (type: string, data: unknown): LogEvent => ({ type, data }) as unknown as LogEvent
const splice = (...inserted: Array<{ id: string; source?: { kind: string; of: string } }>) => ev('agent/inbox/spliced', { inserted })
const user = (id: string) => ev('user/message', { message: { id } })
const answer = () => ev('assistant/message', { finish: 'stop' })

function storeOf(logs: Record<string, LogEvent[]>): PostgresStore {
  const open = async (id: string) => ({
    async *events() {
      yield* logs[id] ?? []
    },
  })
  return { open } as unknown as PostgresStore
}

describe('L13 §8 accounting of acknowledged messages', () => {
  it('counts answered, given up (through a resume copy), lost, duplicated and silent, and names each problem', async () => {
    const logs = {
      a: [splice({ id: 'ok' }), user('ok'), answer()],
      b: [splice({ id: 'twice' }), user('twice'), answer(), splice({ id: 'twice' }), user('twice'), answer()],
      c: [splice({ id: 'quiet' }), user('quiet')],
      // §8: the message was moved, its turn never started; the resume copy was logged, then given up
      d: [splice({ id: 'poison' }), splice({ id: 'r1', source: { kind: 'resume', of: 'poison' } }), user('r1'),
        ev('resume/given-up', { turn: 2, messages: ['poison'] })],
      e: [splice({ id: 'copied' }), splice({ id: 'r2', source: { kind: 'resume', of: 'copied' } }), user('r2'), answer()],
      // logged itself and as its copy: the question was asked twice
      f: [splice({ id: 'x' }), user('x'), splice({ id: 'r3', source: { kind: 'resume', of: 'x' } }), user('r3'), answer()],
    }
    const sent = new Map([['a', ['ok']], ['b', ['twice']], ['c', ['quiet']], ['d', ['poison']], ['e', ['copied', 'never']], ['f', ['x']]])
    const a = await account(storeOf(logs), sent)
    expect({ ...a, problems: undefined }).toEqual({ acknowledged: 7, answered: 2, givenUp: 1, duplicated: 2, lost: 1, silent: 1, problems: undefined })
    const mine = a.problems.filter((p) => /^[a-f]\/\w+ /.test(p))
    expect(mine).toEqual([
      expect.stringMatching(/^b\/twice inserted 2 times/),
      expect.stringMatching(/^c\/quiet silent/),
      expect.stringMatching(/^e\/never never moved/),
      expect.stringMatching(/^f\/x inserted 1 times, logged as x, r3/),
    ])
    expect(accountingLine(a)).toBe('7 acknowledged, 2 answered, 1 given up, 2 duplicated, 1 lost, 1 silent')
  })
})
