/**
 * `Array.prototype.splice` for an insert list of any length. `list.splice(i, n, ...items)` passes
 * every item as an argument, and V8 throws `RangeError` from about 120k arguments: one
 * `agent/inbox/spliced` from a log may insert a million messages. Small lists still take the
 * native call (the common case); long ones are moved with loops.
 */

/** Up to this many items go through the native `splice(...items)`. */
const NATIVE_MAX = 4096

/** As `list.splice(start, deleteCount, ...items)`, for any number of items. Returns the removed items. */
export function spliceAll<T>(list: T[], start: number, deleteCount: number, items: readonly T[]): T[] {
  if (items.length <= NATIVE_MAX) return list.splice(start, deleteCount, ...items)
  const len = list.length
  // the same clamping as Array.prototype.splice
  const s = start < 0 ? Math.max(len + start, 0) : Math.min(start, len)
  const removed = list.splice(s, Math.max(0, Math.min(deleteCount, len - s)))
  const tail = list.splice(s)
  for (let i = 0; i < items.length; i++) list.push(items[i]!)
  for (let i = 0; i < tail.length; i++) list.push(tail[i]!)
  return removed
}

/** `target.push(...items)` for any number of items. */
export function pushAll<T>(target: T[], items: readonly T[]): void {
  for (let i = 0; i < items.length; i++) target.push(items[i]!)
}
