/**
 * The Durable Streams protocol's own conformance suite (`@durable-streams/server-conformance-tests`
 * 0.3.6, run as its CLI runs it: vitest over its test runner with `CONFORMANCE_TEST_URL`) against
 * `GET/HEAD /sessions/:id` of a read-only handler. Only the tests that never create or append to a
 * stream can apply to a server whose streams are written by agents alone, and whose content is
 * session events (docs/decisions/durable-streams-conformance.md says which run and why); those
 * must all pass, and the run must select exactly them.
 */
import { spawn } from 'node:child_process'
import { writeFileSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sessionHandler, type SessionHandler } from '../../http/index.js'
import { jsonlStore } from '../../stores/jsonl/index.js'
import { allow, serve, tempDir, type Served } from './helpers.js'

/** The suite's tests that read without creating or appending first (every other one PUTs or POSTs a stream). */
export const READ_ONLY_TESTS: ReadonlyArray<readonly [suite: string, test: string]> = [
  ['HEAD Metadata', 'should return 404 for non-existent stream'],
  ['Offset Validation and Resumability', 'should return 404 for offset=now on non-existent stream'],
  ['Offset Validation and Resumability', 'should return 404 for offset=now with long-poll on non-existent stream'],
  ['Offset Validation and Resumability', 'should return 404 for offset=now with SSE on non-existent stream'],
  ['Browser Security Headers', 'should include security headers on error responses'],
  ['Caching and ETag', 'should allow If-None-Match in CORS preflight responses'],
]

const require = createRequire(import.meta.url)
const RUNNER = join(dirname(require.resolve('@durable-streams/server-conformance-tests')), 'test-runner.js')
const VITEST = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs')

let tmp: ReturnType<typeof tempDir>
let handler: SessionHandler
let served: Served

beforeAll(async () => {
  tmp = tempDir()
  // the suite's streams live at /v1/stream/<name>: the handler's /sessions/<id>, nothing else changed
  handler = sessionHandler({ store: jsonlStore(tmp.dir), authorize: allow, readOnly: true, cors: { origins: ['https://example.com'] } })
  const rewrite = Object.assign(async (req: Request) => {
    const url = new URL(req.url)
    if (url.pathname.startsWith('/v1/stream/')) url.pathname = `/sessions/${url.pathname.slice('/v1/stream/'.length)}`
    return handler(new Request(url, req))
  }, { close: handler.close, held: handler.held }) as SessionHandler
  served = await serve(rewrite)
})
afterAll(async () => {
  await served?.close()
  await handler?.close()
  tmp?.remove()
})

describe('Durable Streams conformance, read side (the protocol\'s own suite)', () => {
  it('every read test of @durable-streams/server-conformance-tests that applies to a read-only server passes', async () => {
    const config = join(tmp.dir, 'conformance.vitest.config.mjs')
    const report = join(tmp.dir, 'conformance.json')
    writeFileSync(config, `export default { test: { root: ${JSON.stringify(dirname(RUNNER))}, include: ['test-runner.js'], testTimeout: 30000 } }\n`)
    const pattern = READ_ONLY_TESTS.map(([suite, test]) => `${suite} ${test}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')
    // a child process (this one serves the requests meanwhile): the suite as its own CLI runs it
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, CONFORMANCE_TEST_URL: served.url }
      for (const k of Object.keys(env)) if (k.startsWith('VITEST')) delete env[k]
      const child = spawn(process.execPath, [VITEST, 'run', '--config', config, '-t', `(${pattern})$`, '--reporter=json', `--outputFile=${report}`], { env, stdio: ['ignore', 'ignore', 'pipe'] })
      let stderr = ''
      child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
      child.on('close', (code) => resolve({ code, stderr }))
    })
    const out = JSON.parse(readFileSync(report, 'utf8')) as { testResults: Array<{ assertionResults: Array<{ ancestorTitles: string[]; title: string; status: string; failureMessages: string[] }> }> }
    const results = out.testResults.flatMap((f) => f.assertionResults).filter((a) => a.status !== 'skipped' && a.status !== 'pending')
    const name = (a: { ancestorTitles: string[]; title: string }) => `${a.ancestorTitles.at(-1)} > ${a.title}`
    expect(results.map(name).sort(), `exit ${r.code}: ${r.stderr.slice(-2000)}`).toEqual(READ_ONLY_TESTS.map(([suite, test]) => `${suite} > ${test}`).sort())
    for (const a of results) expect(a.status, `${name(a)}: ${a.failureMessages.join('\n')}`).toBe('passed')
  }, 150_000)
})
