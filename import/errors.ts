/** Coded errors of the importers: every one names the file, the line and the field it is about. */
import { TurnlogError } from '../events/errors.js'

/** Where a value sits in the input: the file, its line (1-based) and the field path. */
export interface ImportWhere {
  file?: string
  line?: number
  field?: string
}

/** `IMPORT_BAD_SHAPE`: the input parses but a value is not what the format has there. */
export function badShape(where: ImportWhere, message: string): TurnlogError {
  return new TurnlogError('IMPORT_BAD_SHAPE', message, { file: where.file, line: where.line, field: where.field })
}

/** `IMPORT_NOT_JSON`: the input (or one JSONL line) is not JSON. */
export function notJson(where: ImportWhere, err: unknown): TurnlogError {
  return new TurnlogError('IMPORT_NOT_JSON', 'not JSON', {
    file: where.file, line: where.line, info: { parseError: err instanceof Error ? err.message : String(err) },
  })
}

/** The 1-based line of character `offset` in `text`. */
export function lineAt(text: string, offset: number): number {
  let line = 1
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++
  return line
}

/** Parses a whole-file JSON input; a syntax error names the line where the parser stopped. */
export function parseJsonFile(text: string, file: string | undefined): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    // V8 says "... at position N" (Node 20+): turn it into a line
    const m = /position (\d+)/.exec(err instanceof Error ? err.message : '')
    throw notJson({ file, line: m ? lineAt(text, Number(m[1])) : 1 }, err)
  }
}

/**
 * The line each top-level array element starts on, so a shape error can name it. A light scan
 * (strings skipped) of a text JSON.parse already accepted.
 */
export function elementLines(text: string): number[] {
  const lines: number[] = []
  let depth = 0
  let line = 1
  let inStr = false
  let expecting = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '\n') line++
    if (inStr) {
      if (c === '\\') i++
      else if (c === '"') inStr = false
      continue
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') continue
    if (expecting && depth === 1) {
      lines.push(line)
      expecting = false
    }
    if (c === '"') inStr = true
    else if (c === '[' || c === '{') {
      depth++
      if (depth === 1 && c === '[') expecting = true
    } else if (c === ']' || c === '}') depth--
    else if (c === ',' && depth === 1) expecting = true
  }
  return lines
}
