/**
 * The fuzzer's input-round parts (docs/spec/lifecycle.md §11 "Re-execution and fuzzing"), on with
 * `fuzzAgent({ inputs: true })`: the tool `fuzz_ask`, whose body asks 0–3 rounds (form, text,
 * choice and url requests; every round expires after the fuzzer's expiry), the client tool
 * `fuzz_client`, the answers a person gives (valid ones, and invalid ones the agent must refuse),
 * and the recorder R10/R11 are checked from (inputs.ts).
 */
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { z } from 'zod'
import type { TurnlogAgent } from '../../agent/agent.js'
import type { InputRequest, InputRequests } from '../../events/index.js'
import { defineTool } from '../../tools/define.js'
import type { AnyTool, ToolContext } from '../../tools/types.js'
import { FUZZ_APPROVAL_TIMEOUT_MS } from './approval-tool.js'

/** The input tools' names. */
export const ASK_TOOL = 'fuzz_ask'
export const CLIENT_TOOL = 'fuzz_client'

const N_ARGS = z.object({ n: z.number() })
const KINDS = ['form', 'text', 'choice', 'url'] as const

const FORM_SCHEMA = { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'], additionalProperties: false }

/** How many rounds a `fuzz_ask {n}` call asks: `n mod 4` (0–3). */
export const roundsOf = (n: number): number => ((Math.trunc(n) % 4) + 4) % 4

/** The requests of round `round` (1-based) of a `fuzz_ask {n}` call: one kind in turn from `n`; a
 * second round also asks a line of text, so an answer names two keys. */
export function askRequests(n: number, round: number): InputRequests {
  const kind = KINDS[(Math.trunc(Math.abs(n) / 4) + round - 1) % KINDS.length]!
  const main: InputRequest = kind === 'form' ? { kind, message: `round ${round}: who?`, schema: FORM_SCHEMA }
    : kind === 'text' ? { kind, message: `round ${round}: say something` }
      : kind === 'choice' ? { kind, message: `round ${round}: pick`, options: ['a', 'b', 'c'] }
        : { kind, message: `round ${round}: sign in`, url: 'https://example.test/sign-in' }
  return round === 2 ? { [kind]: main, note: { kind: 'text', message: 'a note' } } : { [kind]: main }
}

/** What the R10/R11 checks read (inputs.ts): every body start and what it was called with. */
export interface InputRecorder {
  /** Each body start of any tool: its call, the round it continues (0: the first run), and whether
   * the log then held an answer to that round and an open round of the call. */
  starts: Array<{ key: string; round: number; answerLogged: boolean; openRound: boolean }>
  /** What a `fuzz_ask` body got that its round did not give it (state, round, keys): R11. */
  mismatches: string[]
}

export const newInputRecorder = (): InputRecorder => ({ starts: [], mismatches: [] })

/** Records a body start (every tool's, from the tracked wrapper). */
export function recordRoundStart(a: TurnlogAgent, rec: InputRecorder, ctx: ToolContext): void {
  const round = ctx.input?.round ?? 0
  let answerLogged = round === 0
  let openRound = false
  const st = a.inputsState
  for (const id of Object.keys(st.byId)) {
    const r = st.byId[id]!
    if (r.turn !== ctx.turn || r.step !== ctx.step || r.callId !== ctx.callId) continue
    if (r.answer === null) openRound = true
    if (r.round === round && r.answer !== null) answerLogged = true
  }
  rec.starts.push({ key: `${ctx.turn}.${ctx.step}.${ctx.callId}`, round, answerLogged, openRound })
}

/**
 * `fuzz_ask {n}`: asks `n mod 4` rounds, each with the state `{n, round}`; an answer other than
 * `accept` ends the call (the body decides what an unanswered question means); settles when the
 * scheduler says. What it is called with is checked against what it asked (R11).
 */
export function askTool(schedule: () => Promise<void>, rec: InputRecorder): AnyTool {
  return defineTool({
    name: ASK_TOOL, description: 'asks a person in rounds', parameters: N_ARGS,
    isConcurrencySafe: (a) => a.n % 8 >= 4,
    execute: async ({ n }, ctx) => {
      await schedule()
      const input = ctx.input
      const asked = input?.round ?? 0
      if (input !== undefined) {
        const where = `call ${ctx.callId} round ${input.round}`
        if (!isDeepStrictEqual(input.state, { n, round: input.round })) rec.mismatches.push(`${where}: the body got the state ${JSON.stringify(input.state)}, not the one its round gave`)
        if (input.action === 'accept') {
          const want = Object.keys(askRequests(n, input.round)).sort()
          const got = Object.keys(input.responses ?? {}).sort()
          if (!isDeepStrictEqual(want, got)) rec.mismatches.push(`${where}: the body got responses for ${got.join(',')}, its round asked ${want.join(',')}`)
        }
        if (input.action !== 'accept') return { ended: `${input.action} by ${input.by.kind}`, round: input.round }
      }
      if (asked >= roundsOf(n)) return { ok: 'answered', rounds: asked }
      const round = asked + 1
      return ctx.inputRequired({ requests: askRequests(n, round), state: { n, round }, expiresInMs: FUZZ_APPROVAL_TIMEOUT_MS })
    },
  }) as AnyTool
}

/** `fuzz_client`: a client tool whose output is `{ok: boolean}`; its round expires like the others. */
export function clientTool(): AnyTool {
  return defineTool({
    name: CLIENT_TOOL, client: true, parameters: N_ARGS,
    output: z.object({ ok: z.boolean() }),
    input: { timeoutMs: FUZZ_APPROVAL_TIMEOUT_MS },
  }) as AnyTool
}

/** Calls of the input tools: `fuzz_ask` with 0–3 rounds of every kind (most ask), `fuzz_client`. */
export function arbInputCall(): fc.Arbitrary<{ name: string; args: unknown }> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0, max: 15 }).map((n) => ({ name: ASK_TOOL, args: { n } as unknown })) },
    { weight: 1, arbitrary: fc.constant({ name: CLIENT_TOOL, args: { n: 1 } as unknown }) },
  )
}

/** A response that fits every request of a round (`pick` varies the choice). */
export function validResponses(requests: InputRequests, pick = 0): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, q] of Object.entries(requests)) {
    switch (q.kind) {
      case 'form': out[key] = { name: `fuzz ${pick}` }; break
      case 'text': out[key] = `text ${pick}`; break
      case 'choice': out[key] = q.options[pick % q.options.length]!; break
      case 'url': out[key] = { done: true }; break
      case 'client': out[key] = { ok: pick % 2 === 0 }; break
    }
  }
  return out
}

/** A response the agent must refuse (`INVALID_INPUT`): the first request's answer of the wrong
 * shape (a url step takes any JSON: its key is left out instead). */
export function invalidResponses(requests: InputRequests): Record<string, unknown> {
  const out = validResponses(requests)
  const [key, q] = Object.entries(requests)[0]!
  if (q.kind === 'url') delete out[key]
  else out[key] = q.kind === 'choice' ? 'not an option' : q.kind === 'text' ? 42 : q.kind === 'form' ? { name: '' } : { ok: 'no' }
  return out
}
