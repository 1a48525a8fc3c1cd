/**
 * A small deterministic PRNG (mulberry32) for test children and tests whose random choices must
 * replay from a seed. Plain JavaScript: the worker children (`.mjs`, run by Node without a build)
 * import it too.
 * @param {number} seed
 * @returns {() => number} uniform in [0, 1)
 */
export function mulberry32(seed) {
  let s = Number(seed) >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
