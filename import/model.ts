/**
 * The neutral conversation every importer parses into (import/build.ts turns it into a log): user
 * messages, assistant steps (one model response: its blocks, and the results of its calls), and
 * system prompts. Nothing here carries a time, a usage or a chunk: the sources do not say them.
 */
import type { Block } from '../events/messages.js'

/** What a source could not say, and so what the header's `imported` field records. */
export type ImportFormat = 'ai-sdk-ui' | 'openai-chat' | 'openai-responses' | 'claude-code'

/** A tool call's result as the source recorded it. */
export interface ImportedResult {
  content: Block[]
  isError?: true
}

export type ImportedItem =
  | { kind: 'user'; id?: string; content: Block[] }
  | { kind: 'system'; text: string }
  /** One model response; `results` holds the results of its tool calls by call id. */
  | { kind: 'step'; content: Block[]; results: Map<string, ImportedResult> }

/** A parsed source: its items in order, and the session id / start time it names, if any. */
export interface ImportedConversation {
  items: ImportedItem[]
  sessionId?: string
  /** Epoch ms of the source's own timestamps, one per event is not known: only a start. */
  startedAt?: number
  /** Sub-agent conversations by the id of the call that ran each (a child session per call). */
  children?: Map<string, ImportedConversation>
  /** What the source holds that the log leaves out, counted (Claude Code sidechain lines no call claims). */
  leftOut?: { sidechainLines: number }
}
