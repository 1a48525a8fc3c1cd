/** `turnlog replay`: the transcript, the summary, `--at`, `--json`, and the errors for bad input. */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readLog } from '../../replay/read-log.js'
import { replay, stateAt } from '../../replay/replay.js'
import { ANSI, cli, ROOT, tempDir } from './helpers.js'

const WEATHER = 'examples/weather.jsonl'

describe('turnlog replay on examples/weather.jsonl', () => {
  it('prints the transcript grouped by turn and step, then the summary', async () => {
    const r = await cli(['replay', WEATHER])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    const lines = r.stdout.split('\n')
    expect(lines[0]).toBe('session example-weather · 26 events · examples/weather.jsonl')
    const body = r.stdout
    // order: turn, step 1 (user, assistant tool call, tool result, end), step 2, turn end, summary
    const order = [
      'Turn 1 #1',
      '  Step 1 #3',
      '    user       What is the weather in Paris? m1 #4',
      '    assistant  → weather({"city":"Paris"})  call_1 tool-calls #12',
      '    tool       weather call_1 ← {"city":"Paris","tempC":21} #14',
      '    └ step 1: tools · 42 in / 9 out #15',
      '  Step 2 #16',
      '    assistant  It is 21 °C in Paris. stop #23',
      '    └ step 2: stop · 71 in / 7 out / 40 cache-read #24',
      '  ■ turn 1 ended: completed #25',
      'Summary',
    ]
    let at = -1
    for (const l of order) {
      const i = lines.indexOf(l, at + 1)
      expect(i, `missing or out of order: ${l}\n${body}`).toBeGreaterThan(at)
      at = i
    }
    expect(lines).toContain('  turns        1 (1 completed)')
    expect(lines).toContain('  steps        2')
    expect(lines).toContain('  tool calls   1')
    expect(lines).toContain('  failures     0')
    expect(lines).toContain('  retries      0')
    expect(lines).toContain('  usage        2 request(s) · 113 in / 16 out / 40 cache-read')
    expect(lines).toContain('  events       26 · surface 4 · history 4 message(s)')
    expect(body).not.toMatch(ANSI)
  })

  it('colours only when asked (a TTY without NO_COLOR)', async () => {
    const r = await cli(['replay', WEATHER], { color: true })
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(ANSI)
    expect(r.stdout.replace(/\u001b\[[0-9;]*m/g, '')).toBe((await cli(['replay', WEATHER])).stdout)
  })

  it('--at SEQ prints the lifecycle position, pending calls, inbox and sizes as of SEQ', async () => {
    const mid = await cli(['replay', WEATHER, '--at', '13'])
    expect(mid.code).toBe(0)
    // --at stops reading after SEQ (issue 10 item 8): the log's length is not known, so not shown
    expect(mid.stdout).toContain('State as of seq 13 · tool/call')
    expect(mid.stdout).toContain('  position     in turn 1, step 1')
    expect(mid.stdout).toContain('  pending tool calls (1)')
    expect(mid.stdout).toContain('weather({"city":"Paris"}) call_1 #13')
    expect(mid.stdout).toContain('  surface      2 seq(s) · 0 replacement(s)')

    const first = await cli(['replay', WEATHER, '--at', '0'])
    expect(first.stdout).toContain('  position     idle (no turn open)')
    expect(first.stdout).toContain('  inbox next-turn 1 pending')
    expect(first.stdout).toContain('    m1 What is the weather in Paris?')

    const end = await cli(['replay', WEATHER, '--at', '25'])
    expect(end.stdout).toContain('  position     idle (no turn open)')
    expect(end.stdout).toContain('last ended: completed')
    expect(end.stdout).toContain('  pending tool calls  none')
    expect(end.stdout).toContain('  inbox next-turn 0 pending')
  })

  it('--json prints the replayed state; with --at, the state as of SEQ', async () => {
    const log = await readLog(join(ROOT, WEATHER))
    const all = await cli(['replay', WEATHER, '--json'])
    expect(all.code).toBe(0)
    expect(JSON.parse(all.stdout)).toEqual(JSON.parse(JSON.stringify(replay(log.events))))
    const at = await cli(['replay', WEATHER, '--json', '--at', '13'])
    const state = JSON.parse(at.stdout)
    expect(state).toEqual(JSON.parse(JSON.stringify(stateAt(log.events, 13))))
    expect(state.lifecycle.openStep).toBe(1)
    expect(state.lifecycle.pendingToolCalls.map((p: { callId: string }) => p.callId)).toEqual(['call_1'])
  })

  it('a bad --at is a usage error (exit 2)', async () => {
    const word = await cli(['replay', WEATHER, '--at', 'ten'])
    expect(word.code).toBe(2)
    expect(word.stderr).toContain("--at must be a non-negative integer, got 'ten'")
    const far = await cli(['replay', WEATHER, '--at', '26'])
    expect(far.code).toBe(2)
    expect(far.stderr).toContain('INVALID_ARGUMENT: seq 26 is out of range: the log has seqs 0..25')
    expect(far.stdout).toBe('')
  })
})

describe('turnlog replay on the fixtures', () => {
  const expected = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/expected.json'), 'utf8')) as Record<string, { ok: boolean }>
  const valid = Object.keys(expected).filter((k) => expected[k]!.ok)

  it('replays every valid fixture with a summary', async () => {
    expect(valid.length).toBeGreaterThan(10)
    for (const rel of valid) {
      const r = await cli(['replay', `test/fixtures/${rel}`])
      expect(r.code, `${rel}: ${r.stderr}`).toBe(0)
      expect(r.stdout, rel).toContain('\nSummary\n')
    }
  })

  it('marks compacted messages, the summary that replaced them, prunes and retries', async () => {
    const comp = await cli(['replay', 'test/fixtures/valid/compaction-summary.jsonl'])
    expect(comp.stdout).toMatch(/user {7}hello \[compacted by seq \d+\]/)
    expect(comp.stdout).toMatch(/⟲ compaction \S+/)
    expect(comp.stdout).toMatch(/summary {4}.*\[replaces seq \d+(, \d+)*\]/)
    expect(comp.stdout).toMatch(/compactions {2}1 \(1 replacement\(s\)\)/)

    const prune = await cli(['replay', 'test/fixtures/valid/compaction-prune.jsonl'])
    expect(prune.stdout).toMatch(/✂ pruned the result of \S+ \(seq \d+, \d+ chars\)/)
    expect(prune.stdout).toMatch(/\[pruned by seq \d+\]/)

    const retry = await cli(['replay', 'test/fixtures/valid/llm-retry.jsonl'])
    expect(retry.stdout).toMatch(/└ step 1: failed RATE_LIMIT/)
    expect(retry.stdout).toMatch(/↻ retry 1 of step 1\.1 after \d+ ms \(RATE_LIMIT\)/)
    expect(retry.stdout).toMatch(/Turn 2 \(retry of turn 1\)/)
    expect(retry.stdout).toMatch(/■ turn 1 ended: error RATE_LIMIT/)
    expect(retry.stdout).toMatch(/ {2}retries {6}3/)
  })
})

describe('turnlog replay on bad input: coded errors, exit 2', () => {
  const { dir, cleanup } = tempDir()
  afterAll(cleanup)
  const weather = readFileSync(join(ROOT, WEATHER), 'utf8')
  const file = (name: string, text: string | Buffer) => {
    const p = join(dir, name)
    writeFileSync(p, text)
    return p
  }

  const cases: Array<[string, () => string, string, RegExp]> = [
    ['a torn last line', () => file('torn.jsonl', weather.slice(0, weather.length - 40)), 'TORN_TAIL', /torn\.jsonl:27, seq 25/],
    ['malformed JSON mid-file', () => {
      const l = weather.split('\n')
      l[5] = '{"seq":4,"time":'
      return file('malformed.jsonl', l.join('\n'))
    }, 'MALFORMED_LINE', /malformed\.jsonl:6, seq 4/],
    ['no header', () => file('noheader.jsonl', weather.split('\n').slice(1).join('\n')), 'MISSING_HEADER', /noheader\.jsonl:1/],
    ['an empty file', () => file('empty.jsonl', ''), 'EMPTY_LOG', /empty\.jsonl/],
    ['a missing file', () => join(dir, 'nope.jsonl'), 'IO_ERROR', /nope\.jsonl/],
    ['an invalid event', () => file('invalid.jsonl', weather.replace('"step":2}}', '"step":"2"}}')), 'INVALID_EVENT', /invalid\.jsonl:18, seq 16, field data\.step/],
    ['a future format', () => file('future.jsonl', weather.replace('"format":1', '"format":9')), 'FUTURE_FORMAT', /future\.jsonl:1/],
  ]
  for (const [what, make, code, where] of cases) {
    it(`${what}: ${code}`, async () => {
      const r = await cli(['replay', make()])
      expect(r.code).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toContain(`error ${code}: `)
      expect(r.stderr).toContain(`code ${code}`)
      expect(r.stderr).toMatch(where)
    })
  }

  it('a checksum mismatch names the line, seq and field crc', async () => {
    const demo = join(dir, 'demo.jsonl')
    expect((await cli(['demo', '--store', demo])).code).toBe(0)
    const text = readFileSync(demo, 'utf8')
    expect(text).toContain('"crc":"')
    const bad = file('crc.jsonl', text.replace('hunter2', 'hunter3'))
    const r = await cli(['replay', bad])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/error CHECKSUM_MISMATCH: crc mismatch: .*crc\.jsonl:\d+, seq \d+, field crc/)
  })

  it('a store-url#session-id LOG of a kind turnlog has no store for is refused naming the ones it has', async () => {
    const r = await cli(['replay', 'mysql://host/db#session-42'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('INVALID_ARGUMENT')
    expect(r.stderr).toContain('the store URLs are postgres://…#session-id and sqlite:FILE#session-id')
    expect(r.stderr).toContain('code INVALID_ARGUMENT')
  })

  it('a sqlite:FILE#id LOG whose file does not exist is refused (never a new empty database)', async () => {
    const r = await cli(['replay', 'sqlite:///var/turnlog-missing.db#session-42'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('no such SQLite file')
  })

  it('a JSONL file whose name contains # is still read as a file', async () => {
    const p = file('a#b.jsonl', weather)
    const r = await cli(['replay', p])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('Turn 1')
  })
})

describe('turnlog replay: the blocks of the AI SDK bridge (issue 23)', () => {
  it('L9: signed thinking is marked, redacted thinking shown as such (never its data), a refusal with its explanation', async () => {
    const { createAgent } = await import('../../agent/agent.js')
    const { scriptedModel } = await import('../../models/scripted.js')
    const { jsonlStore } = await import('../../stores/jsonl/index.js')
    const tmp = tempDir()
    try {
      const agent = createAgent({
        model: scriptedModel([[
          { type: 'block-start', index: 0, blockType: 'reasoning' },
          { type: 'reasoning-delta', index: 0, text: 'Think first.' },
          { type: 'block-end', index: 0, providerData: { anthropic: { signature: 'SIG_NOT_PRINTED' } } },
          { type: 'block-start', index: 1, blockType: 'reasoning' },
          { type: 'block-end', index: 1, providerData: { anthropic: { redactedData: 'REDACTED_NOT_PRINTED' } } },
          { type: 'block-start', index: 2, blockType: 'text' },
          { type: 'text-delta', index: 2, text: 'I will not.' },
          { type: 'block-end', index: 2 },
          { type: 'finish', reason: 'refusal', explanation: 'Unsafe request.' },
        ]]),
        store: jsonlStore(tmp.dir),
        sessionId: 'refusal',
      })
      agent.followup('Do the unsafe thing.')
      await agent.whenIdle()
      await agent.flush()
      await agent.dispose()
      const r = await cli(['replay', join(tmp.dir, 'refusal.jsonl')])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toMatch(/thinking: Think first\. \[signed\]/)
      expect(r.stdout).toContain('thinking: [redacted, kept for the provider]')
      expect(r.stdout).toMatch(/I will not\. refusal: Unsafe request\. #\d+/)
      expect(r.stdout).not.toContain('SIG_NOT_PRINTED')
      expect(r.stdout).not.toContain('REDACTED_NOT_PRINTED')
    } finally {
      tmp.cleanup()
    }
  })
})


describe('turnlog replay: an interrupted message (issue 38.17)', () => {
  it('L9: shows [interrupted] and no finish (the log\'s finish of a cut-off message is no provider\'s)', async () => {
    const r = await cli(['replay', 'test/fixtures/valid/assistant-message.jsonl'])
    expect(r.code, r.stderr).toBe(0)
    const line = r.stdout.split('\n').find((l) => l.includes('Once upon'))!
    expect(line).toMatch(/assistant\s+Once upon \[interrupted\] #22$/)
    expect(line).not.toContain('stop')
    // a finished message keeps its finish
    expect(r.stdout).toMatch(/assistant\s+hi stop #11/)
  })
})
