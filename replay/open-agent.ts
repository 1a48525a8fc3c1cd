/**
 * `openAgent({ store, sessionId, … })`: the open-or-create call every app needs (issue 27 item 4).
 * A missing session is created; an existing one is resumed exactly as `resumeAgent({ store,
 * sessionId })` does (repaired under the write lock, pending work run, docs/spec/lifecycle.md §8). A new
 * session and an existing empty one behave like `createAgent({ store, sessionId })`.
 *
 * Race-safe by construction, with no check-then-act window: `store.create` is atomic (one
 * creator wins, the others get `SESSION_EXISTS`, which here only means "resume it"), and the
 * resume then takes the single-writer ownership (`store.open(id, 'write')`: the jsonl lock file,
 * PostgreSQL's ownership row). Of two processes racing on one id, exactly one gets the agent; the
 * other gets `SESSION_OWNED` (a coded error naming the owner) and nothing of the session changes.
 * Retrying after the owner disposed resumes what it wrote.
 */
import type { Agent } from '../agent/types.js'
import { TurnlogError } from '../events/errors.js'
import type { HeaderInit, LogStore } from '../stores/types.js'
import { resumeAgent, type ResumeOptions } from './resume.js'
import { checkResumeOptions, OPEN_OPTION_FIELDS, type SameKeys } from './resume-options.js'

export interface OpenOptions extends Omit<ResumeOptions, 'log' | 'store' | 'sessionId'> {
  /** Where the session lives (`memoryStore()`, `jsonlStore(dir)`, `postgresStore(…)`). */
  store: LogStore
  /** The session to open; created when the store does not hold it. */
  sessionId: string
  /** The new session's header (`createdAt`, `parent`…) when it is created; ignored when it exists. */
  header?: HeaderInit
}

// every OpenOptions member has its line in the options schema, and no other (resume-options.ts)
const fieldsMatch: SameKeys<typeof OPEN_OPTION_FIELDS, OpenOptions> = true
void fieldsMatch

/**
 * Opens session `sessionId` of `store`: creates it when missing, resumes it when present.
 * Resolves with the agent, which owns the session until `dispose()`. Rejects with a coded error:
 * `INVALID_OPTION` (checked before the store is touched), `SESSION_OWNED` (another agent or
 * process holds it), the store's errors (`INVALID_SESSION_ID`, `IO_ERROR`, …) and repair's.
 *
 * Durability: as everywhere, `followup()` returns the message id at once; the message is
 * accepted (survives a crash) once `await agent.flush()` resolves.
 */
export async function openAgent(opts: OpenOptions): Promise<Agent> {
  checkResumeOptions(opts, 'openAgent', OPEN_OPTION_FIELDS)
  const { header, ...rest } = opts
  if (rest.store === undefined) throw new TurnlogError('INVALID_OPTION', 'openAgent needs a store', { field: 'store' })
  if (rest.sessionId === undefined) throw new TurnlogError('INVALID_OPTION', 'openAgent needs a sessionId', { field: 'sessionId' })
  try {
    await rest.store.create(rest.sessionId, header)
  } catch (err) {
    if (!TurnlogError.is(err, 'SESSION_EXISTS')) throw err
  }
  return resumeAgent(rest)
}
