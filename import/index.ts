/**
 * turnlog/import: conversations recorded elsewhere as turnlog logs that pass `verify`
 * (docs/spec/invariants.md). Each importer reads one file's text; the header's `imported` member
 * says the source format and what it could not say (docs/spec/events.md "The JSONL file").
 */
import { TurnlogError } from '../events/errors.js'
import { parseAiSdkUi } from './ai-sdk.js'
import { buildLog, type ImportedLog } from './build.js'
import type { ImportedConversation, ImportFormat } from './model.js'
import { parseOpenAiChat } from './openai-chat.js'
import { parseOpenAiResponses } from './openai-responses.js'
import { parseClaudeCode } from './claude-code.js'

export { buildLog, NO_RESULT_TEXT, type ImportedLog, type BuildOptions } from './build.js'
export type { ImportFormat, ImportedConversation, ImportedItem, ImportedResult } from './model.js'

const PARSERS: Partial<Record<ImportFormat, (text: string, file?: string) => ImportedConversation>> = {
  'ai-sdk-ui': parseAiSdkUi,
  'openai-chat': parseOpenAiChat,
  'openai-responses': parseOpenAiResponses,
  'claude-code': parseClaudeCode,
}

/** The formats `importLog` reads. */
export const IMPORT_FORMATS: readonly ImportFormat[] = Object.keys(PARSERS) as ImportFormat[]

export interface ImportOptions {
  /** The source file's name: in error details and in the header. */
  file?: string
  /** The session id (default: the source's, or `imported-<format>`). */
  sessionId?: string
}

/**
 * Parses `text` as `format` and builds the log. Throws `INVALID_ARGUMENT` for an unknown format,
 * `IMPORT_NOT_JSON` when the text is not JSON and `IMPORT_BAD_SHAPE` naming file, line and field
 * when a value is not the format's. Pure: reads nothing but `text`.
 */
export function importLog(format: string, text: string, opts: ImportOptions = {}): ImportedLog {
  const parse = PARSERS[format as ImportFormat]
  if (!parse) {
    throw new TurnlogError('INVALID_ARGUMENT', `unknown import format "${format}" (${IMPORT_FORMATS.join(', ')})`, { field: 'format' })
  }
  return buildLog(parse(text, opts.file), { format: format as ImportFormat, file: opts.file, sessionId: opts.sessionId })
}
