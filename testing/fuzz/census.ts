/**
 * The census: what the passing runs exercised, so a fuzz that passed by never reaching the user's
 * code (every call `INVALID_ARGS`, every hook error swallowed) is visible. Counted from each run's
 * log and from the run's recorders; returned as `report.census` and printed by `turnlog fuzz`.
 */
import type { LogEvent } from '../../events/index.js'

/** Counts over the passing runs (a failing run and the runs that shrink it are not counted). */
export interface FuzzCensus {
  /** Runs counted. */
  runs: number
  /** `turn/end` reasons: completed, blocked, aborted, error, max-tokens, step-limit. */
  turnEnds: Record<string, number>
  /** `step/end` outcomes: tools, stop, failed, aborted, max-tokens, concluded. */
  stepOutcomes: Record<string, number>
  /** `tool/result`s: `ok`, or the error class (`INVALID_ARGS`, `TOOL_ERROR`, `ABORTED`, …). */
  toolResults: Record<string, number>
  /** `tool/result`s per tool (by the name of its `tool/call`): `ok` or the error code, so a tool
   * that throws on valid input shows as `TOOL_ERROR` under its own name. */
  perTool: Record<string, Record<string, number>>
  /** Tool bodies that started, per tool (yours and the fuzzer's `fuzz_*`). */
  bodies: Record<string, number>
  /** Errors the agent contained and reported on `agent/error`, by where (`agent/pre-step`, `tools/execute`, …). */
  hookErrors: Record<string, number>
  /** Cancels by who asked and the cause kind: `command user`, `hook hook`, `plugin user`… */
  cancels: Record<string, number>
  /** The other shapes a fuzzer must reach: `llm/retry`, `retry turn`, `interrupted` (a cut-off assistant
   * message); what providers send besides deltas (issue 23): `refusal` (and `refusal explanation`),
   * `signed thinking`, `redacted thinking`, `provider data on text`, `provider-executed call`, `source`, `file`. */
  other: Record<string, number>
  /** The hostile parts of the mix that happened: planned hangs (`hang …`), user code the grace
   * period abandoned (`abandoned <where>`) and late settlements it ignored (`late <where>`). */
  hostile: Record<string, number>
}

export function newCensus(): FuzzCensus {
  return { runs: 0, turnEnds: {}, stepOutcomes: {}, toolResults: {}, perTool: {}, bodies: {}, hookErrors: {}, cancels: {}, other: {}, hostile: {} }
}

export const bump = (m: Record<string, number>, k: string, n = 1): void => {
  m[k] = (m[k] ?? 0) + n
}

/** What one run adds: its log, the bodies it started, the contained errors, the cancels. */
export interface RunTally {
  events: readonly LogEvent[]
  bodies: Record<string, number>
  errors: ReadonlyArray<{ where: string; error: unknown }>
  cancels: ReadonlyArray<{ source: string; cause: { kind: string } }>
  hostile: Record<string, number>
}

export function countRun(c: FuzzCensus, r: RunTally): void {
  c.runs++
  const names = new Map<string, string>()
  for (const e of r.events) {
    const d = e.data as Record<string, any> // eslint-disable-line @typescript-eslint/no-explicit-any
    switch (e.type) {
      case 'turn/end': bump(c.turnEnds, String(d.reason?.kind)); break
      case 'step/end': bump(c.stepOutcomes, String(d.outcome?.kind)); break
      case 'tool/call': names.set(String(d.callId), String(d.name)); break
      case 'tool/result': {
        const outcome = d.error ? String(d.error.code) : 'ok'
        bump(c.toolResults, outcome)
        bump((c.perTool[names.get(String(d.callId)) ?? '(no call)'] ??= {}), outcome)
        break
      }
      case 'llm/retry': bump(c.other, 'llm/retry'); break
      case 'turn/start': if (d.cause) bump(c.other, 'retry turn'); break
      case 'assistant/message': countMessage(c, d); break
      case 'schedule/fired': bump(c.other, d.dropped ? 'wakeup dropped' : 'wakeup fired'); break
    }
  }
  for (const [k, n] of Object.entries(r.bodies)) bump(c.bodies, k, n)
  for (const e of r.errors) {
    if (e.where === 'driver') continue
    const code = codeOf(e.error)
    // abandoned and late user code is the grace period at work, not a hook error
    if (code === 'ABANDONED') bump(c.hostile, `abandoned ${e.where}`)
    else if (code === 'LATE_SETTLEMENT') bump(c.hostile, `late ${e.where}`)
    else bump(c.hookErrors, e.where)
  }
  for (const x of r.cancels) bump(c.cancels, `${x.source} ${x.cause.kind}`)
  for (const [k, n] of Object.entries(r.hostile)) bump(c.hostile, k, n)
}

/** An assistant message's shapes (see `FuzzCensus.other`). */
function countMessage(c: FuzzCensus, d: Record<string, any>): void { // eslint-disable-line @typescript-eslint/no-explicit-any
  if (d.interrupted) bump(c.other, 'interrupted')
  if (d.finish === 'refusal') bump(c.other, 'refusal')
  if (d.finish === 'refusal' && typeof d.explanation === 'string') bump(c.other, 'refusal explanation')
  const content: unknown[] = Array.isArray(d.message?.content) ? d.message.content : []
  for (const b of content as Array<Record<string, any>>) { // eslint-disable-line @typescript-eslint/no-explicit-any
    if (b.type === 'reasoning' && b.providerData?.anthropic?.signature !== undefined) bump(c.other, 'signed thinking')
    if (b.type === 'reasoning' && b.providerData?.anthropic?.redactedData !== undefined) bump(c.other, 'redacted thinking')
    if (b.type === 'text' && b.providerData !== undefined) bump(c.other, 'provider data on text')
    if (b.type === 'tool-call' && b.providerExecuted === true) bump(c.other, 'provider-executed call')
    if (b.type === 'source' || b.type === 'file') bump(c.other, String(b.type))
  }
}

function codeOf(err: unknown): string | undefined {
  try {
    const c = (err as { code?: unknown } | null)?.code
    return typeof c === 'string' ? c : undefined
  } catch {
    return undefined
  }
}

/** The census as aligned text lines (`turnlog fuzz` prints them). */
export function formatCensus(c: FuzzCensus): string[] {
  const row = (label: string, m: Record<string, number>) => {
    const parts = Object.entries(m).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`)
    return `  ${label.padEnd(14)} ${parts.length ? parts.join(' · ') : '—'}`
  }
  return [
    `census (${c.runs} runs):`,
    row('turn ends', c.turnEnds),
    row('step outcomes', c.stepOutcomes),
    row('tool results', c.toolResults),
    // one row per tool, yours first (the fuzzer's own `fuzz_*` after)
    ...Object.keys(c.perTool).sort((a, b) => Number(a.startsWith('fuzz_')) - Number(b.startsWith('fuzz_')) || a.localeCompare(b))
      .map((name) => row(`tool ${name}`, c.perTool[name]!)),
    row('bodies run', c.bodies),
    row('hook errors', c.hookErrors),
    row('cancels', c.cancels),
    row('other', c.other),
    ...(Object.keys(c.hostile).length ? [row('hostile', c.hostile)] : []),
  ]
}
