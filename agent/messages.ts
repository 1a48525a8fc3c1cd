/** Normalising what callers hand to `followup`/`steer`/`inject` into a `UserMessage`. */
import { TurnlogError, UserMessage } from '../events/index.js'
import type { MessageInput } from './types.js'

export function toUserMessage(input: MessageInput, newId: () => string): UserMessage {
  if (typeof input === 'string') {
    return { id: newId(), role: 'user', content: [{ type: 'text', text: input }], source: { kind: 'user' } }
  }
  if (typeof input !== 'object' || input === null || !Array.isArray((input as { content?: unknown }).content)) {
    throw new TurnlogError('INVALID_MESSAGE', 'a message is a string or { content: Block[], id?, source? }', {
      field: 'message', info: { got: typeof input },
    })
  }
  const candidate = {
    id: input.id ?? newId(),
    role: 'user' as const,
    content: input.content,
    source: input.source ?? { kind: 'user' as const },
  }
  const parsed = UserMessage.safeParse(candidate)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new TurnlogError('INVALID_MESSAGE', issue.message, {
      field: ['message', ...issue.path.map(String)].join('.'),
    })
  }
  return candidate
}
