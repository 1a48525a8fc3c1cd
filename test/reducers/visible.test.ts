/**
 * History shows every surface message but an empty assistant message (R3: what the model sees is
 * the logged history): a user or tool message with no content blocks stays visible.
 */
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/index.js'
import { visibleMessage } from '../../reducers/index.js'

const ev = (type: string, message: unknown) => ({ seq: 0, time: 0, type, data: { message }, surfaceOp: 'append' }) as unknown as LogEvent

describe('visibleMessage', () => {
  it('R3: only an empty assistant message is hidden', () => {
    const emptyTool = { role: 'tool', callId: 'c1', content: [] }
    const emptyUser = { id: 'm1', role: 'user', content: [], source: { kind: 'user' } }
    const text = { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }
    expect(visibleMessage(ev('tool/result', emptyTool))).toBe(emptyTool)
    expect(visibleMessage(ev('user/message', emptyUser))).toBe(emptyUser)
    expect(visibleMessage(ev('assistant/message', { role: 'assistant', content: [] }))).toBeNull()
    expect(visibleMessage(ev('assistant/message', text))).toBe(text)
  })
})
