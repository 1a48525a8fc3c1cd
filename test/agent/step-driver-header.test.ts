/**
 * The step's `request/header` (docs/spec/lifecycle.md §4.3, R3; agent/step-driver.ts `freezeRequest`): logged
 * for the first request (`initial`), for the first request after a resume (`resume`, even when
 * nothing changed) and whenever the system prompt, the tools or the config differ from the last
 * logged header (`change`); not otherwise.
 */
import { describe, expect, it } from 'vitest'
import { scriptedModel } from '../../models/index.js'
import { data, makeAgent, valid } from './contain-helpers.js'
import { counterIds, trace } from './helpers.js'

const headers = (events: Parameters<typeof data>[0]) => data(events, 'request/header').map((d) => [d.reason, d.system])

describe('request/header reasons (§4.3)', () => {
  it('R3: initial, then nothing while unchanged, then change when the assembled system prompt changes', async () => {
    const { agent } = makeAgent([{ text: 'a' }, { text: 'b' }, { text: 'c' }])
    let turn = 0
    agent.on('system-prompt/assemble', async (p, next) => {
      const r = await next()
      return p.turn < 3 ? r : { ...r, system: `sys v${++turn}` }
    })
    agent.followup('1')
    agent.followup('2')
    agent.followup('3')
    await agent.whenIdle()
    expect(headers(agent.events)).toEqual([['initial', 'sys'], ['change', 'sys v1']])
    expect(trace(agent.events).filter((l) => l.startsWith('request/header') || l.startsWith('turn/start'))).toEqual([
      'turn/start 1', 'request/header initial', 'turn/start 2', 'turn/start 3', 'request/header change',
    ])
    valid(agent.events)
  })

  it('R3: the first request after a resume logs a header with reason resume, though nothing changed; later ones do not', async () => {
    const first = makeAgent([{ text: 'a' }])
    first.agent.followup('1')
    await first.agent.whenIdle()
    const model = scriptedModel([{ text: 'b' }, { text: 'c' }], { info: { name: 'scripted' } })
    const { agent } = makeAgent(null, { model, prefix: first.agent.events, sessionId: first.agent.sessionId, ids: counterIds('r') })
    agent.followup('2')
    agent.followup('3')
    await agent.whenIdle()
    expect(headers(agent.events)).toEqual([['initial', 'sys'], ['resume', 'sys']])
    expect(model.requests.map((r) => r.system)).toEqual(['sys', 'sys'])
    valid(agent.events)
  })
})
