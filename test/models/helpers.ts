/** Shared helpers for the model-seam tests. */
import { StreamGrammar, type AssistantMessage, type StreamChunk } from '../../events/index.js'
import { checkedStream, type CheckedItem, type StreamOutcome } from '../../models/checked-stream.js'
import type { ModelAdapter, ModelRequest, StreamFn } from '../../models/types.js'

export const request: ModelRequest = {
  messages: [{ id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
  system: 'You are terse.',
  tools: [],
  config: { model: 'test-model' },
}

/** Runs a checked stream to its end: the yielded chunks and the one outcome (asserting it is last and single). */
export async function runChecked(
  source: ModelAdapter | StreamFn,
  signal: AbortSignal = new AbortController().signal,
  req: ModelRequest = request,
  onItem?: (item: CheckedItem) => void,
): Promise<{ chunks: StreamChunk[]; outcome: StreamOutcome }> {
  const chunks: StreamChunk[] = []
  let outcome: StreamOutcome | undefined
  for await (const item of checkedStream(source, req, signal)) {
    if (outcome !== undefined) throw new Error('an item after the end')
    onItem?.(item)
    if (item.kind === 'chunk') chunks.push(item.chunk)
    else outcome = item.outcome
  }
  if (outcome === undefined) throw new Error('the checked stream ended without an end item')
  return { chunks, outcome }
}

/** An adapter that yields the given values verbatim (any shape). */
export function rawAdapter(values: readonly unknown[], after?: () => Promise<never> | never): ModelAdapter {
  return {
    async *stream() {
      for (const v of values) yield v as StreamChunk
      if (after) await after()
    },
  }
}

/** Null if the chunks form a complete grammatical stream, else the first broken rule. */
export function grammarError(chunks: readonly StreamChunk[], requireFinish = true): string | null {
  const g = new StreamGrammar()
  for (const c of chunks) {
    const e = g.push(c)
    if (e !== null) return e
  }
  return requireFinish && !g.finished ? 'no finish' : null
}

export async function collect(it: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const c of it) out.push(c)
  return out
}

/** What the assembled message says, in the fixture table's terms. */
export function summarise(message: AssistantMessage): { text: string; reasoning: string; toolCalls: { id: string; name: string; arguments: string }[] } {
  let text = ''
  let reasoning = ''
  const toolCalls: { id: string; name: string; arguments: string }[] = []
  for (const b of message.content) {
    if (b.type === 'text') text += b.text
    else if (b.type === 'reasoning') reasoning += b.text
    else if (b.type === 'tool-call') toolCalls.push({ id: b.id, name: b.name, arguments: b.arguments })
  }
  return { text, reasoning, toolCalls }
}
