/**
 * Marks the function of an expiry timer (an approval's, docs/spec/lifecycle.md §9, or an input
 * round's, §11), so that timers that stand in for the clock (re-execution fires the expiry when the
 * recording has a `by: expired` answer next) can tell it from a tool's timeout or a cancel's grace
 * period. Its own module: the approval gate and the input rounds both arm one.
 * @internal
 */
export const EXPIRY_TIMER: unique symbol = Symbol('turnlog.approvalExpiry')
