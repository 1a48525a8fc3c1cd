/**
 * The check of an answer to an input round (docs/spec/lifecycle.md §11), wherever it is given
 * (`agent.answer`, `store.answer`, the CLI, HTTP): `accept` must answer exactly the requested
 * keys, each response must fit its request (a form's JSON Schema, a choice's options, a text's
 * string; a client tool's output schema when the tool is known). A refusal is `INVALID_INPUT`
 * naming the field (`responses.address/city`), or `INVALID_ARGUMENT` for something that is not an
 * answer. The caller logs nothing then.
 */
import { checkSchema, formatIssues } from './schema.js'
import { TurnlogError, findLossy, type InputAnswer, type InputRequests } from '../events/index.js'
import { errorText } from './define.js'
import { jsonSchemaProblem } from './json-schema-check.js'
import type { AnyTool } from './types.js'

/** Where the answer is given, for the errors. */
export interface AnswerContext {
  sessionId?: string
  requestId: string
  /** The call's tool when known (a client round's response is checked against its `output`). */
  tool?: AnyTool | undefined
}

/** Reads an answer (user data: inside a guard) and checks it against its round's requests. */
export async function checkAnswer(requests: InputRequests, input: unknown, ctx: AnswerContext): Promise<InputAnswer> {
  const where = (field: string) => ({ ...(ctx.sessionId !== undefined ? { sessionId: ctx.sessionId } : {}), field, info: { requestId: ctx.requestId } })
  let action: unknown
  let responses: unknown
  try {
    action = (input as { action?: unknown } | null)?.action
    responses = (input as { responses?: unknown }).responses
  } catch (err) {
    throw new TurnlogError('INVALID_ARGUMENT', `an answer must be { action: 'accept', responses } | { action: 'decline' } | { action: 'cancel' }: ${errorText(err)}`, where('answer'))
  }
  if (action === 'decline' || action === 'cancel') return { action }
  if (action !== 'accept') {
    throw new TurnlogError('INVALID_ARGUMENT', `an answer's action is 'accept', 'decline' or 'cancel', not ${JSON.stringify(action) ?? String(action)}`, where('answer.action'))
  }
  if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
    throw new TurnlogError('INVALID_INPUT', 'an accepted answer needs responses: an object with one response per requested key', where('responses'))
  }
  const lossy = findLossy(responses, 'responses')
  if (lossy) throw new TurnlogError('INVALID_INPUT', `an answer must be JSON: ${lossy.why} at ${lossy.path}`, where(lossy.path))
  // a JSON copy: the caller's object may change after the call
  const copy = JSON.parse(JSON.stringify(responses)) as Record<string, unknown>
  for (const key of Object.keys(copy)) {
    if (!Object.hasOwn(requests, key)) throw new TurnlogError('INVALID_INPUT', `the answer has a response ${JSON.stringify(key)}, which the round did not ask (it asked ${Object.keys(requests).join(', ')})`, where(`responses.${key}`))
  }
  for (const [key, q] of Object.entries(requests)) {
    const field = `responses.${key}`
    if (!Object.hasOwn(copy, key)) throw new TurnlogError('INVALID_INPUT', `the answer has no response for ${JSON.stringify(key)}`, where(field))
    const v = copy[key]
    switch (q.kind) {
      case 'text':
        if (typeof v !== 'string') throw new TurnlogError('INVALID_INPUT', `the response to the text request ${key} must be a string`, where(field))
        break
      case 'choice':
        if (typeof v !== 'string' || !q.options.includes(v)) {
          throw new TurnlogError('INVALID_INPUT', `the response to the choice ${key} must be one of ${q.options.map((o) => JSON.stringify(o)).join(', ')}`, where(field))
        }
        break
      case 'form': {
        const p = await jsonSchemaProblem(q.schema, v)
        if (p !== null) throw new TurnlogError('INVALID_INPUT', `the response to the form ${key} does not fit its schema: ${p.pointer === '' ? '' : `${p.pointer} `}${p.message}`, where(`${field}${p.pointer}`))
        break
      }
      case 'client': {
        const out = ctx.tool?.output
        if (out === undefined) break
        let problem: string | null
        try {
          const r = checkSchema(out, v)
          problem = r.ok ? null : formatIssues(r.issues)
        } catch (err) {
          problem = `output validation threw: ${errorText(err)}`
        }
        if (problem !== null) throw new TurnlogError('INVALID_INPUT', `the client's output for tool '${ctx.tool!.name}' does not fit its output schema:\n${problem}`, where(field))
        break
      }
      case 'url':
        break // an acknowledgement: any JSON (the step happened elsewhere)
    }
  }
  return { action: 'accept', responses: copy }
}
