// @ts-check
/**
 * Mutation testing (issue 15 part 3): `npm run mutate`. Not in CI: a full pass over every mutated
 * folder takes about an hour on 2 cores. Run it per file with a restricted test set instead:
 *
 *   TURNLOG_MUTATE_TESTS='test/machines/**,test/agent/**' npm run mutate -- --mutate machines/turn.ts
 *
 * Incremental: results are kept in mutation/stryker-incremental.json (generated, not committed), so
 * a rerun on the same checkout only tests mutants whose code or covering tests changed. The per-file
 * scores come from `npm run mutate:summary`, which writes mutation.json (also generated) from the
 * reports that mutation/run.sh keeps in mutation/reports/. TURNLOG_FC_RUNS caps fast-check's default runs per property (30 here).
 *
 * Mutants judged equivalent (they survive, and no test can kill them; each was checked by hand).
 * Also in mutation.json under "equivalent".
 *
 * machines/inbox.ts
 * - :60 `event.type === 'SPLICE' && …` → `true && …` (guard idsStayUnique): the guard is only
 *   attached to SPLICE transitions, so the test is a type narrowing, always true at run time.
 * - :64 `if (event.type !== 'SPLICE') return {}` → `if (false)` (applySplice): same reason.
 * - :71 `event.type === 'CLAIM' && …` → `true && …` (applyClaim): only attached to CLAIM.
 * - :77 `initial: 'unlatched'` → `initial: ""`: XState falls back to the first child state,
 *   which is `unlatched`.
 *
 * machines/step.ts (guards and assigners are attached to one event type, and the step machine
 * routes the STREAMED results by guard order, so their `event.type`/`event.result` tests are
 * TypeScript narrowings that always hold at run time)
 * - :48 streamAborted, :49 streamFailed, :53 toolsAborted, :54 concluded: `event.type === …` →
 *   `true`.
 * - :59 begin: `event.type === 'BEGIN'` → `true`.
 * - :64 noteFinish (four mutants of `event.type === 'STREAMED' && event.result === 'success'`):
 *   only on STREAMED's last branch, reached only by a success (aborted and failure are taken first).
 * - :67 noteVisible (three mutants of `event.type === 'STREAMED' && event.result === 'aborted'`,
 *   the `&&`/`||` one being `(A || B) && visibleStreamed`): only on the streamAborted branch.
 * - :78 outcomeFailed (three mutants of its event test) and :80 its fallback failure (no
 *   coverage): only attached to HOOK_FAILED and to STREAMED's failure branch, so the fallback is
 *   unreachable; it exists for the type checker.
 * - :87 `initial: 'idle'` → `""`: XState falls back to the first child state, `idle`.
 * (:85 `id: 'step'` → `""` is killed by test/machines/inbox.test.ts "machine ids", outside the
 * test set of that run.)
 *
 * machines/turn.ts (same reason: each guard and assigner is attached to its event types only)
 * - :58 rejected, :61 emptyEndsTurn, :66 stepFailedByHook, :67 stepFailed, :68 toolsOwed,
 *   :69 nextStepPending, :70 retryAuthorised, :73 latched, :74 moreWork: the `event.type` test →
 *   `true`.
 * - :72 turnWasAborted `endReason?.kind` → `endReason.kind`: only evaluated in `closing`, where
 *   every path into it has set `endReason`.
 * - :93 noteMaxTokens, :96 rememberAbort, :99 rememberFailure (4), :110 endHookError, :118
 *   endStepFailure (4): the event test → `true`/`||`.
 * - :102 endAborted's `?? { kind: 'user' }`, :112 and :118 the fallback failures (no coverage):
 *   unreachable (endAborted only follows the `aborted` guard; the others only their events); they
 *   exist for the type checker. Same for :121 endRecoveryFailure's `?? {…}` (rememberFailure always
 *   set it on the way into `recovering`).
 * - :138, :151 `initial` → `""`: XState falls back to the first child state (idle, opening).
 * - :221, :223, :225 `reenter: true` → `false` on CLOSED → opening: opening is a sibling of
 *   closing, so it is exited and entered (and `openTurn` runs) either way. Kept for the reader.
 * (:124 `id: 'turn'`, :127/:130/:132 the initial context and :202's target were killable: they are
 * killed by "machine ids", "starts idle with the last turn…" and the STOP_FAILED state assertion,
 * added after that run.)
 *
 * events/invariants/checker.ts
 * - :84 `if (out.length > 1)` → `if (true)` and → `>= 1`: sorting a list of 0 or 1 violations
 *   changes nothing (the guard only skips the sort's cost).
 * - :107 `/^L(\d+)$/` → `/L(\d+)$/` and → `/^L(\d+)/`: `rank` only receives `LogInvariant`s
 *   ('L1' … 'L16', typed), for which the anchors change nothing.
 *
 * reducers/projection.ts (freezeValue's tests only skip work: every mutant below gives the same
 * deeply frozen state, at a different cost)
 * - :66 `typeof v !== 'object'`, `v === null` and their disjunction → `false`: freezeValue only
 *   receives objects (its callers test first; freezeState gets the state). The whole condition →
 *   `false` and the `&&`/`||` swaps re-freeze frozen objects: killed by test/reducers/runners.test.ts.
 * - :68 `Array.isArray(v)` → `false`: `for…in` walks an array's indices too (as key strings).
 * - :69 `i <= v.length`: `v[v.length]` is undefined and skipped.
 * - :71, :76 the per-child `typeof x === 'object' && x !== null` (4 mutants each): freezeValue
 *   re-tests and returns at once.
 *
 * reducers/lifecycle.ts
 * - :80 `draft.openStep !== null` → `true`: an assistant/chunk outside an open step breaks L4; the
 *   reducers' contract covers checked logs only.
 * - :107, :115 `pendingToolCalls.length > 0` → `true` / `>= 0`: clears an empty list.
 * - :124 `event.surfaceOp !== 'append'` → `false`: a replacement tool/result (a prune) always
 *   follows its call's appended result, so its callId is never pending.
 *
 * reducers/inbox.ts
 * - :26 `d.inserted.length === 0` → `false`: spliceAll with no items is `list.splice(start, removed)`.
 * - :27 `removed > 0` → `true` / `>= 0`: `splice(start, 0)` removes nothing.
 *
 * reducers/surface.ts
 * - :25 isSurfaceEvent (`surfaceOp !== undefined` → `true`, the `&&` → `||`, `t === 'user/message'`
 *   → `true`): L8 — exactly the three surface types carry a surfaceOp, and they always do.
 *
 * tools/ (each with its full reason in mutation/equivalent.json)
 * - call-machine.ts :97–:100, :103, :105, :107, :108: the guards' and actions' `event.type === …` →
 *   `true`: each is attached to one event type only (a type narrowing).
 * - classify.ts :23 `typeof isConcurrencySafe !== 'function'` → false: calling a non-function throws
 *   inside the same try, which answers `exclusive` too.
 * - call-stages.ts :86 `finish`'s `if (done) return` → false: every caller checks `done` first;
 *   :217 `{ kind }` → `{}` for an accept without contexts: postExecute reads only `kind === 'block'`
 *   and the contexts; :225 `v === undefined` → false: `describe` gives the same text either way.
 * - scheduler.ts :33 `typeof value !== 'number'` → false (`Number.isInteger` refuses the same
 *   values); the per-call machine's book-keeping events (`DEFER` :135/:145, `NOT_DISPATCHED` :171,
 *   `SETTLE` :207, `LOST` and `COMMIT` in failOut :287/:294) and flags (`commitTried` :174/:291,
 *   `committed` :293): the machine's state is read only right after `PRE_DONE`, and failOut runs
 *   once; :193/:205 `if (this.#dead) return` and :227 `if (this.#failure) break` → false: the
 *   failure path already stops every later effect. (Making `send` refuse unaccepted events would
 *   make these killable; left, see the note.)
 *
 * machines/lean-actor.ts
 * - :115 `typeof g === 'object'` → true: only objects and primitives without a string `type` reach it.
 * - `always: []` (always overwritten by `link` before use), `ancestors`' extra array element (only
 *   searched for nodes). (Two more, on the never-read `depth`/`children` fields, went with the
 *   fields in the final review.)
 * - :197 `type === '*'` → false and `'*'` → `''`: `includes('*')` refuses the same with the same
 *   message; XState itself rejects an empty event key.
 *
 * agent/ (each with its reason in mutation/equivalent.json)
 * - initial values always overwritten before they are read: step-driver.ts `system`/`tools`,
 *   turn-driver.ts and agent.ts `entered`.
 * - step-driver.ts :100 the failure built for an abandoned assemble hook (the step is already
 *   aborted); :150 `outcome === null` (checkedStream always ends with exactly one outcome); :244
 *   `everyMessage` in the cheap check (both sides hold the same array).
 * - turn-driver.ts `waking` (:78, :91, :92) and agent.ts :254: only the number of microtasks
 *   `dispose()` takes changes; :153 (×2) a second pass proposes the same way; :229 `abortCause !==
 *   null` (the turn's signal is already aborted then); :243 an abandoned stop hook only follows a
 *   cancel; :277 a step is never open without an open turn.
 * - agent.ts :171, :373, :390: states the status already implies; :256 `m` and `grace` are both
 *   set or both null.
 * - persistence.ts :121, :149 guards the failure path already implies; :140 `>` → `>=` (the equal
 *   case writes the same value); :166/:168 the buffer and waiters reset after a failure (never read
 *   again). inbox-driver.ts :51/:53/:101/:167 `'next-step'`/`'tail'` → `""` (the code only tests for
 *   `'next-turn'`/`'head'`); :156 (×2) a splice of nothing returns before any effect.
 *
 * Static mutants (module-level code, e.g. each reducer's `name`) can be scored Survived although a
 * test kills them: under the vitest runner only part of the suite ran for them. Those checked by
 * hand are in mutation/hand-killed.json with the killing test.
 */
process.env.TURNLOG_FC_RUNS ??= '30'

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.stryker.config.ts', related: false },
  coverageAnalysis: 'perTest',
  mutate: [
    'machines/**/*.ts',
    'reducers/**/*.ts',
    'events/invariants/**/*.ts',
    'tools/**/*.ts',
    'agent/**/*.ts',
    '!**/index.ts',
  ],
  incremental: true,
  incrementalFile: 'mutation/stryker-incremental.json',
  concurrency: 1,
  timeoutMS: 20000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'mutation/last-report.json' },
  ignorePatterns: ['dist', 'bench/results.json', 'mutation', 'test/machines/.doc-examples'],
  tempDirName: 'mutation/.stryker-tmp',
  cleanTempDir: 'always',
}
