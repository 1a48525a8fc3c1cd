/**
 * Where a chat stream starts (`ChatScanner`), at every prefix of a log: a prompt that is sent,
 * claimed and answered is "wait" until its turn shows its `user/message`, then that turn — never
 * "none" in between (the claim's splice comes before the message: a stream cut there must not end,
 * the regression of the PostgreSQL chat test); a prompt a cancel took out of the inbox is "none".
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { LogEvent } from '../../events/envelope.js'
import { ChatScanner } from '../../http/chat-place.js'

const example = readFileSync(new URL('../fixtures/valid/example.jsonl', import.meta.url), 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as LogEvent)

describe('ChatScanner', () => {
  it('H6 every prefix of the example log: m1 waits until its user/message, then streams turn 1 from its turn/start; resume follows the open turn', () => {
    const s = new ChatScanner()
    const places: string[] = []
    for (const e of example) {
      s.push(e)
      const p = s.forMessage('m1')
      places.push(p.kind === 'turn' ? `turn@${p.index}` : p.kind)
    }
    const userAt = example.findIndex((e) => e.type === 'user/message')
    expect(places.slice(0, userAt)).toEqual(Array(userAt).fill('wait'))
    expect(new Set(places.slice(userAt))).toEqual(new Set(['turn@1']))
    expect(s.forResume()).toEqual({ kind: 'none' })
    const open = new ChatScanner()
    for (const e of example.slice(0, 10)) open.push(e)
    expect(open.forResume()).toEqual({ kind: 'turn', index: 1 })
  })

  it('H6 a prompt a cancel took out of the inbox has nothing to stream; a pending prompt makes a resume wait for the next turn', () => {
    const s = new ChatScanner()
    const msg = { id: 'q1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }
    s.push({ seq: 0, time: 0, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, inserted: [msg] } } as LogEvent)
    expect(s.forMessage('q1')).toEqual({ kind: 'wait' })
    expect(s.forResume()).toEqual({ kind: 'wait' })
    s.push({ seq: 1, time: 0, type: 'agent/inbox/spliced', data: { target: 'next-turn', start: 0, removedCount: 1, inserted: [], outcome: 'canceled' } } as LogEvent)
    expect(s.forMessage('q1')).toEqual({ kind: 'none' })
    expect(s.forResume()).toEqual({ kind: 'none' })
    expect(s.forMessage('never-sent')).toEqual({ kind: 'wait' })
  })
})
