/**
 * Byte helpers that run everywhere (issue "See a session", item 7: no Node built-in is imported by
 * the root export). Under Node the native implementations are taken through
 * `process.getBuiltinModule` (Node ≥ 20.16), which bundlers do not follow, so the JSONL codec keeps
 * its measured speed (benchmark B1); elsewhere a JS CRC-32 and a fatal `TextDecoder` do the work.
 */

interface NodeBits {
  isUtf8?: (b: Uint8Array) => boolean
  crc32?: (data: string | Uint8Array, value?: number) => number
}

function nodeBits(): NodeBits {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
  const get = proc?.getBuiltinModule
  if (typeof get !== 'function') return {}
  try {
    const buffer = get.call(proc, 'node:buffer') as { isUtf8?: NodeBits['isUtf8'] } | undefined
    const zlib = get.call(proc, 'node:zlib') as { crc32?: NodeBits['crc32'] } | undefined
    return { isUtf8: buffer?.isUtf8, crc32: zlib?.crc32 }
  } catch {
    return {}
  }
}

const NATIVE = nodeBits()
const FATAL = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Whether `b` is valid UTF-8 (the same verdict as Node's `buffer.isUtf8`). */
export const isUtf8: (b: Uint8Array) => boolean = NATIVE.isUtf8 ?? isUtf8Js

/** The fallback: a fatal `TextDecoder` (exported for the test that compares it with Node's). */
export function isUtf8Js(b: Uint8Array): boolean {
  try {
    FATAL.decode(b)
    return true
  } catch {
    return false
  }
}

// CRC-32 (IEEE, reflected: the same value as zlib.crc32), one table, byte at a time. Only the
// fallback; the JSONL decoder has its own slicing-by-8 loop for short lines.
const TABLE = new Int32Array(256)
for (let n = 0; n < 256; n++) {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  TABLE[n] = c
}
const ENCODER = new TextEncoder()

function jsCrc32(data: string | Uint8Array, value = 0): number {
  const b = typeof data === 'string' ? ENCODER.encode(data) : data
  let c = ~value
  for (let i = 0; i < b.length; i++) c = TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8)
  return ~c >>> 0
}

/** CRC-32 (IEEE) of `data` (a string is taken as its UTF-8 bytes), unsigned; `value` continues a running CRC. */
export const crc32: (data: string | Uint8Array, value?: number) => number = NATIVE.crc32 ?? jsCrc32

/** The JS implementation, exported for the test that compares it with the native one. */
export const crc32Js = jsCrc32
