/**
 * The nesting guard: a record nested deeper than `MAX_NESTING` levels is refused before
 * `JSON.parse` sees it (decision record "hostile-logs" (docs/decisions/ in the repository)).
 *
 * Why before the parse: V8's `JSON.parse` takes seconds and hundreds of MB for a million levels
 * (measured 3–5 s for 1M), and every recursive walk after it (`JSON.stringify`, a deep freeze,
 * the lossless walk) overflows the stack from a few thousand levels. The guard is a byte scan
 * that costs nothing on ordinary lines: a line shorter than the limit, or with fewer opening
 * brackets than the limit (counted with `indexOf`, native), cannot be that deep; only the rest get
 * the exact, string-aware scan.
 */

/**
 * The deepest nesting of arrays and objects a record may have, the record itself being level 1
 * (`data` is level 2). Lossless JSON (docs/spec/events.md) is what `JSON.stringify` then `JSON.parse` gives
 * back; V8's `JSON.stringify` throws from about 4,000 levels, so deeper values are not lossless.
 * 512 leaves every recursive consumer (printers, freezes, user code) a wide margin and is far
 * beyond any JSON Schema or config a tool needs.
 */
export const MAX_NESTING = 512

/** Where a JSON text nests too deep: its depth there (`max + 1`) and the path to that value. */
export interface NestingOverflow {
  depth: number
  /** The path of the value that opens level `max + 1` (`data.config.a[0][0]`, abbreviated). */
  path: string
  /** Byte offset (from the start of the scanned text) of its opening bracket. */
  at: number
}

/** Path segments shown before the path is cut with `…` (the full depth is in `depth`). */
const SHOWN_SEGMENTS = 16

/**
 * Checks the JSON text `b[s, e)` (UTF-8 bytes). Returns null when it nests at most `max` levels
 * (or is not JSON: the parser decides that), else the place where it goes deeper. Never recursive;
 * one pass over the line at most.
 */
export function nestingOverflow(b: Buffer, s: number, e: number, max = MAX_NESTING): NestingOverflow | null {
  // max + 1 opening brackets need at least that many bytes
  if (e - s <= max) return null
  const line = b.subarray(s, e)
  if (countUpTo(line, 0x5b, max + 1) + countUpTo(line, 0x7b, max + 1) <= max) return null
  return exactScan(line, max)
}

function countUpTo(b: Buffer, byte: number, limit: number): number {
  let n = 0
  for (let p = b.indexOf(byte); p >= 0 && n < limit; p = b.indexOf(byte, p + 1)) n++
  return n
}

function exactScan(b: Buffer, max: number): NestingOverflow | null {
  // per open container: 1 for an object, 0 for an array; the array index or the key's byte range
  const kind: number[] = []
  const index: number[] = []
  const keyStart: number[] = []
  const keyEnd: number[] = []
  let strStart = -1
  let strEnd = -1
  const n = b.length
  for (let i = 0; i < n; i++) {
    const c = b[i]!
    if (c === 0x22) {
      // a string: skip to its closing quote (escapes included)
      strStart = i
      i++
      while (i < n && b[i] !== 0x22) i += b[i] === 0x5c ? 2 : 1
      strEnd = i + 1
      continue
    }
    if (c === 0x5b || c === 0x7b) {
      if (kind.length >= max) return { depth: kind.length + 1, path: pathOf(b, kind, index, keyStart, keyEnd), at: i }
      kind.push(c === 0x7b ? 1 : 0)
      index.push(0)
      keyStart.push(-1)
      keyEnd.push(-1)
    } else if (c === 0x5d || c === 0x7d) {
      kind.pop()
      index.pop()
      keyStart.pop()
      keyEnd.pop()
    } else if (c === 0x2c) {
      const top = kind.length - 1
      if (top >= 0 && kind[top] === 0) index[top]!++
    } else if (c === 0x3a) {
      const top = kind.length - 1
      if (top >= 0 && kind[top] === 1) {
        keyStart[top] = strStart
        keyEnd[top] = strEnd
      }
    }
  }
  return null
}

/** The path from the record to the container about to open (its parent chain's keys and indexes). */
function pathOf(b: Buffer, kind: number[], index: number[], keyStart: number[], keyEnd: number[]): string {
  let out = ''
  const shown = Math.min(kind.length, SHOWN_SEGMENTS)
  for (let d = 0; d < shown; d++) {
    if (kind[d] === 0) out += `[${index[d]}]`
    else {
      let key = '?'
      if (keyStart[d]! >= 0) {
        try {
          key = JSON.parse(b.toString('utf8', keyStart[d], keyEnd[d])) as string
        } catch {
          key = b.toString('utf8', keyStart[d]! + 1, Math.max(keyStart[d]! + 1, keyEnd[d]! - 1))
        }
      }
      out += out === '' ? key : `.${key}`
    }
  }
  if (kind.length > shown) out += '…'
  return out
}
