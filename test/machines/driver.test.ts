/**
 * The machines as the agent drives them, end to end (issue 15 part 3): each scenario asserts its
 * `turn/end` reason and that the driver reported no `agent/error` besides the hook failures the
 * scenario provokes, so a machine defect that the driver's catch-all or emergency close would hide
 * still fails here. L10 / §4.5 (a max-tokens response never runs its tool calls), L12 (end reasons
 * agree with step outcomes), R7 (a hook failure ends the turn with that hook's failure).
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createAgent, type Agent, type AgentOptions } from '../../agent/index.js'
import type { LogEvent } from '../../events/index.js'
import { scriptedModel, type ScriptedEntry } from '../../models/index.js'
import { defineTool } from '../../tools/index.js'
import { verify } from '../../replay/verify.js'
import { counterIds, fakeClock, instantTimers, trace } from '../agent/helpers.js'

const ran: string[] = []
const echo = defineTool({
  name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }),
  execute: ({ text }) => {
    ran.push(text)
    return text
  },
})

async function run(script: readonly ScriptedEntry[], setup: (a: Agent) => void, opts: Partial<AgentOptions> = {}, expectedErrors: string[] = []) {
  ran.length = 0
  const errors: string[] = []
  const agent = createAgent({ model: scriptedModel(script), tools: [echo], clock: fakeClock(), ids: counterIds('m'), timers: instantTimers(), ...opts })
  agent.on('agent/error', ({ where }) => { errors.push(where) })
  setup(agent)
  agent.followup('go')
  await agent.whenIdle()
  expect(errors).toEqual(expectedErrors)
  expect(verify(agent.events, { maxStepsPerTurn: opts.maxStepsPerTurn ?? 64 }).violations).toEqual([])
  return agent
}

const ends = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'turn/end').map((e) => (e.data as { reason: unknown }).reason)
const outcomes = (events: readonly LogEvent[]) => events.filter((e) => e.type === 'step/end').map((e) => (e.data as { outcome: { kind: string } }).outcome.kind)

describe('driven machines: end reasons and no unexpected agent/error', () => {
  // The assembler drops the calls of a max-tokens response before the step machine sees them; the
  // machine's own guard is tested in step.test.ts (for drivers that do not drop them).
  it('L10: a max-tokens response carrying a complete tool call never runs it; the turn ends max-tokens', async () => {
    const a = await run([{ text: 'let me', toolCalls: [{ name: 'echo', args: { text: 'never' } }], maxTokens: true }], () => {})
    expect(ran).toEqual([])
    expect(a.events.filter((e) => e.type === 'tool/call')).toEqual([])
    expect(outcomes(a.events)).toEqual(['max-tokens'])
    expect(ends(a.events)).toEqual([{ kind: 'max-tokens' }])
  })

  it('L12: max-tokens then steering pending at the step end: the next step stops, the turn still ends max-tokens', async () => {
    const a = await run([{ text: 'cut', maxTokens: true }, { text: 'done' }], (agent) => {
      let once = true
      agent.on('agent/assistant-stream', ({ chunk }) => {
        if (once && chunk.type === 'finish') { once = false; agent.steer('more') }
      })
    })
    expect(outcomes(a.events)).toEqual(['max-tokens', 'stop'])
    expect(ends(a.events)).toEqual([{ kind: 'max-tokens' }])
  })

  it('the pre-step hook sees first, after-tools and after-stop proposals in order', async () => {
    const proposals: string[] = []
    const a = await run([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }, { text: 'b' }, { text: 'c' }], (agent) => {
      agent.on('agent/pre-step', (p, next) => { proposals.push(p.proposal); return next() })
      let once = true
      agent.on('agent/turn-stopping', ({ agent: ag }) => { if (once) { once = false; ag.steer('again') } })
    })
    expect(proposals).toEqual(['first', 'after-tools', 'after-stop'])
    expect(outcomes(a.events)).toEqual(['tools', 'stop', 'stop'])
    expect(ends(a.events)).toEqual([{ kind: 'completed' }])
  })

  it('R7: a throwing pre-step hook ends the turn error with the hook failure, naming the hook and its message', async () => {
    const a = await run([], (agent) => agent.on('agent/pre-step', () => { throw new Error('pre-step says no') }), {}, ['agent/pre-step'])
    const [reason] = ends(a.events) as [{ kind: string; failure: { code: string; message: string } }]
    expect(reason.kind).toBe('error')
    expect(reason.failure.code).toBe('HOOK_ERROR')
    expect(reason.failure.message).toContain('pre-step says no')
  })

  it('R7: a throwing turn-stopping hook ends the turn error with its failure', async () => {
    const a = await run([{ text: 'a' }], (agent) => agent.on('agent/turn-stopping', () => { throw new Error('stop hook broke') }), {}, ['agent/turn-stopping'])
    const [reason] = ends(a.events) as [{ kind: string; failure: { code: string; message: string } }]
    expect(reason).toMatchObject({ kind: 'error', failure: { code: 'HOOK_ERROR' } })
    expect(reason.failure.message).toContain('stop hook broke')
  })

  it('L13: an authorised retry opens the retry turn naming the failed turn; the retry turn ends completed', async () => {
    const a = await run([{ error: { code: 'SERVER' } }, { text: 'ok' }], () => {})
    expect(trace(a.events).filter((l) => l.startsWith('turn/'))).toEqual(['turn/start 1', 'turn/end 1 error SERVER', 'turn/start 2 retry-of 1', 'turn/end 2 completed'])
  })

  it('a tool that concludes the turn ends the step concluded and the turn completed', async () => {
    const finish = defineTool({ name: 'finish', description: 'f', parameters: z.object({}), execute: (_a, ctx) => { ctx.concludeTurn(); return 'ok' } })
    const a = await run([{ toolCalls: [{ name: 'finish', args: {} }] }], () => {}, { tools: [echo, finish] })
    expect(outcomes(a.events)).toEqual(['concluded'])
    expect(ends(a.events)).toEqual([{ kind: 'completed' }])
  })

  it('a cancel while tools run ends the step aborted and the turn aborted; no later request', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }, { text: 'never' }])
    const a = await run([], (agent) => agent.on('tools/execute', async (_p, next) => { agent.cancel(); return next() }), { model })
    expect(outcomes(a.events)).toEqual(['aborted'])
    expect(ends(a.events)).toEqual([{ kind: 'aborted', cause: { kind: 'user' } }])
    expect(model.requests.length).toBe(1)
  })

  it('the step limit ends the turn step-limit after exactly maxStepsPerTurn steps', async () => {
    const a = await run([{ toolCalls: [{ name: 'echo', args: { text: 'a' } }] }, { toolCalls: [{ name: 'echo', args: { text: 'b' } }] }], () => {}, { maxStepsPerTurn: 2 })
    expect(outcomes(a.events)).toEqual(['tools', 'tools'])
    expect(ends(a.events)).toEqual([{ kind: 'step-limit' }])
  })
})
