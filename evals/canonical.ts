/** Canonical tool arguments: the JSON text with object keys sorted at every level (how recorded tool results are matched). */

/** `name` + the arguments' canonical JSON: the key recorded tool results are matched by. */
export function callKey(name: string, args: string): string {
  return `${name} ${canonicalArguments(args)}`
}

/** The canonical JSON of a raw arguments string (keys sorted); text that is not JSON stays as is. */
export function canonicalArguments(raw: string): string {
  let v: unknown
  try {
    v = JSON.parse(raw)
  } catch {
    return raw
  }
  return JSON.stringify(sortKeys(v, 0))
}

function sortKeys(v: unknown, depth: number): unknown {
  // parsed JSON is a tree of plain values; the depth bound only guards against a pathological nesting
  if (depth > 200 || typeof v !== 'object' || v === null) return v
  if (Array.isArray(v)) return v.map((x) => sortKeys(x, depth + 1))
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k], depth + 1)
  return out
}
