/** Small readers shared by the importers: each checks a value and names its field when it is wrong. */
import type { Block } from '../events/messages.js'
import { badShape, type ImportWhere } from './errors.js'

export type Obj = Record<string, unknown>

export function at(w: ImportWhere, field: string): ImportWhere {
  return { ...w, field: w.field ? (field.startsWith('[') ? `${w.field}${field}` : `${w.field}.${field}`) : field }
}

export function obj(v: unknown, w: ImportWhere): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw badShape(w, `expected an object, got ${kind(v)}`)
  return v as Obj
}

export function arr(v: unknown, w: ImportWhere): unknown[] {
  if (!Array.isArray(v)) throw badShape(w, `expected an array, got ${kind(v)}`)
  return v
}

export function str(v: unknown, w: ImportWhere): string {
  if (typeof v !== 'string') throw badShape(w, `expected a string, got ${kind(v)}`)
  return v
}

export function optStr(v: unknown, w: ImportWhere): string | undefined {
  return v === undefined || v === null ? undefined : str(v, w)
}

function kind(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v
}

/** A tool's output as message content: a string stays text, anything else is its JSON. */
export function outputBlocks(output: unknown): Block[] {
  return [{ type: 'text', text: typeof output === 'string' ? output : JSON.stringify(output ?? null) }]
}

/** Tool input as the raw JSON arguments string turnlog logs. */
export function argumentsOf(input: unknown): string {
  return typeof input === 'string' ? input : JSON.stringify(input ?? {})
}

/** A `data:` URL's media type and base64 data, or undefined for any other URL. */
export function dataUrl(url: string): { mediaType: string; data: string } | undefined {
  const m = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(url)
  if (!m) return undefined
  const data = m[2] ? m[3]! : Buffer.from(decodeURIComponent(m[3]!), 'utf8').toString('base64')
  return { mediaType: m[1] || 'application/octet-stream', data }
}

/**
 * A file part: inline data becomes a file (or image) block; a file by URL cannot be fetched here
 * (the import reads one file and nothing else), so it stays a text block naming it.
 */
export function fileBlock(mediaType: string, url: string, filename?: string): Block {
  const d = dataUrl(url)
  if (d) return mediaType.startsWith('image/') ? { type: 'image', mediaType, data: d.data } : { type: 'file', mediaType, data: d.data }
  return { type: 'text', text: `[file${filename ? ` ${filename}` : ''} (${mediaType}): ${url}]` }
}
