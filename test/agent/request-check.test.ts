/**
 * "Model-visible means logged" (R3, agent/request.ts): `requestMismatch` names the first member in
 * which a sent request differs from the one the log rebuilds; `headerChanged` says when a new
 * `request/header` is due (docs/spec/lifecycle.md §4.3: the configuration, the system prompt or the tool set
 * differs from the last logged one).
 */
import { describe, expect, it } from 'vitest'
import { headerChanged, historyFromLog, requestFromLog, requestMismatch } from '../../agent/request.js'
import type { ModelMessage } from '../../events/index.js'
import { makeAgent } from './contain-helpers.js'

const u = (text: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text }] }) as ModelMessage
const tool = { name: 't', description: 'd', parameters: { type: 'object' } }
const base = () => ({ messages: [u('a'), u('b')], system: 's', tools: [tool], config: { model: 'm' } }) as any

describe('requestMismatch (R3)', () => {
  it('null when equal (deeply, not only by identity); else the first differing member', () => {
    expect(requestMismatch(base(), base())).toBeNull()
    expect(requestMismatch({ ...base(), system: 'x' }, base())).toBe('system')
    expect(requestMismatch({ ...base(), config: { model: 'n' } }, base())).toBe('config')
    expect(requestMismatch({ ...base(), tools: [] }, base())).toBe('tools')
    expect(requestMismatch({ ...base(), messages: [u('a')] }, base())).toBe('messages (length 1 vs 2)')
    expect(requestMismatch({ ...base(), messages: [u('a'), u('c')] }, base())).toBe('messages[1]')
    expect(requestMismatch({ ...base(), messages: [u('c'), u('b')] }, base())).toBe('messages[0]')
    // system is checked first, then config, then tools
    expect(requestMismatch({ ...base(), system: 'x', config: {}, tools: [] }, base())).toBe('system')
    expect(requestMismatch({ ...base(), config: {}, tools: [] }, base())).toBe('config')
  })

  it('everyMessage = false compares only the length and the last message, by identity (O(1))', () => {
    const a = base()
    const b = { ...a, messages: [u('other'), a.messages[1]] }
    expect(requestMismatch(a, b, false)).toBeNull() // only the last one counts
    expect(requestMismatch(a, { ...a, messages: [a.messages[0], u('b')] }, false)).toBe('messages[1]') // equal, not the same object
    expect(requestMismatch({ ...a, messages: [] }, { ...a, messages: [] }, false)).toBeNull()
  })

  it('requestFromLog takes system, tools and config from the header; historyFromLog folds the log', async () => {
    const header = { reason: 'initial', system: 's', tools: [tool], config: { model: 'm' } } as any
    const msgs = [u('a')]
    expect(requestFromLog(header, msgs)).toEqual({ messages: msgs, system: 's', tools: [tool], config: { model: 'm' } })
    const { agent } = makeAgent([{ text: 'hi' }])
    agent.followup('q')
    await agent.whenIdle()
    expect(historyFromLog(agent.events)).toEqual(agent.history())
    expect(historyFromLog(agent.events)).toHaveLength(2)
  })
})

describe('headerChanged (docs/spec/lifecycle.md §4.3)', () => {
  const last = { reason: 'initial', system: 's', tools: [tool], config: { model: 'm' } } as any
  it('due with no header yet, or when the system prompt, the config or the tools differ; not when all are equal', () => {
    expect(headerChanged(null, 's', [tool] as any, { model: 'm' } as any)).toBe(true)
    expect(headerChanged(last, 's', [{ ...tool }] as any, { model: 'm' } as any)).toBe(false)
    expect(headerChanged(last, 'x', [tool] as any, { model: 'm' } as any)).toBe(true)
    expect(headerChanged(last, 's', [tool] as any, { model: 'm', temperature: 0 } as any)).toBe(true)
    expect(headerChanged(last, 's', [] as any, { model: 'm' } as any)).toBe(true)
  })
})
