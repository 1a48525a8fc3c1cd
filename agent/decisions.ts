/**
 * What the driver makes of a hook's answer: the `agent/pre-step` decision, read inside a guard
 * (it is user data), and the `Failure` a throwing hook becomes. Shared by the turn phases and the
 * step driver.
 */
import { TurnlogError, UserMessage, findLossy, type Failure } from '../events/index.js'
import { errorText } from '../tools/define.js'
import type { PreStepDecision } from './types.js'

/**
 * Checks an `agent/pre-step` decision and returns a copy the hook can no longer change: the entered
 * messages are parsed copies. Throws `INVALID_MESSAGE` for an entered message that does not parse
 * or that the log cannot store losslessly (a lone surrogate: its `user/message` append would be
 * refused after the step opened), `INVALID_ARGUMENT` for anything that is not
 * `{kind:'enter', messages}` or `{kind:'reject'}`.
 */
export function checkDecision(d: unknown): PreStepDecision {
  if (typeof d === 'object' && d !== null) {
    const k = (d as { kind?: unknown }).kind
    if (k === 'reject') return { kind: 'reject' }
    if (k === 'enter') {
      const ms = (d as { messages?: unknown }).messages
      if (Array.isArray(ms)) {
        // The parsed copies are entered, not the hook's objects (which it could still change).
        const parsed: UserMessage[] = []
        for (let i = 0; i < ms.length; i++) {
          const r = UserMessage.safeParse(ms[i])
          if (!r.success) throw new TurnlogError('INVALID_MESSAGE', `pre-step entered an invalid message: ${r.error.issues[0]!.message}`)
          const lossy = findLossy(r.data, `messages[${i}]`)
          if (lossy) {
            throw new TurnlogError('INVALID_MESSAGE', `pre-step entered a message the log cannot store: ${lossy.why} at ${lossy.path}`, { field: lossy.path })
          }
          parsed.push(r.data)
        }
        return { kind: 'enter', messages: parsed }
      }
    }
  }
  throw new TurnlogError('INVALID_ARGUMENT', 'agent/pre-step must return {kind:"enter", messages} or {kind:"reject"}')
}

/** @internal */
export function hookFailure(hook: string, err: unknown): Failure {
  return { code: 'HOOK_ERROR', message: `${hook}: ${errorText(err)}` }
}
