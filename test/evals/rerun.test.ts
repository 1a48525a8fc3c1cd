import { describe, expect, it } from 'vitest'
import type { EventOf } from '../../events/index.js'
import { TurnlogError } from '../../events/errors.js'
import { recordedModel, rerun } from '../../evals/index.js'
import { scriptedModel } from '../../models/index.js'
import { instantTimers, recordGolden, SYSTEM, twoTurnGolden, weatherTools } from './goldens.js'

const base = { timers: instantTimers, timeoutMs: 5000 }

describe('rerun: the golden re-run with a change under test (P4 extended to goldens)', () => {
  it('P4: the recorded model and tool results reproduce the golden (time aside); the new log is a fork with parent', async () => {
    const g = await twoTurnGolden()
    const calls = { n: 0 }
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(calls) })
    expect(r.divergence).toBeNull()
    expect(r.log.events.length).toBe(g.events.length)
    expect(calls.n).toBe(0) // every result served from the golden
    expect(r.verify.ok).toBe(true)
    expect(r.toolSequenceDiff.map((e) => e.op)).toEqual(['same', 'same', 'same'])
    expect(r.usageDelta.delta).toEqual({ requests: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 })
    expect(r.log.header.parent).toEqual({ session: 'golden-1', seq: 0 })
    expect(r.log.header.inheritedEventCount).toBe(r.liveFrom)
    expect(r.liveFrom).toBe(0) // from turn 1: even the first send is re-issued
    expect(r.unrecorded).toEqual([])
  })

  it('P4: from { turn: 2 } the prefix is the golden verbatim and the rest reproduces', async () => {
    const g = await twoTurnGolden()
    const r = await rerun(g, { ...base, from: { turn: 2 }, model: recordedModel(g), tools: weatherTools() })
    const t2 = g.events.find((e) => e.type === 'turn/start' && (e as EventOf<'turn/start'>).data.turn === 2)!
    expect(r.liveFrom).toBe(t2.seq - 1) // the followup that opened turn 2 is re-issued
    expect(r.log.events.slice(0, r.liveFrom)).toEqual(g.events.slice(0, r.liveFrom))
    expect(r.divergence).toBeNull()
  })

  it('a changed system prompt diverges at the first request header of the live turn', async () => {
    const g = await twoTurnGolden()
    const r = await rerun(g, { ...base, from: { turn: 2 }, model: recordedModel(g), tools: weatherTools(), system: 'Be terse.' })
    expect(r.divergence).toMatchObject({ turn: 2, step: 1, kind: 'mismatch' })
    expect(r.divergence!.expected!.type).toBe('assistant/chunk') // the golden logged no header there
    expect(r.divergence!.actual!.type).toBe('request/header')
    expect((r.divergence!.actual as EventOf<'request/header'>).data.system).toBe('Be terse.')
    expect(r.divergence!.diff).toContain('turn 2, step 1')
  })

  it('a changed model response (recordedModel replace) diverges at that step; the tool sequence diff shows the call it dropped', async () => {
    const g = await twoTurnGolden()
    const r = await rerun(g, {
      ...base, tools: weatherTools(),
      model: recordedModel(g, { replace: (at) => (at.turn === 2 && at.step === 1 ? { toolCalls: [{ id: 'c2', name: 'weather', args: { city: 'Oslo' } }] } : undefined) }),
    })
    expect(r.divergence).toMatchObject({ turn: 2, step: 1 })
    expect(r.divergence!.expected!.type).toBe('assistant/chunk')
    expect(r.toolSequenceDiff).toEqual([
      { op: 'same', name: 'weather', arguments: '{"city":"Paris"}', turn: 1 },
      { op: 'same', name: 'weather', arguments: '{"city":"Oslo"}', turn: 2 },
      { op: 'removed', name: 'weather', arguments: '{"city":"Rome","unit":"C"}', turn: 2 },
    ])
  })

  it('a changed tool result (a mock) diverges at that tool/result', async () => {
    const g = await twoTurnGolden()
    const r = await rerun(g, {
      ...base, model: recordedModel(g), tools: weatherTools(),
      toolResults: { weather: (call) => (call.turn === 2 && (call.args as { city: string }).city === 'Rome' ? { city: 'Rome', tempC: 30 } : { city: (call.args as { city: string }).city, tempC: (call.args as { city: string }).city.length + 10 }) },
    })
    expect(r.divergence).toMatchObject({ turn: 2, step: 1, kind: 'mismatch' })
    expect((r.divergence!.expected as EventOf<'tool/result'>).data.callId).toBe('c3')
    expect(r.divergence!.diff).toContain('tempC')
  })

  it('recorded tool results are matched by name, canonical arguments (key order ignored) and occurrence', async () => {
    const g = await twoTurnGolden()
    // the model under test asks for Rome with the keys in another order, and for Paris a second time
    const model = scriptedModel([
      { toolCalls: [{ id: 'x1', name: 'weather', rawArgs: '{"unit":"C","city":"Rome"}' }] },
      { toolCalls: [{ id: 'x2', name: 'weather', args: { city: 'Oslo' } }, { id: 'x3', name: 'weather', args: { city: 'Oslo' } }] },
      { text: 'done' },
    ])
    const r = await rerun(g, { ...base, from: { turn: 2 }, model, tools: weatherTools() })
    const results = r.log.events.slice(r.liveFrom).filter((e) => e.type === 'tool/result') as EventOf<'tool/result'>[]
    expect(results.map((e) => [e.data.callId, e.data.error?.code ?? 'ok'])).toEqual([['x1', 'ok'], ['x2', 'ok'], ['x3', 'TOOL_ERROR']])
    expect((results[0]!.data.message.content[0] as { text: string }).text).toBe('{"city":"Rome","tempC":14}')
    // the second Oslo call: the golden has one, so it is unrecorded (onUnrecorded 'fail')
    expect(results[2]!.data.error!.message).toContain('no recorded result for weather({"city":"Oslo"}) (occurrence 2)')
    expect(r.unrecorded.map((c) => [c.callId, c.occurrence])).toEqual([['x3', 1]])
  })

  it("onUnrecorded: 'live' runs the body; a function gives the output", async () => {
    const g = await twoTurnGolden()
    const model = () => scriptedModel([{ toolCalls: [{ id: 'y1', name: 'weather', args: { city: 'Lima' } }] }, { text: 'ok' }])
    const calls = { n: 0 }
    const live = await rerun(g, { ...base, from: { turn: 2 }, model: model(), tools: weatherTools(calls), onUnrecorded: 'live' })
    expect(calls.n).toBe(1)
    expect(live.unrecorded).toEqual([])
    const fn = await rerun(g, { ...base, from: { turn: 2 }, model: model(), tools: weatherTools(), onUnrecorded: () => 'mocked' })
    const res = fn.log.events.find((e) => e.type === 'tool/result' && (e as EventOf<'tool/result'>).data.callId === 'y1') as EventOf<'tool/result'>
    expect(res.data.message.content).toEqual([{ type: 'text', text: 'mocked' }])
  })

  it('from { turn, step }: the earlier steps of that turn are served as recorded, whatever the model under test says', async () => {
    const g = await twoTurnGolden()
    const wrong = scriptedModel([{ text: 'step 2 under test' }])
    const r = await rerun(g, { ...base, from: { turn: 2, step: 2 }, model: wrong, tools: weatherTools() })
    // step 1 of turn 2 (the two calls) as recorded; step 2 is the model under test
    expect(wrong.requests.length).toBe(1)
    expect(r.divergence).toMatchObject({ turn: 2, step: 2 })
    expect(r.toolSequenceDiff.every((e) => e.op === 'same')).toBe(true)
  })

  it('recorded inputs are re-issued at their lifecycle position, not their seq: a steer after step 1 still lands after step 1', async () => {
    const g = await recordGolden([
      { toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }] },
      { text: 'Paris is mild.' },
    ], async (a) => {
      a.followup('Weather in Paris?')
      // steer once step 1 has ended
      await new Promise<void>((resolve) => {
        const off = a.subscribe((e) => {
          if (e.type === 'step/end') {
            off()
            queueMicrotask(() => {
              a.steer('in Fahrenheit please')
              resolve()
            })
          }
        })
      })
    })
    const steerSeq = g.events.findIndex((e) => e.type === 'agent/inbox/spliced' && JSON.stringify(e.data).includes('Fahrenheit'))
    expect(steerSeq).toBeGreaterThan(0)
    // the model under test streams a longer step 1 (more chunks: every seq after it moves)
    const model = scriptedModel([
      { text: 'Let me look that up.', toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }], chunkSize: 2 },
      { text: 'Paris is 59 °F.' },
    ])
    const r = await rerun(g, { ...base, model, tools: weatherTools() })
    const ev = r.log.events
    const steer = ev.findIndex((e) => e.type === 'agent/inbox/spliced' && JSON.stringify(e.data).includes('Fahrenheit'))
    expect(steer).toBeGreaterThan(steerSeq) // another seq …
    expect(ev[steer - 1]!.type).toBe('step/end') // … the same position: right after step 1 ended
    expect((ev[steer - 1] as EventOf<'step/end'>).data.step).toBe(1)
    expect(r.inputs.find((i) => i.seq === steerSeq)).toMatchObject({ kind: 'send', outcome: 'issued' })
    // and the steer was claimed into step 2 of turn 1, as recorded
    const msg = ev.find((e) => e.type === 'user/message' && JSON.stringify(e.data).includes('Fahrenheit'))!
    const step2 = ev.findIndex((e) => e.type === 'step/start' && (e as EventOf<'step/start'>).data.step === 2)
    expect(msg.seq).toBe(step2 + 1)
  })

  it('a recorded cancel is re-issued in its turn; one whose turn the re-run already ended is dropped', async () => {
    // golden: turn 1's tool body is cancelled while it runs
    let cancel!: () => void
    const g = await recordGolden([{ toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }] }, { text: 'never' }], async (a) => {
      cancel = () => a.cancel({ kind: 'user' })
      a.followup('Weather in Paris?')
      await a.whenIdle()
    }, {
      tools: [{ ...weatherTools()[0]!, execute: () => new Promise(() => { queueMicrotask(() => cancel()) }) }],
      cancelGraceMs: 0,
    })
    const end = g.events.find((e) => e.type === 'turn/end') as EventOf<'turn/end'>
    expect(end.data.reason.kind).toBe('aborted')
    const same = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), cancelGraceMs: 0 } as never)
    expect(same.inputs.find((i) => i.kind === 'cancel')).toMatchObject({ outcome: 'issued' })
    expect((same.log.events.find((e) => e.type === 'turn/end') as EventOf<'turn/end'>).data.reason).toEqual({ kind: 'aborted', cause: { kind: 'user' } })
    // a model under test that answers at once: the turn is over before the cancel's position
    const quick = await rerun(g, { ...base, model: scriptedModel([{ text: 'Paris: mild.' }]), tools: weatherTools() })
    expect(quick.inputs.find((i) => i.kind === 'cancel')).toMatchObject({ outcome: 'dropped' })
    expect((quick.log.events.find((e) => e.type === 'turn/end') as EventOf<'turn/end'>).data.reason).toEqual({ kind: 'completed' })
    expect(quick.divergence).not.toBeNull()
  })

  it('P4 §3.8: a cancel while pre-step waits, a followup latched by the abort then withdrawn, an inject: the re-run reproduces the golden (fuzzer seed 2007551288)', async () => {
    // The log cannot say when the cancel came (the inbox was empty: it wrote nothing), so the
    // re-run issues it at the turn's end, after the followup, which then latches nothing. That is
    // the same log only if a latch whose prompt was withdrawn opens no turn in the recording either.
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let first = true
    const hooks = {
      'agent/pre-step': async (_p: unknown, next: () => Promise<unknown>) => {
        if (first) {
          first = false
          await gate
        }
        return next()
      },
    } as never
    const g = await recordGolden([{ text: 'three answered' }], async (a) => {
      a.followup('one')
      a.cancel({ kind: 'parent' })
      a.inbox.remove(a.followup('two'))
      a.inject('context')
      release()
      await a.whenIdle()
      a.followup('three')
      await a.whenIdle()
    }, { hooks })
    const ends = g.events.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)
    expect(ends).toEqual(['aborted', 'completed'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools() })
    expect(r.divergence).toBeNull()
    expect(r.inputs.map((i) => [i.kind, i.outcome])).toEqual([
      ['send', 'issued'], ['send', 'issued'], ['edit', 'issued'], ['send', 'issued'], ['cancel', 'issued'], ['send', 'issued'],
    ])
    expect(r.verify.ok).toBe(true)
  })

  it('P4: a removal of the last pending prompt just before an aborted turn ends is the user\'s edit, not the cancel\'s clear, when next-step stays pending (fuzzer seed 1077737493)', async () => {
    // The cancel came while the inbox was empty (it wrote nothing); then an inject, a followup
    // (latched), and a `remove` of that followup: a canceled splice emptying next-turn, like a
    // cancel's clear — but a cancel would have cleared next-step (the inject) first.
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let first = true
    const hooks = {
      'agent/pre-step': async (_p: unknown, next: () => Promise<unknown>) => {
        if (first) {
          first = false
          await gate
        }
        return next()
      },
    } as never
    const g = await recordGolden([{ text: 'three answered' }], async (a) => {
      a.followup('one')
      a.cancel({ kind: 'hook', reason: 'r' })
      a.inject('context')
      a.inbox.remove(a.followup('two'))
      release()
      await a.whenIdle()
      a.followup('three')
      await a.whenIdle()
    }, { hooks })
    expect(g.events.filter((e) => e.type === 'agent/inbox/spliced' && (e as EventOf<'agent/inbox/spliced'>).data.outcome === 'canceled')).toHaveLength(1)
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools() })
    expect(r.divergence).toBeNull()
    expect(r.inputs.map((i) => [i.kind, i.outcome])).toEqual([
      ['send', 'issued'], ['send', 'issued'], ['send', 'issued'], ['edit', 'issued'], ['cancel', 'issued'], ['send', 'issued'],
    ])
    // the context injected in turn 1 is claimed by turn 2, before its prompt, as recorded
    const claimed = r.log.events.filter((e) => e.type === 'user/message').map((e) => JSON.stringify(e.data))
    expect(claimed).toHaveLength(2)
    expect(claimed[0]).toContain('context')
  })

  it('P4: a followup sent while a turn-stopping listener waits, which then throws, lands before the turn ends error (fuzzer seed 1077737493)', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const stopping = new Promise<void>((r) => (entered = r))
    let first = true
    const recording = {
      'agent/turn-stopping': async () => {
        if (!first) return
        first = false
        entered()
        await gate
        throw new Error('turn-stopping throws')
      },
    } as never
    const g = await recordGolden([{ text: 'one answered' }, { text: 'two answered' }], async (a) => {
      a.followup('one')
      await stopping
      a.followup('two')
      release()
      await a.whenIdle()
    }, { hooks: recording })
    const i = g.events.findIndex((e) => e.type === 'turn/end')
    expect(g.events[i - 1]!.type).toBe('agent/inbox/spliced') // the followup came before turn 1 ended
    expect((g.events[i] as EventOf<'turn/end'>).data.reason.kind).toBe('error')
    let once = true
    const underTest = {
      'agent/turn-stopping': async () => {
        if (!once) return
        once = false
        throw new Error('turn-stopping throws')
      },
    } as never
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: underTest })
    expect(r.divergence).toBeNull()
    expect(r.inputs.find((x) => x.seq === i - 1)).toMatchObject({ kind: 'send', outcome: 'issued' })
  })

  it('P4: followups the log shows before a turn-stopping hook\'s steer are issued before it, and the steer keeps its recorded id (fuzzer seed 1077737493)', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const stopping = new Promise<void>((r) => (entered = r))
    const steerOnce = (wait: boolean) => {
      let first = true
      return {
        'agent/turn-stopping': async ({ agent: a }: { agent: { steer(m: string): string } }) => {
          if (!first) return
          first = false
          if (wait) {
            entered()
            await gate
          }
          a.steer('more')
        },
      } as never
    }
    const g = await recordGolden([{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }], async (a) => {
      a.followup('one')
      await stopping
      a.followup('burst 0')
      a.followup('burst 1')
      release()
      await a.whenIdle()
    }, { hooks: steerOnce(true) })
    const sends = g.events.filter((e) => e.type === 'agent/inbox/spliced' && (e as EventOf<'agent/inbox/spliced'>).data.inserted.length === 1)
      .map((e) => (e as EventOf<'agent/inbox/spliced'>).data.inserted[0]!)
    expect(sends.map((m) => (m.content[0] as { text: string }).text)).toEqual(['one', 'burst 0', 'burst 1', 'more'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: steerOnce(false) })
    expect(r.divergence, `${r.divergence?.diff}\n${JSON.stringify(r.inputs)}`).toBeNull()
    const seqOf = (id: string) => g.events.findIndex((e) => e.type === 'agent/inbox/spliced' && (e as EventOf<'agent/inbox/spliced'>).data.inserted[0]?.id === id)
    expect(r.inputs.filter((i) => i.kind === 'send').map((i) => [i.seq, i.outcome])).toEqual([
      [seqOf(sends[0]!.id), 'issued'], [seqOf(sends[1]!.id), 'issued'], [seqOf(sends[2]!.id), 'issued'], [seqOf(sends[3]!.id), 'made-by-hooks'],
    ])
  })

  it('P4: a cancel right after a stopping step is issued once the turn-stopping listeners started: a listener that counts its calls stays in step (fuzzer seed 1077737493)', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const stopping = new Promise<void>((r) => (entered = r))
    // the fuzzer's plan ['none', 'throw'] by a call counter: the second call throws
    const counting = (wait: boolean) => {
      let calls = 0
      return {
        'agent/turn-stopping': async () => {
          const n = calls++
          if (n === 0 && wait) {
            entered()
            await gate
          }
          if (n === 1) throw new Error('second call throws')
        },
      } as never
    }
    const g = await recordGolden([{ text: 'a' }, { text: 'b' }], async (a) => {
      a.followup('one')
      await stopping
      a.cancel({ kind: 'user' })
      release()
      await a.whenIdle()
      a.followup('two')
      await a.whenIdle()
    }, { hooks: counting(true) })
    expect(g.events.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['aborted', 'error'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: counting(false) })
    expect(r.divergence, r.divergence?.diff).toBeNull()
    expect(r.inputs.find((i) => i.kind === 'cancel')).toMatchObject({ outcome: 'issued' })
  })

  it('P4: a cancel right after a step that owes another is issued once the pre-step listeners started: a listener that counts its calls stays in step (fuzzer seed 1077737493)', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const proposing = new Promise<void>((r) => (entered = r))
    // the fuzzer's plan ['next', 'throw', 'next'] by a call counter
    const counting = (wait: boolean) => {
      let calls = 0
      return {
        'agent/pre-step': async (_p: unknown, next: () => Promise<unknown>) => {
          const n = calls++
          if (n === 1) {
            if (wait) {
              entered()
              await gate
            }
            throw new Error('second call throws')
          }
          return next()
        },
      } as never
    }
    const g = await recordGolden([{ toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }] }, { text: 'b' }], async (a) => {
      a.followup('one')
      await proposing
      a.cancel({ kind: 'hook', reason: 'r' })
      release()
      await a.whenIdle()
      a.followup('two')
      await a.whenIdle()
    }, { hooks: counting(true) })
    expect(g.events.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['aborted', 'completed'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: counting(false) })
    expect(r.divergence, r.divergence?.diff).toBeNull()
    expect(r.inputs.find((i) => i.kind === 'cancel')).toMatchObject({ outcome: 'issued' })
  })

  it('P4: a cancel that cleared the inbox is not moved before the followup sent ahead of its clear (fuzzer seed 1077737493)', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const stopping = new Promise<void>((r) => (entered = r))
    const waitOnce = (wait: boolean) => {
      let first = true
      return {
        'agent/turn-stopping': async () => {
          if (first && wait) {
            entered()
            await gate
          }
          first = false
        },
      } as never
    }
    const g = await recordGolden([{ text: 'a' }, { text: 'd' }], async (a) => {
      a.followup('a')
      a.followup('b')
      await stopping
      a.cancel({ kind: 'parent' }) // clears 'b'
      a.followup('c') // latched, then withdrawn by the user's clear
      a.inbox.clear()
      release()
      await a.whenIdle()
      a.followup('d')
      await a.whenIdle()
    }, { hooks: waitOnce(true) })
    const canceled = g.events.filter((e) => e.type === 'agent/inbox/spliced' && (e as EventOf<'agent/inbox/spliced'>).data.outcome === 'canceled')
    expect(canceled).toHaveLength(2)
    expect(g.events.filter((e) => e.type === 'turn/end').map((e) => (e as EventOf<'turn/end'>).data.reason.kind)).toEqual(['aborted', 'completed'])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: waitOnce(false) })
    expect(r.divergence, r.divergence?.diff).toBeNull()
  })

  it('P4: a followup, a cancel that clears it, then a turn-stopping steer re-targeted to next-turn: the steer is the hook\'s, after the cancel (fuzzer seed 882636484)', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const stopping = new Promise<void>((r) => (entered = r))
    const steerOnce = (wait: boolean) => {
      let first = true
      return {
        'agent/turn-stopping': async ({ agent: a }: { agent: { steer(m: string): string } }) => {
          if (!first) return
          first = false
          if (wait) {
            entered()
            await gate
          }
          a.steer('more')
        },
      } as never
    }
    const g = await recordGolden([{ text: 'a' }, { text: 'b' }], async (a) => {
      a.followup('one')
      await stopping
      a.followup('two')
      a.cancel({ kind: 'hook', reason: 'r' }) // clears 'two'; the hook then steers: re-targeted to next-turn
      release()
      await a.whenIdle()
    }, { hooks: steerOnce(true) })
    const inserted = g.events.filter((e) => e.type === 'agent/inbox/spliced' && (e as EventOf<'agent/inbox/spliced'>).data.inserted.length === 1)
      .map((e) => [(e as EventOf<'agent/inbox/spliced'>).data.target, ((e as EventOf<'agent/inbox/spliced'>).data.inserted[0]!.content[0] as { text: string }).text])
    expect(inserted).toEqual([['next-turn', 'one'], ['next-turn', 'two'], ['next-turn', 'more']])
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: steerOnce(false) })
    expect(r.divergence, `${r.divergence?.diff}\n${JSON.stringify(r.inputs)}`).toBeNull()
    expect(r.inputs.find((i) => i.kind === 'send' && i.outcome === 'made-by-hooks')).toBeDefined()
  })

  it('P4: a clear, a followup, then a cancel that keeps the inbox: the clear is the user\'s (the next turn did not open from a latch) (fuzzer seed 882636484)', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let first = true
    const hooks = {
      'agent/pre-step': async (_p: unknown, next: () => Promise<unknown>) => {
        if (first) {
          first = false
          await gate
        }
        return next()
      },
    } as never
    const g = await recordGolden([{ text: 'a' }, { text: 'b' }, { text: 'c' }], async (a) => {
      a.followup('burst 0')
      a.followup('burst 1')
      a.inbox.clear()
      a.followup('three')
      a.cancel({ kind: 'parent' }, { keepInbox: true })
      release()
      await a.whenIdle()
      a.followup('four')
      await a.whenIdle()
    }, { hooks })
    const t1 = g.events.findIndex((e) => e.type === 'turn/end')
    expect(g.events[t1 + 1]!.type).toBe('agent/inbox/spliced') // parked: the next turn waits for a send
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools() })
    expect(r.divergence, r.divergence?.diff).toBeNull()
  })

  it('P4: a cancel while step 2\'s pre-step waits, then an inject and a followup that the abort latches: the next turn opens from the latch (fuzzer seed 404510064)', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const proposing = new Promise<void>((r) => (entered = r))
    const secondWaits = (wait: boolean) => {
      let calls = 0
      return {
        'agent/pre-step': async (_p: unknown, next: () => Promise<unknown>) => {
          if (calls++ === 1 && wait) {
            entered()
            await gate
          }
          return next()
        },
      } as never
    }
    const g = await recordGolden([{ toolCalls: [{ id: 'c1', name: 'weather', args: { city: 'Paris' } }] }, { text: 'b' }, { text: 'c' }], async (a) => {
      a.followup('one')
      await proposing
      a.cancel({ kind: 'hook', reason: 'r' })
      a.inject('context')
      a.followup('two')
      release()
      await a.whenIdle()
    }, { hooks: secondWaits(true) })
    const t1 = g.events.findIndex((e) => e.type === 'turn/end')
    expect(g.events[t1 + 1]!.type).toBe('turn/start') // opened from the latch
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools(), hooks: secondWaits(false) })
    expect(r.divergence, r.divergence?.diff).toBeNull()
  })

  it('bad options are coded errors naming the field', async () => {
    const g = await twoTurnGolden()
    await expect(rerun(g, { model: recordedModel(g), from: { turn: 9 } })).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'from.turn' })
    await expect(rerun(g, { model: {} as never })).rejects.toBeInstanceOf(TurnlogError)
    await expect(rerun(g, { model: recordedModel(g), from: { seq: 10_000 } })).rejects.toMatchObject({ code: 'INVALID_OPTION', field: 'from.seq' })
  })

  it('the system under test defaults to the golden\'s', async () => {
    const g = await twoTurnGolden()
    const r = await rerun(g, { ...base, model: recordedModel(g), tools: weatherTools() })
    const h = r.log.events.find((e) => e.type === 'request/header') as EventOf<'request/header'>
    expect(h.data.system).toBe(SYSTEM)
  })
})
