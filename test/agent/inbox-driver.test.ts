/**
 * The inbox handle and its live events (docs/spec/lifecycle.md §1, agent/inbox-driver.ts): splice coordinates
 * normalised like `Array.prototype.splice`, what each edit logs (L11: removals by edits carry
 * `outcome: 'canceled'`, a claim's carry none; a splice that changes nothing is not logged), and the
 * live `agent/inbox/*` events each edit and claim emits, in order.
 */
import { describe, expect, it } from 'vitest'
import type { Agent } from '../../agent/index.js'
import { makeAgent, valid } from './contain-helpers.js'

/** Every live inbox event, one short line each, in emission order. */
function liveInbox(agent: Agent): string[] {
  const lines: string[] = []
  const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id).join(',')
  agent.on('agent/inbox/spliced', (e) => lines.push(`spliced ${e.target} ${e.start} -${e.removedCount} +[${ids(e.inserted)}]${e.outcome ? ` ${e.outcome}` : ''}${'outcome' in e && e.outcome === undefined ? ' outcome-key' : ''}`))
  agent.on('agent/inbox/inserted', (e) => lines.push(`inserted ${e.target} ${e.message.id}`))
  agent.on('agent/inbox/discarded', (e) => lines.push(`discarded ${e.target} ${e.message.id} ${e.outcome}`))
  agent.on('agent/inbox/claimed', (e) => lines.push(`claimed ${e.message.id} turn ${e.turn}`))
  return lines
}

function splices(agent: Agent): unknown[] {
  return agent.events.filter((e) => e.type === 'agent/inbox/spliced').map((e) => e.data)
}

const ids = (ms: readonly { id: string }[]) => ms.map((m) => m.id)

describe('inbox edits: coordinates, log and live events', () => {
  it('L11: append/prepend insert at tail/head; each logs one splice without removedCount or outcome and emits spliced + inserted', () => {
    const { agent } = makeAgent([])
    const live = liveInbox(agent)
    expect(agent.inbox.append('next-turn', 'a')).toBe('m1')
    expect(agent.inbox.append('next-turn', 'b')).toBe('m2')
    expect(agent.inbox.prepend('next-turn', 'c')).toBe('m3')
    expect(agent.inbox.prepend('next-step', 'd')).toBe('m4')
    expect(agent.inbox.append('next-step', 'e')).toBe('m5')
    expect(ids(agent.inbox.nextTurn)).toEqual(['m3', 'm1', 'm2'])
    expect(ids(agent.inbox.nextStep)).toEqual(['m4', 'm5'])
    expect(splices(agent).map((d: any) => [d.target, d.start, d.inserted.map((m: any) => m.id), 'removedCount' in d, 'outcome' in d])).toEqual([
      ['next-turn', 0, ['m1'], false, false], ['next-turn', 1, ['m2'], false, false], ['next-turn', 0, ['m3'], false, false],
      ['next-step', 0, ['m4'], false, false], ['next-step', 1, ['m5'], false, false],
    ])
    expect(live).toEqual([
      'spliced next-turn 0 -0 +[m1]', 'inserted next-turn m1', 'spliced next-turn 1 -0 +[m2]', 'inserted next-turn m2',
      'spliced next-turn 0 -0 +[m3]', 'inserted next-turn m3', 'spliced next-step 0 -0 +[m4]', 'inserted next-step m4',
      'spliced next-step 1 -0 +[m5]', 'inserted next-step m5',
    ])
    expect(agent.status).toBe('idle')
    valid(agent.events)
  })

  it('L11: replace and remove find the id in either list; removals are canceled (log and live discarded); unknown ids are false and log nothing', () => {
    const { agent } = makeAgent([])
    agent.inbox.append('next-turn', 'a') // m1
    agent.inbox.append('next-step', 'b') // m2
    agent.inbox.append('next-step', 'c') // m3
    const live = liveInbox(agent)
    const n = agent.events.length
    expect(agent.inbox.replace('m3', 'C')).toBe(true) // m4 at index 1 of next-step
    expect(agent.inbox.remove('m2')).toBe(true)
    expect(agent.inbox.replace('nope', 'x')).toBe(false)
    expect(agent.inbox.remove('m2')).toBe(false)
    expect(agent.inbox.replace('m1', { id: 'own', content: [{ type: 'text', text: 'A' }] })).toBe(true)
    expect(ids(agent.inbox.nextTurn)).toEqual(['own'])
    expect(ids(agent.inbox.nextStep)).toEqual(['m4'])
    expect(splices(agent).slice(-3)).toEqual([
      { target: 'next-step', start: 1, inserted: [expect.objectContaining({ id: 'm4' })], removedCount: 1, outcome: 'canceled' },
      { target: 'next-step', start: 0, inserted: [], removedCount: 1, outcome: 'canceled' },
      { target: 'next-turn', start: 0, inserted: [expect.objectContaining({ id: 'own' })], removedCount: 1, outcome: 'canceled' },
    ])
    expect(agent.events).toHaveLength(n + 3)
    expect(live).toEqual([
      'spliced next-step 1 -1 +[m4] canceled', 'discarded next-step m3 canceled', 'inserted next-step m4',
      'spliced next-step 0 -1 +[] canceled', 'discarded next-step m2 canceled',
      'spliced next-turn 0 -1 +[own] canceled', 'discarded next-turn m1 canceled', 'inserted next-turn own',
    ])
    valid(agent.events)
  })

  it('splice normalises start and deleteCount like Array.prototype.splice and returns the removed messages', () => {
    const { agent } = makeAgent([])
    const put = (n: number) => {
      for (let i = 0; i < n; i++) agent.inbox.append('next-turn', `x${i}`)
    }
    const model: string[] = []
    const check = (start: number, del: number | undefined, ins: string[]) => {
      const removed = del === undefined ? agent.inbox.splice('next-turn', start) : agent.inbox.splice('next-turn', start, del, ...ins)
      const expected = del === undefined ? model.splice(start) : model.splice(start, del, ...ins.map(() => ''))
      expect(removed.map((m) => m.id)).toEqual(expected)
      // the inserted ids are the next counter ids: fill them into the model
      const now = ids(agent.inbox.nextTurn)
      expect(now.length).toBe(model.length)
      for (let i = 0; i < model.length; i++) if (model[i] === '') model[i] = now[i]!
      expect(now).toEqual(model)
    }
    put(5)
    model.push(...ids(agent.inbox.nextTurn))
    check(0, 1, ['h'])           // at the head
    check(-2, 1, ['n'])          // from the end
    check(-10, 1, [])            // before the head: 0
    check(10, 0, ['tail'])       // past the end: appended
    check(1, -3, ['neg'])        // a negative count removes nothing
    check(2, 100, [])            // a count past the end stops at the end
    check(1, undefined, [])      // no count: to the end
    expect(agent.inbox.splice('next-turn', 0, 0)).toEqual([]) // nothing: not logged
    valid(agent.events)
  })

  it('L11: a splice that changes nothing logs and emits nothing; clear() cancels next-step first, then next-turn, skipping empty lists', () => {
    const { agent } = makeAgent([])
    agent.inbox.append('next-turn', 'a')
    agent.inbox.append('next-turn', 'b')
    const live = liveInbox(agent)
    const n = agent.events.length
    expect(agent.inbox.splice('next-step', 0, 5)).toEqual([])
    agent.inbox.clear() // next-step is empty: one splice
    expect(agent.events).toHaveLength(n + 1)
    expect(live).toEqual(['spliced next-turn 0 -2 +[] canceled', 'discarded next-turn m1 canceled', 'discarded next-turn m2 canceled'])
    agent.inbox.clear()
    expect(agent.events).toHaveLength(n + 1)
    agent.inbox.append('next-step', 's')
    agent.inbox.append('next-turn', 't')
    live.length = 0
    agent.inbox.clear()
    expect(live.filter((l) => l.startsWith('spliced'))).toEqual(['spliced next-step 0 -1 +[] canceled', 'spliced next-turn 0 -1 +[] canceled'])
    valid(agent.events)
  })

  it('L11: a duplicate pending id is DUPLICATE_PENDING_ID naming message.id and the ids, also across lists', () => {
    const { agent } = makeAgent([])
    agent.inbox.append('next-step', { id: 'x', content: [{ type: 'text', text: 'a' }] })
    expect(() => agent.inbox.append('next-turn', { id: 'x', content: [{ type: 'text', text: 'b' }] })).toThrowError(
      expect.objectContaining({ code: 'DUPLICATE_PENDING_ID', field: 'message.id', info: { ids: ['x'] } }),
    )
    expect(agent.events).toHaveLength(1)
  })

  it('L11: a claim logs next-step first (no outcome), then the first prompt; emits spliced per list and claimed per message with the turn, no discarded', async () => {
    const { agent } = makeAgent([{ text: 'ok' }])
    agent.inject('s1') // m1
    agent.inject('s2') // m2
    agent.inbox.append('next-turn', 'p1') // m3
    agent.inbox.append('next-turn', 'p2') // m4
    const live = liveInbox(agent)
    const entered: string[][] = []
    agent.on('agent/pre-step', async (p) => {
      entered.push(ids(p.messages))
      return { kind: 'reject' }
    })
    expect(agent.wake()).toBe(true)
    await agent.whenIdle()
    expect(entered).toEqual([['m1', 'm2', 'm3'], ['m4']])
    expect(live.slice(0, 5)).toEqual([
      'spliced next-step 0 -2 +[]', 'spliced next-turn 0 -1 +[]', 'claimed m1 turn 1', 'claimed m2 turn 1', 'claimed m3 turn 1',
    ])
    expect(live.some((l) => l.startsWith('discarded'))).toBe(false)
    const claimSplices = splices(agent).slice(4, 6)
    expect(claimSplices).toEqual([
      { target: 'next-step', start: 0, inserted: [], removedCount: 2 },
      { target: 'next-turn', start: 0, inserted: [], removedCount: 1 },
    ])
    // the second turn (m4) claims only its prompt: next-step is empty, so no next-step splice
    expect(live.slice(5)).toEqual(['spliced next-turn 0 -1 +[]', 'claimed m4 turn 2'])
    valid(agent.events)
  })

  it('after dispose every inbox edit is refused (AGENT_DISPOSED); the views still read', async () => {
    const { agent } = makeAgent([])
    agent.inject('a')
    await agent.dispose()
    for (const edit of [
      () => agent.inbox.append('next-turn', 'x'), () => agent.inbox.prepend('next-step', 'x'), () => agent.inbox.replace('m1', 'x'),
      () => agent.inbox.remove('m1'), () => agent.inbox.splice('next-step', 0, 1), () => agent.inbox.clear(),
    ]) {
      expect(edit).toThrowError(expect.objectContaining({ code: 'AGENT_DISPOSED' }))
    }
    expect(ids(agent.inbox.nextStep)).toEqual(['m1'])
  })

  it('L11: a pure insertion through splice() carries no outcome (log and live), though edits pass canceled', () => {
    const { agent } = makeAgent([])
    const live = liveInbox(agent)
    agent.inbox.splice('next-turn', 0, 0, 'a')
    expect(splices(agent)).toEqual([{ target: 'next-turn', start: 0, inserted: [expect.objectContaining({ id: 'm1' })] }])
    expect(live).toEqual(['spliced next-turn 0 -0 +[m1]', 'inserted next-turn m1'])
  })

  it('L11: a steer to an idle agent: its turn claims next-step only (no empty next-turn splice)', async () => {
    const { agent } = makeAgent([{ text: 'ok' }])
    const live = liveInbox(agent)
    agent.steer('s')
    await agent.whenIdle()
    expect(live).toEqual(['spliced next-step 0 -0 +[m1]', 'inserted next-step m1', 'spliced next-step 0 -1 +[]', 'claimed m1 turn 1'])
    valid(agent.events)
  })
})

describe('claims inside a turn and the wake latch', () => {
  it('L11: a prompt queued while a turn runs tools is not claimed by that turn\'s next proposal; it opens the next turn', async () => {
    const tool = {
      name: 't', description: 't', parameters: (await import('zod')).z.object({}),
      execute: () => {
        agent.followup('later') // m2, next-turn
        agent.steer('now')      // m3, next-step: claimed by the second proposal
        return 'ok'
      },
    }
    const { agent } = makeAgent([{ toolCalls: [{ name: 't', args: {} }] }, { text: 'a' }, { text: 'b' }], { tools: [tool as never] })
    const claimed: string[] = []
    agent.on('agent/inbox/claimed', (e) => claimed.push(`${e.message.id}@${e.turn}`))
    agent.followup('first')
    await agent.whenIdle()
    expect(claimed).toEqual(['m1@1', 'm3@1', 'm2@2'])
    expect(agent.events.filter((e) => e.type === 'turn/start')).toHaveLength(2)
    expect(agent.inbox.nextTurn).toEqual([])
    valid(agent.events)
  })

  it('docs/spec/lifecycle.md §2: a wake latched during maintenance whose input was removed meanwhile opens no turn; whenIdle resolves', async () => {
    const { agent } = makeAgent([])
    let release!: () => void
    const m = agent.runMaintenance(() => new Promise<void>((r) => (release = r)))
    const id = agent.followup('during')
    expect(agent.snapshot().inbox.latched).toBe(true)
    let settled = false
    const idle = agent.whenIdle().then(() => (settled = true))
    await Promise.resolve()
    expect(settled).toBe(false) // R8: a latched followup is waking work still pending
    expect(agent.inbox.remove(id)).toBe(true)
    release()
    await m
    await idle
    expect(agent.events.some((e) => e.type === 'turn/start')).toBe(false)
    expect(agent.status).toBe('idle')
    expect(agent.snapshot().inbox.latched).toBe(false)
  })

  it('docs/spec/lifecycle.md §2: a steer during maintenance is latched and replayed: its turn enters it', async () => {
    const { agent } = makeAgent([{ text: 'ok' }])
    let release!: () => void
    const m = agent.runMaintenance(() => new Promise<void>((r) => (release = r)))
    agent.steer('during')
    let settled = false
    void agent.whenIdle().then(() => (settled = true))
    await Promise.resolve()
    expect(settled).toBe(false) // latched waking work is pending
    release()
    await m
    await agent.whenIdle()
    expect(agent.events.filter((e) => e.type === 'user/message').map((e) => (e.data as any).message.id)).toEqual(['m1'])
    valid(agent.events)
  })
  it('docs/spec/lifecycle.md §3.8 / choice 7: a steer during maintenance, then removed, with an inject left, opens no turn (the latch counts only its own messages)', async () => {
    const { agent } = makeAgent([{ text: 'ok' }])
    let release!: () => void
    const m = agent.runMaintenance(() => new Promise<void>((r) => (release = r)))
    const steer = agent.steer('during')
    agent.inject('context')
    expect(agent.snapshot().inbox.latched).toBe(true)
    expect(agent.inbox.remove(steer)).toBe(true)
    release()
    await m
    await agent.whenIdle()
    // injected context alone never opens a turn: no model request nobody asked for
    expect(agent.events.some((e) => e.type === 'turn/start')).toBe(false)
    expect(agent.inbox.nextStep.map((x) => x.id)).toEqual(['m2'])
    expect(agent.snapshot().inbox.latched).toBe(false)
  })

  it('docs/spec/lifecycle.md §2: a steer during maintenance replaced by an edit still opens its turn (the replacement inherits the latch)', async () => {
    const { agent } = makeAgent([{ text: 'ok' }])
    let release!: () => void
    const m = agent.runMaintenance(() => new Promise<void>((r) => (release = r)))
    const steer = agent.steer('during')
    expect(agent.inbox.replace(steer, 'edited')).toBe(true)
    release()
    await m
    await agent.whenIdle()
    expect(agent.events.filter((e) => e.type === 'turn/start')).toHaveLength(1)
    valid(agent.events)
  })
})
