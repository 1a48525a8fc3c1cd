/**
 * `askUser`, a ready tool (docs/spec/lifecycle.md §11): the model asks a person a question, as a
 * line of text or as a form whose JSON Schema it describes; the person's answer is the result. One
 * round, durable like any other: asked in one process, answered from any other.
 */
import { z } from 'zod'
import { defineTool } from './define.js'
import type { Tool } from './types.js'

/** Options of {@link askUser}. */
export interface AskUserOptions {
  /** The tool's name (default `ask_user`). */
  name?: string
  /** What the model reads about it. */
  description?: string
  /** The round is answered `cancel` `by: expired` after this long (the agent's clock). */
  expiresInMs?: number
}

const parameters = z.object({
  question: z.string().min(1).describe('The question for the person, in their language.'),
  schema: z.record(z.string(), z.unknown()).optional().describe(
    'Optional: the JSON Schema of an object the person fills in as a form (type: "object", properties, required). Without it the person answers in text.',
  ),
})

/**
 * A tool the model calls to ask the person something. Its result is the person's answer (the text,
 * or the form's JSON), or a sentence saying they declined or nobody answered.
 */
export function askUser(opts: AskUserOptions = {}): Tool<typeof parameters, unknown> {
  return defineTool({
    name: opts.name ?? 'ask_user',
    description: opts.description ?? 'Ask the person a question and wait for the answer (text, or a form you describe with a JSON Schema). Use it when you need information only they have.',
    parameters,
    execute: ({ question, schema }, ctx) => {
      if (ctx.input === undefined) {
        const request = schema !== undefined
          ? { kind: 'form' as const, message: question, schema }
          : { kind: 'text' as const, message: question }
        return ctx.inputRequired({ requests: { answer: request }, ...(opts.expiresInMs !== undefined ? { expiresInMs: opts.expiresInMs } : {}) })
      }
      if (ctx.input.action === 'accept') {
        const a = ctx.input.responses?.answer
        return typeof a === 'string' ? a : JSON.stringify(a)
      }
      if (ctx.input.by.kind === 'expired') return 'Nobody answered the question in time.'
      if (ctx.input.by.kind === 'superseded') return 'The person sent a new message instead of answering.'
      return ctx.input.action === 'decline' ? 'The person declined to answer.' : 'The person dismissed the question.'
    },
  })
}
