/**
 * `sessionHandler(options)`: a Fetch API handler `(Request) => Promise<Response>` serving sessions
 * (docs/spec/api.md "Serving sessions over HTTP"):
 *
 * | route | action asked of `authorize` |
 * | --- | --- |
 * | `GET`/`HEAD /sessions/:id` (Durable Streams, JSON mode) | `read` |
 * | `POST /chat/:id` with a user message | `write` (before the body is read) |
 * | `POST /chat/:id` with approval responses (`addToolApprovalResponse`) or client tool outputs (`addToolOutput`) | `decide` (before the body is read, when `write` is refused) |
 * | `POST /chat/:id/inputs/:requestId` (an answer to an input round) | `decide` |
 * | `POST /chat` (the chat id only in the body), with `chatIdInBody: true` only | as above, after the body is read |
 * | `GET /chat/:id/stream`, `GET /chat/:id/messages` | `read` |
 * | `POST /chat/:id/stop` | `cancel` (204 in-process; with workers 202, recorded for the holder) |
 *
 * Every request is authorized before anything about the session is revealed (an unknown session
 * is a 404 only to a caller allowed to read it). Errors are JSON `{ error: { code, message } }`.
 * CORS headers are sent only for the origins listed in `cors.origins`.
 */
import { TurnlogError } from '../events/errors.js'
import { isValidSessionId } from '../stores/ids.js'
import type { LogStore } from '../stores/types.js'
import type { InputAnswer } from '../events/index.js'
import { answerOutput, asHttp, decideResponse, inputError } from './answers.js'
import { planApprovals } from './chat-approvals.js'
import { chatStreamResponse, messageAt, parseChatBody } from './chat.js'
import type { ChatScanner, ChatPlace } from './chat-place.js'
import { ChatScanner as Scanner } from './chat-place.js'
import { headResponse, readResponse, type ReadOptions } from './durable-streams.js'
import { errorResponse, EXPOSED_HEADERS, HttpError } from './protocol.js'
import { Sessions, type SendingStore, type SessionAgentOptions } from './sessions.js'
import type { SessionTail } from './tail.js'
import { toUIMessages } from './ui-messages.js'

/** What a request wants to do with a session (`decide`: answer its approvals and input requests). */
export type SessionAction = 'read' | 'write' | 'cancel' | 'decide'

export interface SessionHandlerOptions {
  store: LogStore
  /**
   * Asked before every request with the session it names and what it wants; `true` allows it.
   * Required: there is no default. A throw or a rejection is a 500 (`AUTHORIZE_FAILED`), never an
   * allow; an answer that takes longer than `authorizeTimeoutMs` is a 503.
   */
  authorize: (req: Request, sessionId: string, action: SessionAction) => boolean | Promise<boolean>
  /** The options of each session's agent: this process runs the sessions (JSONL, memory, PostgreSQL). */
  agent?: (sessionId: string) => SessionAgentOptions | Promise<SessionAgentOptions>
  /**
   * PostgreSQL workers run the sessions: prompts go through `store.send`, a stop through
   * `store.cancel` (recorded durably, 202; the worker holding the session cancels the turn).
   */
  workers?: true
  /** Nothing is written: reads and history only; `POST /chat` and stop answer 405 `READ_ONLY`. */
  readOnly?: true
  /**
   * Also serve `POST /chat`, where the chat id is only in the JSON body (the AI SDK's
   * `DefaultChatTransport` with no options): its body, at most `maxBodyBytes`, is read and parsed
   * BEFORE `authorize` can be asked, since the session is named nowhere else. Default: off, and
   * `POST /chat` answers 404 `CHAT_ID_NOT_IN_PATH` with nothing read; post to `/chat/:id` instead
   * (`prepareSendMessagesRequest`), where `authorize` answers before a byte of the body is read.
   * Turn it on only when `authorize` does not depend on the session (a loopback-only server).
   */
  chatIdInBody?: true
  /** Path prefix of every route (e.g. `/api`). Default ''. */
  basePath?: string
  /** Allowed browser origins (exact `scheme://host[:port]`). Default: none, no CORS headers at all. */
  cors?: { origins: readonly string[] }
  /** Largest request body in bytes. Default 1 MiB. */
  maxBodyBytes?: number
  /**
   * Agents with nothing to do (idle, or parked for people) kept for their next message, least
   * recently used released first (disposed: the log is durable; a later message resumes the
   * session from it). Default 16; 0 releases every agent as soon as it settles and nobody reads.
   */
  idleAgents?: number
  /** How often a session that no agent of this process writes is polled while followed. Default 250 ms. */
  pollMs?: number
  longPollMs?: number
  sseMaxMs?: number
  /** Most events per SSE data event. Default 1,000. */
  maxBatch?: number
  /** Most events per catch-up or long-poll response. Default 100,000. */
  maxCatchUp?: number
  authorizeTimeoutMs?: number
  /** A read error of a followed log (the request gets a 500; the handler keeps serving). */
  onError?: (err: unknown) => void
}

export interface SessionHandler {
  (req: Request): Promise<Response>
  /** Disposes the agents this handler runs (their logs stay durable) and ends every follow. */
  close(): Promise<void>
  /** What the handler holds now (diagnostics): followed logs, and agents running or kept idle. A
   * session is released when its last reader leaves; idle agents beyond `idleAgents` are disposed. */
  held(): { tails: number; agents: number }
}

const ROUTE = /^\/(sessions|chat)(?:\/([^/]+))?(?:\/(stream|stop|messages))?\/?$/
/** `POST /chat/:id/inputs/:requestId`: an answer to an input round (docs/spec/lifecycle.md §11). */
const INPUT_ROUTE = /^\/chat\/([^/]+)\/inputs\/([^/]+)\/?$/

export function sessionHandler(options: SessionHandlerOptions): SessionHandler {
  if (typeof options?.authorize !== 'function') {
    throw new TurnlogError('INVALID_ARGUMENT', 'sessionHandler needs an authorize(req, sessionId, action) function: there is no default', { field: 'authorize' })
  }
  if (!options.store) throw new TurnlogError('INVALID_ARGUMENT', 'sessionHandler needs a store', { field: 'store' })
  if ([options.agent, options.workers, options.readOnly].filter((x) => x !== undefined).length !== 1) {
    throw new TurnlogError('INVALID_ARGUMENT', 'sessionHandler needs exactly one of agent (this process runs the sessions), workers: true or readOnly: true', { field: 'agent' })
  }
  if (options.workers && typeof (options.store as { send?: unknown }).send !== 'function') {
    throw new TurnlogError('INVALID_ARGUMENT', 'workers: true needs a store with send() (postgresStore)', { field: 'workers' })
  }
  const base = (options.basePath ?? '').replace(/\/$/, '')
  const origins = new Set(options.cors?.origins ?? [])
  const maxBody = options.maxBodyBytes ?? 1 << 20
  const readOpts: ReadOptions = { maxBatch: options.maxBatch ?? 1000, maxCatchUp: options.maxCatchUp ?? 100_000, longPollMs: options.longPollMs ?? 20_000, sseMaxMs: options.sseMaxMs ?? 60_000 }
  const sessions = new Sessions(options.store, options.agent, { pollMs: options.pollMs ?? 250, onError: options.onError }, options.idleAgents ?? 16)
  /** `onError`, guarded: a throwing log hook never changes a response. */
  const report = (err: unknown): void => {
    try { options.onError?.(err) } catch { /* the hook's own failure is not the client's */ }
  }

  const corsHeaders = (req: Request): Record<string, string> => {
    const origin = req.headers.get('origin')
    if (origin === null || !origins.has(origin)) return {}
    return { 'access-control-allow-origin': origin, vary: 'Origin', 'access-control-expose-headers': EXPOSED_HEADERS }
  }

  async function authorize(req: Request, sessionId: string, action: SessionAction): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<'timeout'>((r) => { timer = setTimeout(() => r('timeout'), options.authorizeTimeoutMs ?? 10_000) })
    let answer: unknown
    try {
      answer = await Promise.race([Promise.resolve().then(() => options.authorize(req, sessionId, action)), timeout])
    } catch (err) {
      // the detail (a database error, a path) is the server's: the client learns only that it failed
      report(err)
      throw new HttpError(500, 'AUTHORIZE_FAILED', 'authorization failed')
    } finally {
      clearTimeout(timer)
    }
    if (answer === 'timeout') throw new HttpError(503, 'AUTHORIZE_TIMEOUT', 'authorize did not answer in time')
    if (answer !== true) throw new HttpError(403, 'FORBIDDEN', `not allowed to ${action} this session`)
  }

  /** Before the body of `POST /chat/:id`: may the caller write (send a message) or, failing that,
   * decide (answer approvals)? The one allowed; a 403 when neither is. */
  async function authorizeChatPost(req: Request, id: string): Promise<Set<SessionAction>> {
    for (const action of ['write', 'decide'] as const) {
      try {
        await authorize(req, id, action)
        return new Set([action])
      } catch (err) {
        if (action === 'decide' || !(err instanceof HttpError) || err.status !== 403) throw err
      }
    }
    return new Set()
  }

  function sessionId(raw: string | undefined): string {
    let id: string
    try {
      id = decodeURIComponent(raw ?? '')
    } catch {
      throw new HttpError(400, 'INVALID_SESSION_ID', 'the session id is not valid URL encoding')
    }
    if (!isValidSessionId(id)) throw new HttpError(400, 'INVALID_SESSION_ID', 'invalid session id: use 1–128 of [A-Za-z0-9._-], starting with a letter or digit, without ..')
    return id
  }

  async function readBody(req: Request): Promise<unknown> {
    const declared = Number(req.headers.get('content-length') ?? NaN)
    if (declared > maxBody) throw new HttpError(413, 'BODY_TOO_LARGE', `the body is larger than ${maxBody} bytes`)
    const chunks: Uint8Array[] = []
    let size = 0
    if (req.body) {
      const reader = req.body.getReader()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        size += value.byteLength
        if (size > maxBody) {
          await reader.cancel().catch(() => {})
          throw new HttpError(413, 'BODY_TOO_LARGE', `the body is larger than ${maxBody} bytes`)
        }
        chunks.push(value)
      }
    }
    const text = new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(chunks))
    try {
      return JSON.parse(text)
    } catch {
      throw new HttpError(400, 'BAD_JSON', 'the body is not JSON')
    }
  }

  async function route(req: Request, hold: (release: () => void) => void): Promise<Response> {
    const url = new URL(req.url)
    if (base !== '' && !url.pathname.startsWith(base + '/')) throw new HttpError(404, 'NOT_FOUND', 'no such route')
    const input = INPUT_ROUTE.exec(url.pathname.slice(base.length))
    if (input) return answerInput(req, input[1]!, input[2]!)
    const m = ROUTE.exec(url.pathname.slice(base.length))
    if (!m) throw new HttpError(404, 'NOT_FOUND', 'no such route')
    const [, kind, rawId, sub] = m
    const method = req.method.toUpperCase()

    if (kind === 'sessions') {
      if (rawId === undefined || sub !== undefined) throw new HttpError(404, 'NOT_FOUND', 'no such route')
      if (method !== 'GET' && method !== 'HEAD') {
        throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'a session log is written by its agent only: read it with GET or HEAD', { allow: 'GET, HEAD' })
      }
      const id = sessionId(rawId)
      await authorize(req, id, 'read')
      if (!await sessions.exists(id)) throw new HttpError(404, 'SESSION_NOT_FOUND', 'no such session')
      const tail = await sessions.tail(id, hold)
      if (method === 'HEAD') return headResponse(tail)
      return readResponse(req, url, tail, readOpts)
    }

    // chat
    if (options.readOnly && method === 'POST') throw new HttpError(405, 'READ_ONLY', 'this server only reads sessions (no agent runs here)', { allow: 'GET, HEAD' })
    if (rawId === undefined || (sub === undefined && method === 'POST')) {
      if (method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'POST a chat request', { allow: 'POST' })
      // POST /chat/:id names the session before its body: the body is neither read nor parsed
      // until authorize allows writing to it or deciding in it (what a chat POST does)
      const pathId = rawId === undefined ? null : sessionId(rawId)
      if (pathId === null && !options.chatIdInBody) {
        throw new HttpError(404, 'CHAT_ID_NOT_IN_PATH', 'POST to /chat/:id (the chat id in the path, so the request is authorized before its body is read); POST /chat is served only with chatIdInBody: true')
      }
      const granted = pathId === null ? new Set<SessionAction>() : await authorizeChatPost(req, pathId)
      const body = await readBody(req)
      const prompt = parseChatBody(body)
      if (pathId !== null && prompt.sessionId !== pathId) throw new HttpError(400, 'CHAT_ID_MISMATCH', 'the body\'s id is not the chat id in the path')
      if (prompt.kind === 'approvals') {
        if (!granted.has('decide')) await authorize(req, prompt.sessionId, 'decide')
        if (!await sessions.exists(prompt.sessionId)) throw new HttpError(404, 'SESSION_NOT_FOUND', 'no such session')
        const tail = await sessions.tail(prompt.sessionId, hold)
        const plan = planApprovals(tail.events, prompt)
        const decided = new Set<string>()
        for (const r of plan.toDecide) {
          await decideResponse(sessions, tail, prompt.sessionId, r)
          decided.add(r.approvalId)
        }
        // a client tool's output answers its round: durable before the stream goes on
        for (const a of plan.toAnswer) {
          await answerOutput(sessions, tail, prompt.sessionId, a)
          decided.add(a.requestId)
        }
        return chatStreamResponse(req, tail, () => ({ kind: 'turn', index: plan.turnIndex }), { from: plan.from, decided })
      }
      if (!granted.has('write')) await authorize(req, prompt.sessionId, 'write')
      const exists = await sessions.exists(prompt.sessionId)
      const tail = exists ? await sessions.tail(prompt.sessionId, hold) : null
      const scanner = new Scanner()
      for (const e of tail?.events ?? []) scanner.push(e)
      // a retried POST (same message id) streams the same turn without sending the prompt twice
      if (!scanner.known(prompt.messageId)) {
        try {
          await sessions.send(prompt.sessionId, { id: prompt.messageId, content: [{ type: 'text', text: prompt.text }] })
        } catch (err) {
          if (!TurnlogError.is(err) || err.code !== 'DUPLICATE_PENDING_ID') throw asHttp(err)
        }
      }
      return chatStreamResponse(req, await sessions.tail(prompt.sessionId, hold), (s) => s.forMessage(prompt.messageId))
    }
    const id = sessionId(rawId)
    if (sub === 'stop') {
      if (method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'POST to stop', { allow: 'POST' })
      await authorize(req, id, 'cancel')
      if (options.workers) {
        const store = options.store as SendingStore
        if (typeof store.cancel !== 'function') throw new HttpError(501, 'NOT_SUPPORTED', 'this store cannot record a stop for its workers (it has no cancel())')
        // recorded durably; the worker holding the session cancels (202: accepted, not yet done)
        const r = await store.cancel(id, { cause: { kind: 'user' } }).catch((err: unknown) => { throw asHttp(err) })
        return new Response(JSON.stringify({ cancel: r.id, state: r.state }), { status: 202, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } })
      }
      const running = sessions.running(id)
      if (running) (await running).cancel({ kind: 'user' })
      return new Response(null, { status: 204 })
    }
    if (method !== 'GET') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'use GET', { allow: 'GET' })
    await authorize(req, id, 'read')
    if (sub === 'messages') {
      const events = await sessions.exists(id) ? (await sessions.tail(id, hold)).events : []
      return new Response(JSON.stringify(toUIMessages(events)), { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } })
    }
    if (sub === 'stream') {
      const lastEventId = req.headers.get('last-event-id')
      if (lastEventId !== null) return afterLastEvent(req, id, lastEventId, hold)
      if (!await sessions.exists(id)) return new Response(null, { status: 204 })
      const tail = await sessions.tail(id, hold)
      const seen = tail.events.length
      // acknowledged input the log does not show yet (a prompt in the store's inbox before a
      // worker moved it; an agent's unflushed send): its turn starts after what was seen
      const unlogged = await sessions.unloggedInput(id, tail)
      const first = new Scanner()
      for (let i = 0; i < seen; i++) first.push(tail.events[i]!)
      let now = first.forResume()
      if (now.kind === 'none' && unlogged.length > 0) now = { kind: 'wait' }
      if (now.kind === 'none') {
        // input moved into the log while the store was asked is there now
        await tail.refresh()
        while (first.length < tail.events.length) first.push(tail.events[first.length]!)
        now = first.forResume()
      }
      if (now.kind === 'none') return new Response(null, { status: 204 })
      const after = first.lastStart ?? -1
      // the unlogged prompts are waited for until the log shows them moved (then they are its
      // pending input, or its open or finished turn, or a stop's removal: nothing to stream)
      return chatStreamResponse(req, tail, (s: ChatScanner): ChatPlace => now.kind === 'turn' ? now : unlogged.some((m) => !s.known(m)) ? { kind: 'wait' } : s.forResume(after))
    }
    throw new HttpError(404, 'NOT_FOUND', 'no such route')
  }

  /**
   * `POST /chat/:id/inputs/:requestId` with an answer (`{action: 'accept', responses}`,
   * `{action: 'decline'}`, `{action: 'cancel'}`): authorized `decide` before the body is read; the
   * body is capped like every other; 200 `{requestId, action}` once the answer is durable. Refused
   * with nothing logged: 404 `UNKNOWN_INPUT`, 409 `INPUT_ANSWERED` (the first answer wins), 400
   * `INVALID_INPUT` (with the `field` that does not fit) or `INVALID_ARGUMENT` (not an answer).
   */
  async function answerInput(req: Request, rawId: string, rawRequest: string): Promise<Response> {
    if (req.method.toUpperCase() !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'POST an answer', { allow: 'POST' })
    if (options.readOnly) throw new HttpError(405, 'READ_ONLY', 'this server only reads sessions (no agent runs here)', { allow: 'GET, HEAD' })
    const id = sessionId(rawId)
    await authorize(req, id, 'decide')
    let requestId: string
    try {
      requestId = decodeURIComponent(rawRequest)
    } catch {
      throw new HttpError(400, 'BAD_REQUEST', 'the request id is not valid URL encoding')
    }
    if (requestId === '' || requestId.length > 256) throw new HttpError(400, 'BAD_REQUEST', 'the request id must be 1–256 characters')
    const body = await readBody(req)
    if (!await sessions.exists(id)) throw new HttpError(404, 'SESSION_NOT_FOUND', 'no such session')
    try {
      await sessions.answer(id, requestId, body as InputAnswer)
    } catch (err) {
      throw inputError(err)
    }
    const action = (body as { action?: unknown }).action
    return new Response(JSON.stringify({ requestId, action }), { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } })
  }

  /**
   * A reconnect that names the last frame it got (`Last-Event-ID`: frame ids are seqs): the rest
   * of the message that frame belongs to, from the next seq on (also when its turn has ended
   * meanwhile); 204 when that message had nothing after it. An id this log never gave is a 400.
   */
  async function afterLastEvent(req: Request, id: string, raw: string, hold: (release: () => void) => void): Promise<Response> {
    const bad = (): HttpError => new HttpError(400, 'BAD_LAST_EVENT_ID', 'Last-Event-ID must be the id of a frame this chat sent')
    if (!/^\d{1,15}$/.test(raw.trim())) throw bad()
    const seq = Number(raw.trim())
    if (!await sessions.exists(id)) throw bad()
    const tail = await sessions.tail(id, hold)
    if (seq >= tail.events.length) throw bad()
    const place = messageAt(tail.events, seq)
    if (place === null) throw bad()
    if (place.endedAt !== null && place.endedAt <= seq) return new Response(null, { status: 204 })
    return chatStreamResponse(req, tail, () => ({ kind: 'turn', index: place.start }), { from: seq + 1, decided: new Set(), announce: false })
  }

  const handler = (async (req: Request): Promise<Response> => {
    const cors = corsHeaders(req)
    if (req.method.toUpperCase() === 'OPTIONS') {
      if (Object.keys(cors).length === 0) return errorResponse(new HttpError(403, 'CORS_ORIGIN', 'this origin is not allowed'))
      return new Response(null, {
        status: 204,
        headers: { ...cors, 'access-control-allow-methods': 'GET, HEAD, POST', 'access-control-allow-headers': req.headers.get('access-control-request-headers') ?? 'content-type', 'access-control-max-age': '600' },
      })
    }
    const method = req.method.toUpperCase()
    // every answer, errors included: never sniffed as another type; a GET's body is not for other
    // sites' no-cors embeds (CORS reads are governed by `cors` alone) (Durable Streams §10)
    const secure: Record<string, string> = { 'x-content-type-options': 'nosniff', ...(method === 'GET' || method === 'HEAD' ? { 'cross-origin-resource-policy': 'same-origin' } : {}) }
    // the sessions this request reads are held until it is answered (a stream holds its own)
    const holds: Array<() => void> = []
    try {
      const res = await route(req, (release) => holds.push(release))
      for (const [k, v] of Object.entries({ ...secure, ...cors })) res.headers.set(k, v)
      return res
    } catch (err) {
      const e = asHttp(err)
      if (e.status >= 500 && !(err instanceof HttpError && err.code === 'AUTHORIZE_FAILED')) report(err instanceof HttpError && err.cause !== undefined ? err.cause : err)
      return errorResponse(e, { ...secure, ...cors })
    } finally {
      for (const release of holds) release()
    }
  }) as SessionHandler
  handler.close = () => sessions.close()
  handler.held = () => sessions.held()
  return handler
}
