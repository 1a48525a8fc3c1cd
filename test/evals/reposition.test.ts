/**
 * P4 for goldens, example tests of input positions the log leaves open (docs/decisions/golden-sessions.md
 * , "Golden inputs"): the order of a cancel and next-turn sends right after a
 * stopping step, and a next-step send after a `tools` step whose pre-step rejects. Each golden is
 * recorded by the real agent with the app's sends made while a hook waits; the re-run gets hooks
 * that do not wait, so only the re-issued inputs can reproduce the order.
 */
import { describe, expect, it } from 'vitest'
import type { EventOf, LogEvent } from '../../events/index.js'
import { recordedModel, rerun } from '../../evals/index.js'
import { instantTimers, recordGolden, weatherTools } from './goldens.js'

const base = { timers: instantTimers, timeoutMs: 5000 }

/** A hook that waits on its first call (`entered` says it waits, `release` lets it go) when `wait`. */
function gate() {
  let release!: () => void
  const gone = new Promise<void>((r) => (release = r))
  let entered!: () => void
  const waiting = new Promise<void>((r) => (entered = r))
  return { release, waiting, entered, gone }
}

const types = (events: readonly LogEvent[], from: number, n: number) => events.slice(from, from + n).map((e) => e.type)

describe('P4 for goldens: input positions the log leaves open', () => {
  it('P4 §3.8: followups sent while the turn-stopping listeners wait, then a cancel: re-issued before the cancel, parked, no turn opened until the next send (seed 569338541)', async () => {
    const g0 = gate()
    const stoppingHooks = (wait: boolean) => ({
      'agent/turn-stopping': async () => {
        if (wait) {
          g0.entered()
          await g0.gone
        }
      },
    }) as never
    const g = await recordGolden([{ text: 'a' }, { text: 'b' }], async (a) => {
      a.followup('one')
      await g0.waiting
      a.followup('burst 0')
      a.followup('burst 1')
      a.cancel({ kind: 'parent' }, { keepInbox: true })
      g0.release()
      await a.whenIdle()
      a.followup('final')
      await a.whenIdle()
    }, { hooks: stoppingHooks(true) })
    const end = g.events.findIndex((e) => e.type === 'turn/end')
    expect((g.events[end] as EventOf<'turn/end'>).data.reason.kind).toBe('aborted')
    // the golden: the two followups before the aborted end, parked; `final` opens turn 2 with all three
    expect(types(g.events, end - 2, 5)).toEqual(['agent/inbox/spliced', 'agent/inbox/spliced', 'turn/end', 'agent/inbox/spliced', 'turn/start'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: stoppingHooks(false) })
    expect(r.divergence, r.divergence?.diff).toBeNull()
    expect(r.inputs.filter((i) => i.seq >= end - 2 && i.seq <= end + 1).map((i) => [i.kind, i.outcome])).toEqual([
      ['send', 'issued'], ['send', 'issued'], ['cancel', 'issued'], ['send', 'issued'],
    ])
  })

  it('P4 §3.8: a cancel, then followups, while the turn-stopping listeners wait: the followups latch and the next turn opens at once (the cancel re-issued first)', async () => {
    const g0 = gate()
    const stoppingHooks = (wait: boolean) => {
      let calls = 0
      return {
        'agent/turn-stopping': async () => {
          if (calls++ === 0 && wait) {
            g0.entered()
            await g0.gone
          }
        },
      } as never
    }
    const g = await recordGolden([{ text: 'a' }, { text: 'b' }], async (a) => {
      a.followup('one')
      await g0.waiting
      a.cancel({ kind: 'parent' }, { keepInbox: true })
      a.followup('burst 0')
      a.followup('burst 1')
      g0.release()
      await a.whenIdle()
    }, { hooks: stoppingHooks(true) })
    const end = g.events.findIndex((e) => e.type === 'turn/end')
    expect((g.events[end] as EventOf<'turn/end'>).data.reason.kind).toBe('aborted')
    // the same two sends before the aborted end as above, but the next turn opens from their latch
    expect(types(g.events, end - 2, 4)).toEqual(['agent/inbox/spliced', 'agent/inbox/spliced', 'turn/end', 'turn/start'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: stoppingHooks(false) })
    expect(r.divergence, r.divergence?.diff).toBeNull()
    const cancel = r.inputs.find((i) => i.kind === 'cancel')!
    expect(r.inputs.filter((i) => i.kind === 'send' && i.seq >= end - 2 && i.seq < end).every((i) => i.issuedAt! >= cancel.issuedAt!)).toBe(true)
  })

  it('P4 §3.2: a steer sent while step 2\'s pre-step waits, which then rejects (`blocked`): re-issued after the empty claim, left pending for the next turn (seed 938791077)', async () => {
    const g0 = gate()
    const preStep = (wait: boolean) => {
      let calls = 0
      return {
        'agent/pre-step': async (_p: unknown, next: () => Promise<unknown>) => {
          if (calls++ === 1) {
            if (wait) {
              g0.entered()
              await g0.gone
            }
            return { kind: 'reject' }
          }
          return next()
        },
      } as never
    }
    const g = await recordGolden([{ toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }] }, { text: 'b' }], async (a) => {
      a.followup('one')
      await g0.waiting
      a.steer('steer')
      g0.release()
      await a.whenIdle()
      a.followup('final')
      await a.whenIdle()
    }, { hooks: preStep(true) })
    const end = g.events.findIndex((e) => e.type === 'turn/end')
    expect((g.events[end] as EventOf<'turn/end'>).data.reason.kind).toBe('blocked')
    // step 1 ended `tools`, the steer, the end: no claim of it in turn 1
    expect(types(g.events, end - 2, 3)).toEqual(['step/end', 'agent/inbox/spliced', 'turn/end'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: preStep(false) })
    expect(r.divergence, r.divergence?.diff).toBeNull()
    expect(r.log.events.length).toBe(g.events.length)
  })
  it('P4 §3.2: a steer sent while step 2\'s pre-step waits, which then throws (`error {HOOK_ERROR}` naming agent/pre-step): re-issued after the empty claim, left pending for the next turn (seed 1145087176)', async () => {
    const g0 = gate()
    const preStep = (wait: boolean) => {
      let calls = 0
      return {
        'agent/pre-step': async (_p: unknown, next: () => Promise<unknown>) => {
          if (calls++ === 1) {
            if (wait) {
              g0.entered()
              await g0.gone
            }
            throw new Error('pre-step throws')
          }
          return next()
        },
      } as never
    }
    const g = await recordGolden([{ toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }] }, { text: 'b' }], async (a) => {
      a.followup('one')
      await g0.waiting
      a.steer('steer')
      g0.release()
      await a.whenIdle()
      a.followup('final')
      await a.whenIdle()
    }, { hooks: preStep(true) })
    const end = g.events.findIndex((e) => e.type === 'turn/end')
    expect((g.events[end] as EventOf<'turn/end'>).data.reason).toMatchObject({ kind: 'error', failure: { code: 'HOOK_ERROR', message: expect.stringContaining('agent/pre-step') } })
    // step 1 ended `tools`, the steer, the end: no claim of it in turn 1
    expect(types(g.events, end - 2, 3)).toEqual(['step/end', 'agent/inbox/spliced', 'turn/end'])
    // the steer stays pending: turn 2 claims it with the followup
    const next = g.events.findIndex((e, i) => i > end && e.type === 'user/message')
    expect(next).toBeGreaterThan(end)
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: preStep(false) })
    expect(r.divergence, r.divergence?.diff).toBeNull()
    expect(r.log.events.length).toBe(g.events.length)
  })
  it('P4: a steer sent while a turn-stopping listener waits, which then throws (`error {HOOK_ERROR}`): issued from the turn-stopping listeners, before the end (seed 965177431)', async () => {
    const g0 = gate()
    const stoppingHooks = (wait: boolean) => ({
      'agent/turn-stopping': async () => {
        if (wait) {
          g0.entered()
          await g0.gone
        }
        throw new Error('turn-stopping throws')
      },
    }) as never
    const g = await recordGolden([{ text: 'a' }, { text: 'b' }], async (a) => {
      a.followup('one')
      await g0.waiting
      a.steer('steer')
      g0.release()
      await a.whenIdle()
    }, { hooks: stoppingHooks(true) })
    const end = g.events.findIndex((e) => e.type === 'turn/end')
    expect((g.events[end] as EventOf<'turn/end'>).data.reason).toMatchObject({ kind: 'error', failure: { code: 'HOOK_ERROR' } })
    expect(types(g.events, end - 2, 3)).toEqual(['step/end', 'agent/inbox/spliced', 'turn/end'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: stoppingHooks(false) })
    expect(r.divergence, r.divergence?.diff).toBeNull()
  })
})
