/** B1's baseline (bench/README.md): read + split lines + `JSON.parse`, nothing else. */
import { open } from 'node:fs/promises'

/** The baseline: read + split lines + JSON.parse, keeping the parsed objects. Returns the line count. */
export async function baselineRead(file: string, chunkBytes = 4 * 1024 * 1024): Promise<unknown[]> {
  const fh = await open(file, 'r')
  const out: unknown[] = []
  try {
    let carry = ''
    const buf = Buffer.allocUnsafe(chunkBytes)
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, chunkBytes, null)
      if (bytesRead === 0) break
      const text = carry + buf.toString('utf8', 0, bytesRead)
      const lines = text.split('\n')
      carry = lines.pop()!
      for (const l of lines) if (l.length) out.push(JSON.parse(l))
    }
    if (carry.length) out.push(JSON.parse(carry))
  } finally {
    await fh.close()
  }
  return out
}

