/**
 * Issue 27 item 5: mistakes named at once, from plain JavaScript too (R7: bad input gets a clear
 * coded error naming its field). `createAgent` and `resumeAgent` check their options against a
 * zod schema at the call (agent/options-schema.ts): an unknown option, a value of the wrong type,
 * a misspelt hook name (in `hooks` or in `agent.on`) is `INVALID_OPTION` naming the field, with a
 * "did you mean" for a near name. The calls below are untyped (`as never`), as from JavaScript.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createAgent } from '../../agent/agent.js'
import { AGENT_OPTION_FIELDS, HOOK_NAMES } from '../../agent/options-schema.js'
import type { AgentOptions } from '../../agent/types.js'
import { TurnlogError } from '../../events/index.js'
import { scriptedModel } from '../../models/index.js'
import { resumeAgent } from '../../replay/resume.js'
import { memoryStore } from '../../stores/memory.js'
import { fcRuns } from '../fc-runs.js'

function thrown(f: () => unknown): TurnlogError {
  try {
    f()
  } catch (err) {
    expect(TurnlogError.is(err), String(err)).toBe(true)
    return err as TurnlogError
  }
  throw new Error('did not throw')
}

async function rejected(p: Promise<unknown>): Promise<TurnlogError> {
  try {
    await p
  } catch (err) {
    expect(TurnlogError.is(err), String(err)).toBe(true)
    return err as TurnlogError
  }
  throw new Error('did not reject')
}

const model = scriptedModel(() => ({ text: 'ok' }))
const create = (o: Record<string, unknown>) => createAgent({ model, ...o } as never)

describe('createAgent options, checked at the call (issue 27 item 5, R7)', () => {
  it('an unknown option is INVALID_OPTION naming it, with "did you mean" for a near name', () => {
    let e = thrown(() => create({ maxStepPerTurn: 3 }))
    expect(e).toMatchObject({ code: 'INVALID_OPTION', field: 'maxStepPerTurn' })
    expect(e.message).toContain("unknown option 'maxStepPerTurn'")
    expect(e.message).toContain("did you mean 'maxStepsPerTurn'?")
    e = thrown(() => create({ sytem: 'be brief' }))
    expect(e).toMatchObject({ code: 'INVALID_OPTION', field: 'sytem' })
    expect(e.message).toContain("did you mean 'system'?")
    e = thrown(() => create({ banana: 1 }))
    expect(e).toMatchObject({ code: 'INVALID_OPTION', field: 'banana' })
    expect(e.message).not.toContain('did you mean')
  })

  it('wrong types name the field: system: 42, retry: {maxRetries: "x"}, retry: {maxRetrys: 2}, tools: {}, clock: 5, checkRequests: "all"', () => {
    expect(thrown(() => create({ system: 42 }))).toMatchObject({ code: 'INVALID_OPTION', field: 'system' })
    const r = thrown(() => create({ retry: { maxRetries: 'x' } }))
    expect(r).toMatchObject({ code: 'INVALID_OPTION', field: 'retry.maxRetries' })
    expect(r.message).toMatch(/^INVALID_OPTION: createAgent: options\.retry\.maxRetries /)
    const typo = thrown(() => create({ retry: { maxRetrys: 2 } }))
    expect(typo).toMatchObject({ code: 'INVALID_OPTION', field: 'retry.maxRetrys' })
    expect(typo.message).toContain("did you mean 'maxRetries'?")
    expect(thrown(() => create({ retry: true }))).toMatchObject({ field: 'retry' })
    expect(thrown(() => create({ tools: {} }))).toMatchObject({ field: 'tools' })
    expect(thrown(() => create({ tools: [{ name: 3 }] }))).toMatchObject({ field: 'tools.0.name' })
    expect(thrown(() => create({ clock: 5 }))).toMatchObject({ field: 'clock' })
    expect(thrown(() => create({ checkRequests: 'all' }))).toMatchObject({ field: 'checkRequests' })
    expect(thrown(() => create({ timers: { sleep: 5 } }))).toMatchObject({ field: 'timers.sleep' })
  })

  it('approvals.onSteer (docs/spec/lifecycle.md §9) is one of supersede | queue; a misspelt member is named', () => {
    expect(thrown(() => create({ approvals: { onSteer: 'deny' } }))).toMatchObject({ code: 'INVALID_OPTION', field: 'approvals.onSteer' })
    expect(thrown(() => create({ approvals: { onSter: 'queue' } }))).toMatchObject({ code: 'INVALID_OPTION', field: 'approvals.onSter' })
    expect(thrown(() => create({ approvals: 'queue' }))).toMatchObject({ code: 'INVALID_OPTION', field: 'approvals' })
  })

  it('the limits keep their own messages (the checks tests assert) when reached through createAgent', () => {
    expect(thrown(() => create({ maxStepsPerTurn: 0 })).message).toBe('INVALID_OPTION: maxStepsPerTurn must be a positive integer (field maxStepsPerTurn)')
    expect(thrown(() => create({ cancelGraceMs: '5' })).message).toBe('INVALID_OPTION: cancelGraceMs must be a finite number >= 0 (field cancelGraceMs)')
    expect(thrown(() => createAgent({} as never)).message).toBe('INVALID_OPTION: options.model must be a ModelAdapter ({ stream(request, signal) }) (field model)')
  })

  it('a misspelt hook name in options.hooks is INVALID_OPTION hooks.<name> with did you mean; a listener that is not a function too', () => {
    const e = thrown(() => create({ hooks: { 'agent/prestep': async (_p: unknown, next: () => unknown) => next() } }))
    expect(e).toMatchObject({ code: 'INVALID_OPTION', field: 'hooks.agent/prestep' })
    expect(e.message).toContain("did you mean 'agent/pre-step'?")
    expect(thrown(() => create({ hooks: { 'agent/status': 'log' } }))).toMatchObject({ field: 'hooks.agent/status' })
    expect(thrown(() => create({ hooks: { 'agent/status': [() => {}, 1] } }))).toMatchObject({ field: 'hooks.agent/status.1' })
  })

  it('agent.on with a misspelt hook name (a policy that would never run) is INVALID_OPTION with did you mean; a non-function listener too; nothing is registered', async () => {
    const agent = create({})
    const e = thrown(() => agent.on('agent/prestep' as never, (() => {}) as never))
    expect(e).toMatchObject({ code: 'INVALID_OPTION', field: 'name' })
    expect(e.message).toContain("unknown hook 'agent/prestep'")
    expect(e.message).toContain("did you mean 'agent/pre-step'?")
    expect(thrown(() => agent.on('tools/preexecute' as never, (() => {}) as never)).message).toContain("did you mean 'tools/pre-execute'?")
    expect(thrown(() => agent.on('agent/pre-step', 42 as never))).toMatchObject({ code: 'INVALID_OPTION', field: 'listener' })
    // every real hook name is accepted
    for (const name of HOOK_NAMES) agent.on(name, (() => undefined) as never)()
    await agent.dispose()
  })

  it('every documented option passes the schema (no false refusal)', async () => {
    const full: Required<Omit<AgentOptions, 'storeWriter' | 'prefix' | 'store'>> = {
      model, tools: [], system: 's', config: { model: 'm', temperature: 0.2 }, sessionId: 'full', maxParallelToolCalls: 2,
      maxStepsPerTurn: 3, maxResumeRuns: 2, retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2, jitter: 0, retryOn: ['SERVER'] },
      plugins: [], compaction: { name: 'c', install: () => {} }, clock: () => 1, ids: () => 'x', timers: { random: () => 0.5 },
      cancelGraceMs: 0, hooks: { 'agent/status': [() => {}], 'agent/pre-step': (_p, next) => next() }, checkRequests: 'full', inspect: () => {},
      approvals: { onSteer: 'queue' },
      inputs: { onSteer: 'queue', maxStateBytes: 1024 },
      budget: [{ costUsd: 1, scope: 'session', price: () => 0, warnAt: 0.5 }, { toolCalls: 3, totalTokens: 100, scope: 'turn' }],
      wakeups: { timer: true, tool: { name: 'wake', minDelayMs: 1, maxDelayMs: 10, deliver: 'steer', whenBusy: 'drop' } },
    }
    const a = createAgent({ ...full, store: memoryStore() })
    await a.flush()
    await a.dispose()
    expect(Object.keys(AGENT_OPTION_FIELDS).sort()).toEqual([...Object.keys(full), 'store', 'storeWriter', 'prefix'].sort())
    await createAgent({ model, retry: false }).dispose()
  })

  it('budget (docs/spec/lifecycle.md §10): a misspelt limit, a missing scope or price, a bad number name the field; agent/budget is a hook name', async () => {
    let e = thrown(() => create({ budget: { costUSD: 1, scope: 'session' } }))
    expect(e).toMatchObject({ code: 'INVALID_OPTION', field: 'budget.costUSD' })
    expect(e.message).toContain("did you mean 'costUsd'?")
    e = thrown(() => create({ budget: [{ toolCalls: 2, scope: 'turn' }, { toolCall: 2, scope: 'turn' }] }))
    expect(e).toMatchObject({ code: 'INVALID_OPTION', field: 'budget.1.toolCall' })
    expect(e.message).toContain("did you mean 'toolCalls'?")
    expect(thrown(() => create({ budget: { toolCalls: 2 } }))).toMatchObject({ field: 'budget.scope' })
    expect(thrown(() => create({ budget: { toolCalls: -1, scope: 'turn' } }))).toMatchObject({ field: 'budget.toolCalls' })
    expect(thrown(() => create({ budget: { toolCalls: 1.5, scope: 'turn' } }))).toMatchObject({ field: 'budget.toolCalls' })
    expect(thrown(() => create({ budget: { inputTokens: Infinity, scope: 'turn' } }))).toMatchObject({ field: 'budget.inputTokens' })
    expect(thrown(() => create({ budget: { costUsd: 1, scope: 'session' } }))).toMatchObject({ field: 'budget.price' })
    expect(thrown(() => create({ budget: { scope: 'session' } })).message).toContain('a budget needs at least one of')
    expect(thrown(() => create({ budget: { toolCalls: 1, scope: 'session', warnAt: 0 } }))).toMatchObject({ field: 'budget.warnAt' })
    expect(thrown(() => create({ budget: [{ toolCalls: 1, scope: 'session' }, { toolCalls: 1, scope: 'session', warnAt: 2 }] }))).toMatchObject({ field: 'budget.1.warnAt' })
    expect(HOOK_NAMES).toContain('agent/budget')
    const a = create({ budget: { toolCalls: 1, scope: 'session' } })
    a.on('agent/budget', () => {})()
    await a.dispose()
  })

  it('property: any option name outside the schema is refused naming exactly that name; no store is touched', async () => {
    const known = new Set(Object.keys(AGENT_OPTION_FIELDS))
    await fc.assert(fc.asyncProperty(
      fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !known.has(k) && k !== '__proto__'),
      fc.anything(),
      async (key, value) => {
        const store = memoryStore()
        const e = thrown(() => create({ store, sessionId: 'p', [key]: value }))
        expect(e.code).toBe('INVALID_OPTION')
        expect(e.field).toBe(key)
        expect(await store.has('p')).toBe(false)
      },
    ), { numRuns: fcRuns(200) })
  })
})

describe('resumeAgent options, checked before anything is read or written (issue 27 item 5)', () => {
  it('a misspelt resume option (autoStrat) is INVALID_OPTION with did you mean; the store is not touched', async () => {
    const store = memoryStore()
    await store.create('s')
    const e = await rejected(resumeAgent({ store, sessionId: 's', model, autoStrat: false } as never))
    expect(e).toMatchObject({ code: 'INVALID_OPTION', field: 'autoStrat' })
    expect(e.message).toMatch(/^INVALID_OPTION: resumeAgent: unknown option 'autoStrat' \(did you mean 'autoStart'\?\)/)
    // no write handle was left open
    const w = await store.open('s', 'write')
    await w.close()
    expect((await rejected(resumeAgent({ log: [], model, system: 42 } as never))).field).toBe('system')
    expect((await rejected(resumeAgent({ log: [], model, rerunInterrupted: 'no' } as never))).field).toBe('rerunInterrupted')
    expect((await rejected(resumeAgent({ log: [], model, prefix: [] } as never))).field).toBe('prefix')
  })
})
