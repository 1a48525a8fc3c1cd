/**
 * Hostile logs for the "logs from anywhere" tests (issue 10): built as text from the weather
 * example, so any nesting, number spelling, line ending or control character can be written, with
 * or without valid crcs.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { crcHex } from '../../events/jsonl.js'

export const ROOT = join(import.meta.dirname, '..', '..')

/** The weather example's lines (header first), without checksums and without the final `\n`. */
export const WEATHER: readonly string[] = readFileSync(join(ROOT, 'examples/weather.jsonl'), 'utf8').split('\n').filter(Boolean)

/** Line index (0-based, the header is 0) of the `request/header` event (seq 5). */
export const HEADER_EVENT_LINE = 6

/** A record line with its crc member (the crc of the text without it). */
export function crcLine(json: string): string {
  return `${json.slice(0, -1)},"crc":"${crcHex(json)}"}`
}

/** The lines with checksums: the header says so, every record carries its crc. */
export function withCrc(lines: readonly string[]): string[] {
  return lines.map((l, i) => (i === 0 ? l.replace(/}$/, ',"checksums":"crc32"}') : crcLine(l)))
}

/** `depth` nested arrays (or objects `{"a":…}`) around `inner`. */
export function nested(depth: number, kind: 'array' | 'object' = 'array', inner = '0'): string {
  return kind === 'array'
    ? '['.repeat(depth) + inner + ']'.repeat(depth)
    : '{"a":'.repeat(depth) + inner + '}'.repeat(depth)
}

/** Where a deep value goes, and the nesting level of its outermost container (the record is level 1). */
export const PLACES = {
  config: { level: 4, field: 'data.config.x' },
  parameters: { level: 6, field: 'data.tools[0].parameters.x' },
  ignorable: { level: 2, field: 'data' },
} as const
export type Place = keyof typeof PLACES

/** The weather log with `value` placed at `place` (an ignorable event is appended for 'ignorable'). */
export function weatherWith(place: Place, value: string): string[] {
  const lines = [...WEATHER]
  if (place === 'config') {
    lines[HEADER_EVENT_LINE] = lines[HEADER_EVENT_LINE]!.replace('"config":{"model":"scripted"}', `"config":{"model":"scripted","x":${value}}`)
  } else if (place === 'parameters') {
    lines[HEADER_EVENT_LINE] = lines[HEADER_EVENT_LINE]!.replace('"parameters":{"type":"object"', `"parameters":{"x":${value},"type":"object"`)
  } else {
    const seq = lines.length - 1
    lines.push(`{"seq":${seq},"time":1764450000100,"type":"x/custom","ignorable":true,"data":${value}}`)
  }
  return lines
}

/** The seq of the event on line index `i` (the header is index 0). */
export function seqOfLine(i: number): number {
  return i - 1
}

/** Joins lines into file contents (`\n` or `\r\n` endings, an optional BOM). */
export function joinLines(lines: readonly string[], opts: { crlf?: boolean; bom?: boolean } = {}): string {
  return (opts.bom ? '\uFEFF' : '') + lines.map((l) => l + (opts.crlf ? '\r\n' : '\n')).join('')
}

export function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex')
}
