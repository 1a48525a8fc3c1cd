/**
 * `reexecute(log, { tools, hooks })`: deterministic re-execution (P4). Drives today's agent against
 * the recorded outside world and compares every event it appends with the recorded one.
 *
 * What is served from the log:
 * - **the model** (model.ts): each request gets the recorded `assistant/chunk`s of its step, then
 *   ends as the step did: normally (a written `assistant/message`), by throwing the recorded failure
 *   as a `ModelError` (a failed step), or by waiting for the cancel (an aborted step);
 * - **tool outcomes** (tools.ts): every tool's body (and the `tools/execute` waterfall around it) is
 *   replaced by one that serves the recorded `tool/result` of its call: the content, a throw for
 *   `TOOL_ERROR`, a throwing `tools/execute` listener for its `HOOK_ERROR`, the firing of the call's
 *   timeout for `TOOL_TIMEOUT`, a rejection on the cancel for `ABORTED`. Classification,
 *   `UNKNOWN_TOOL`, `INVALID_ARGS`, the pre/post hooks and the order are today's code;
 * - **time and ids** (clock.ts): `clock` returns the recorded `time` of the seq being appended;
 *   `ids` returns the recorded ids of the messages being inserted; retry sleeps return at once;
 * - **external inputs** (inputs.ts, cancels.ts): inbox splices the driver does not make (sends,
 *   edits) and cancels (the cause of a `turn/end {aborted}`, or the traces of one a crash cut
 *   short) are re-issued at the recorded log positions; a compaction that starts outside a turn
 *   (a manual one) is re-issued with the `compactNow` of the first plugin that has one;
 * - **compaction summaries** (model.ts): a plugin's model call with `purpose: 'compaction'` (pass
 *   the recorded session's plugins, e.g. `basicCompaction(sameOptions)`) is served from its
 *   bracket: the recorded `compaction/summary` (text and usage), the recorded model failure of a
 *   `compaction/end {error}`, a wait for the cancel (`ABORTED`), or a response that makes the
 *   summariser decide as it did (`EMPTY_SUMMARY`, `SUMMARY_NOT_SMALLER` with the recorded size);
 * - **process boundaries** (recording.ts, run.ts): a crash (repair's closers) or a restart in the
 *   recording ends the running agent and starts the next one on the log as it then stood.
 *
 * Scheduling (run.ts, serve.ts): the re-execution owns every point where the agent waits; when
 * the agent has nothing left to do but wait, the next recorded event decides what is released or
 * issued, so the interleaving of the recording is reproduced without timing. The comparison is
 * compare.ts. See decision record "replay-engine" (docs/decisions/ in the repository).
 */
import type { HookMap } from '../../agent/types.js'
import type { LogEvent } from '../../events/index.js'
import type { LogHeader } from '../../events/jsonl.js'
import { readLog } from '../read-log.js'
import type { ReexecuteOptions, ReexecuteResult } from './options.js'
import { Reexecution } from './run.js'

export type { Divergence, ReexecuteOptions, ReexecuteResult } from './options.js'

type Log = { header?: LogHeader; events: readonly LogEvent[] } | readonly LogEvent[]

/** Re-executes a recorded log (events, `{header, events}`, or a JSONL path) against today's code. */
export async function reexecute(log: Log | string, opts: ReexecuteOptions = {}): Promise<ReexecuteResult> {
  const events: readonly LogEvent[] = typeof log === 'string'
    ? (await readLog(log)).events
    : Array.isArray(log) ? (log as readonly LogEvent[]) : (log as { events: readonly LogEvent[] }).events
  const maxAttempts = Math.max(1, opts.maxAttempts ?? 64)
  let choices: boolean[] = []
  let best: Extract<ReexecuteResult, { ok: false }> | null = null
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const run = new Reexecution(events, opts, choices)
    const r = await run.run()
    if (r.ok) return r
    if (best === null || r.divergence.seq > best.divergence.seq) best = r
    // flip the latest open choice at or before the divergence
    const points = run.choicePoints
    let j = -1
    for (let i = points.length - 1; i >= 0; i--) {
      if (!choices[i] && points[i]! <= r.divergence.seq) {
        j = i
        break
      }
    }
    if (j < 0) break
    choices = [...points.map((_, i) => choices[i] ?? false).slice(0, j), true]
  }
  return best!
}


export type { HookMap }
