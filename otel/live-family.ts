/**
 * Live nesting of child sessions (docs/spec/lifecycle.md §10): a child's spans under its parent's
 * `execute_tool` span while both run, as `familyToSpans` / `exportFamilySpans` nest them after
 * the fact. The parent's `otelPlugin` sees its `child/spawned {callId, child}` (appended before the
 * child agent is created) and leaves the context of that call's open tool span here, under the
 * child's session id; the child's `otelPlugin`, installed when `defineSubagent` creates the child,
 * takes it as the context its turn spans start in. So a child nests when both agents carry an
 * `otelPlugin` (any tracers of one SDK: only the span context crosses). The entry is dropped when
 * the child takes it, when the call gets its `tool/result`, or when the parent's plugin is
 * uninstalled, so nothing is kept past the call. A child resumed later in another process starts
 * its turns at the root (its parent's span is gone); the export of the family nests it anyway.
 */
import { trace, type Context, type Span } from '@opentelemetry/api'

/** Child session id → the context of its parent's open tool span. Module-wide: parent and child
 * plugins are separate instances, possibly of separate tracers. */
const spawnedUnder = new Map<string, Context>()

/** The parent's side, one per installed plugin: which call spawned which child. */
export class ChildSpans {
  readonly #byCall = new Map<string, string>()

  /** A `child/spawned` of this session: its call's tool span (if open) becomes the child's parent. */
  spawned(callId: string, child: string, toolSpan: Span | undefined, root: Context): void {
    if (toolSpan === undefined) return
    spawnedUnder.set(child, trace.setSpan(root, toolSpan))
    this.#byCall.set(callId, child)
  }

  /** The call ended (`tool/result`): a child not created by now never takes its entry. */
  ended(callId: string): void {
    const child = this.#byCall.get(callId)
    if (child === undefined) return
    this.#byCall.delete(callId)
    spawnedUnder.delete(child)
  }

  /** The plugin is uninstalled (the parent disposed): drop what it left. */
  clear(): void {
    for (const child of this.#byCall.values()) spawnedUnder.delete(child)
    this.#byCall.clear()
  }
}

/** The child's side: the context its parent's plugin left for `sessionId`, taken once. */
export function takeSpawnContext(sessionId: string): Context | undefined {
  const ctx = spawnedUnder.get(sessionId)
  if (ctx !== undefined) spawnedUnder.delete(sessionId)
  return ctx
}
