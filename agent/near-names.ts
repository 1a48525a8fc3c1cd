/**
 * "Did you mean": the known name nearest to a misspelt one (an option, a hook, a member), or
 * undefined when none is near enough to be a likely typo. Near: a small edit distance (1 for
 * names up to 4 characters, else at most 2 or a third of the longer name's length), compared
 * case-insensitively. Names over 64 characters get no suggestion (they are not typos).
 */
export function nearest(name: string, known: readonly string[]): string | undefined {
  if (name.length > 64) return undefined
  const n = name.toLowerCase()
  let best: string | undefined
  let bestD = Infinity
  for (const k of known) {
    const d = distance(n, k.toLowerCase())
    if (d < bestD) {
      best = k
      bestD = d
    }
  }
  if (best === undefined || best === name) return undefined
  const longer = Math.max(name.length, best.length)
  const limit = name.length <= 4 ? 1 : Math.max(2, Math.floor(longer / 3))
  return bestD <= limit ? best : undefined
}

/** Levenshtein distance (insert, delete, substitute), O(a·b) time, O(b) memory; names are short. */
export function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    prev = cur
  }
  return prev[b.length]!
}
