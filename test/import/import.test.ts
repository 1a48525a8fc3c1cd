/**
 * turnlog/import and `turnlog import`: each format's vendored sample (test/fixtures/import/SOURCES.md)
 * becomes a log whose transcript is the source conversation, that passes verify (L1–L9 among
 * them), and that replay, report and export read; bad input gets a coded error naming file, line
 * and field.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { TurnlogError } from '../../events/errors.js'
import { importLog, type ImportedLog } from '../../import/index.js'
import { readLog } from '../../replay/read-log.js'
import { cli, ROOT, tempDir } from '../cli/helpers.js'

const FIX = 'test/fixtures/import'
const read = (f: string): string => readFileSync(join(ROOT, FIX, f), 'utf8')

type Entry = [string, ...unknown[]]

/** The conversation as the log says it: user and assistant text, calls in order, results in call order. */
function logTranscript(log: ImportedLog): { said: Entry[]; results: Entry[] } {
  const said: Entry[] = []
  const results: Entry[] = []
  for (const e of log.events) {
    const d = e.data as { message?: { role: string; content: Array<Record<string, unknown>>; callId?: string; isError?: true } }
    if (e.type === 'user/message') for (const b of d.message!.content) said.push(['user', b.text])
    if (e.type === 'request/header') said.push(['system', (e.data as { system: string }).system])
    if (e.type === 'assistant/message') {
      for (const b of d.message!.content) {
        if (b.type === 'text' || b.type === 'reasoning') said.push([b.type, b.text])
        if (b.type === 'tool-call') said.push(['call', b.id, b.name, JSON.parse(b.arguments as string)])
        if (b.type === 'tool-result') results.push(['result', b.id, b.result, b.isError === true])
      }
    }
    if (e.type === 'tool/result') {
      const m = d.message!
      results.push(['result', m.callId, (m.content[0] as { text: string }).text, m.isError === true])
    }
  }
  return { said, results }
}

/**
 * Imports a sample through the CLI, then verify (with its children), replay, report, export and
 * eval run on it; `children` receives the child logs written beside it.
 */
async function importAndUse(format: string, file: string, children?: (logs: ImportedLog[], importOut: string) => void): Promise<ImportedLog> {
  const { dir, cleanup } = tempDir()
  try {
    const out = join(dir, 'out.jsonl')
    const r = await cli(['import', format, join(FIX, file), '-o', out])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const v = await cli(['verify', out, '--children'])
    expect(v.stdout).toContain('every invariant holds')
    expect(v.stdout).not.toMatch(/violation|FAMILY_/)
    expect(v.code).toBe(0)
    const kids = readdirSync(dir).filter((f) => f !== 'out.jsonl').sort()
    const kidLogs: ImportedLog[] = []
    for (const k of kids) {
      const l = await readLog(join(dir, k))
      kidLogs.push({ header: l.header, events: [...l.events] } as ImportedLog)
    }
    children?.(kidLogs, r.stdout)
    const rep = await cli(['replay', out])
    expect(rep.code).toBe(0)
    const html = await cli(['report', out, '-o', join(dir, 'r.html')])
    expect(html.code).toBe(0)
    expect(readFileSync(join(dir, 'r.html'), 'utf8')).toContain('<html')
    for (const f of ['chrome-trace', 'otlp-json']) {
      const x = await cli(['export', out, '--format', f, ...(kids.length ? ['--children'] : [])])
      expect(x.code).toBe(0)
      expect(() => JSON.parse(x.stdout)).not.toThrow()
    }
    // the imported log is a golden: the recorded model re-streams its whole-block chunks
    const ev = await cli(['eval', dir, '--model', 'recorded'])
    expect(ev.stdout).toContain(`${kids.length + 1}/${kids.length + 1} goldens passed`)
    expect(ev.code).toBe(0)
    const log = await readLog(out)
    return { header: log.header, events: [...log.events] } as ImportedLog
  } finally {
    cleanup()
  }
}

describe('turnlog import ai-sdk-ui', () => {
  it('L1-L9: the vercel/ai UIMessage sample becomes a log whose transcript is the source conversation; verify, replay, report, export and eval run', async () => {
    const log = await importAndUse('ai-sdk-ui', 'ai-sdk-ui.json')
    // the expected conversation, read from the source's parts
    const src = JSON.parse(read('ai-sdk-ui.json')) as Array<{ role: string; parts: Array<Record<string, unknown>> }>
    const said: Entry[] = []
    const results: Entry[] = []
    for (const m of src) {
      for (const p of m.parts) {
        const t = p.type as string
        if (t === 'text') said.push([m.role === 'user' ? 'user' : 'text', p.text])
        if (t === 'reasoning') said.push(['reasoning', p.text])
        if (t === 'dynamic-tool' || t.startsWith('tool-')) {
          said.push(['call', p.toolCallId, t === 'dynamic-tool' ? p.toolName : t.slice(5), p.input])
          results.push(['result', p.toolCallId, p.output ?? p.errorText, p.state === 'output-error'])
        }
      }
    }
    expect(logTranscript(log)).toEqual({ said, results })
    // steps follow step-start: 4 + 1 + 2; the provider-executed call is not run by turnlog
    expect(log.events.filter((e) => e.type === 'step/start')).toHaveLength(7)
    expect(log.events.filter((e) => e.type === 'tool/call')).toHaveLength(6)
  })

  it('the header says where the log came from and what the source could not say; no usage or deltas are made up', () => {
    const log = importLog('ai-sdk-ui', read('ai-sdk-ui.json'), { file: 'ai-sdk-ui.json' })
    expect(log.header.imported).toEqual({ from: 'ai-sdk-ui', file: 'ai-sdk-ui.json', times: 'order', chunks: 'whole-blocks', usage: 'absent' })
    const chunks = log.events.filter((e) => e.type === 'assistant/chunk').map((e) => (e.data as { chunk: { type: string } }).chunk.type)
    expect(new Set(chunks)).toEqual(new Set(['block', 'finish']))
    expect(log.events.some((e) => (e.data as { usage?: unknown }).usage !== undefined)).toBe(false)
    // times are the order: createdAt + seq
    expect(log.events.every((e) => e.time === log.header.createdAt + e.seq)).toBe(true)
  })

  it('a call with no result in the source gets an error result that says so, and the turn ends interrupted', async () => {
    const msgs = [
      { id: 'u', role: 'user', parts: [{ type: 'text', text: 'go' }] },
      { id: 'a', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'tool-search', toolCallId: 'c1', state: 'approval-requested', input: { q: 'x' }, approval: { id: 'ap1' } }] },
    ]
    const log = importLog('ai-sdk-ui', JSON.stringify(msgs))
    const result = log.events.find((e) => e.type === 'tool/result')!.data as { message: { isError?: true; content: Array<{ text: string }> } }
    expect(result.message.isError).toBe(true)
    expect(result.message.content[0]!.text).toMatch(/^imported: the source has no result/)
    expect(log.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: { kind: 'interrupted' } } })
  })
})

describe('turnlog import openai-chat', () => {
  it('L1-L9: the openai-node Chat Completions sample becomes a log whose transcript is the source conversation (the system prompt in request/header)', async () => {
    const log = await importAndUse('openai-chat', 'openai-chat.json')
    const src = JSON.parse(read('openai-chat.json')) as { messages: Array<{ role: string; content: string }> }
    const said: Entry[] = src.messages.map((m) => [m.role === 'assistant' ? 'text' : m.role, m.content])
    expect(logTranscript(log)).toEqual({ said, results: [] })
    expect(log.header.imported?.from).toBe('openai-chat')
  })

  it('L5/L6: assistant tool_calls and the tool messages after them become tool/call + tool/result in the model\'s order', async () => {
    const messages = [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant', content: null, tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_b', content: '25C' },
      { role: 'tool', tool_call_id: 'call_a', content: '21C' },
      { role: 'assistant', content: 'Paris 21C, Rome 25C.' },
    ]
    const log = importLog('openai-chat', JSON.stringify(messages))
    expect(logTranscript(log)).toEqual({
      said: [['user', 'Weather in Paris and Rome?'], ['call', 'call_a', 'weather', { city: 'Paris' }], ['call', 'call_b', 'weather', { city: 'Rome' }], ['text', 'Paris 21C, Rome 25C.']],
      results: [['result', 'call_a', '21C', false], ['result', 'call_b', '25C', false]],
    })
    const { dir, cleanup } = tempDir()
    try {
      const { writeFileSync } = await import('node:fs')
      writeFileSync(join(dir, 'chat.json'), JSON.stringify(messages))
      expect((await cli(['import', 'openai-chat', join(dir, 'chat.json'), '-o', join(dir, 'o.jsonl')])).code).toBe(0)
      expect((await cli(['verify', join(dir, 'o.jsonl')])).code).toBe(0)
    } finally {
      cleanup()
    }
  })
})

describe('turnlog import openai-responses', () => {
  // written here from the Responses API's input item shapes (custom parts, string outputs); the
  // recorded samples are in the describe below (test/fixtures/import/SOURCES.md)
  const input = [
    { role: 'developer', content: 'Be brief.' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'record this' }] },
    { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Two calls.' }] },
    { type: 'function_call', call_id: 'call_a', name: 'record', arguments: '{"n":1}' },
    { type: 'function_call', call_id: 'call_b', name: 'record', arguments: '{}' },
    { type: 'function_call_output', call_id: 'call_a', output: 'first result' },
    { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: 'second result' }] },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'recorded' }] },
    { role: 'user', content: 'thanks' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'welcome' }] },
  ]

  it('L1-L9: messages, reasoning, function_call and function_call_output become turns and steps in order; verify, report and export run', async () => {
    const log = importLog('openai-responses', JSON.stringify(input))
    expect(logTranscript(log)).toEqual({
      said: [['system', 'Be brief.'], ['user', 'record this'], ['reasoning', 'Two calls.'], ['call', 'call_a', 'record', { n: 1 }], ['call', 'call_b', 'record', {}], ['text', 'recorded'], ['user', 'thanks'], ['text', 'welcome']],
      results: [['result', 'call_a', 'first result', false], ['result', 'call_b', 'second result', false]],
    })
    const { dir, cleanup } = tempDir()
    try {
      const { writeFileSync } = await import('node:fs')
      writeFileSync(join(dir, 'responses.json'), JSON.stringify({ model: 'gpt-5', input }))
      expect((await cli(['import', 'openai-responses', join(dir, 'responses.json'), '-o', join(dir, 'o.jsonl')])).code).toBe(0)
      expect((await cli(['verify', join(dir, 'o.jsonl')])).code).toBe(0)
      expect((await cli(['report', join(dir, 'o.jsonl'), '-o', join(dir, 'r.html')])).code).toBe(0)
      expect((await cli(['export', join(dir, 'o.jsonl'), '--format', 'otlp-json'])).code).toBe(0)
    } finally {
      cleanup()
    }
  })

  it('an output for a call no earlier item made is IMPORT_BAD_SHAPE naming the field', () => {
    const bad = [{ role: 'user', content: 'x' }, { type: 'function_call_output', call_id: 'zz', output: 'y' }]
    expect(catchErr(() => importLog('openai-responses', JSON.stringify(bad), { file: 'r.json' }))).toMatchObject({ code: 'IMPORT_BAD_SHAPE', file: 'r.json', field: '[1].call_id' })
  })
})

describe('turnlog import claude-code', () => {
  // written here from the session line shapes (user / assistant lines, message.content blocks); a
  // recorded session with sub-agents is vendored below (test/fixtures/import/SOURCES.md)
  const line = (o: unknown): string => JSON.stringify(o)
  const base = { sessionId: 's-1', isSidechain: false, cwd: '/p', version: '1.0.3' }
  const session = [
    line({ type: 'summary', summary: 'Config file', leafUuid: 'x' }),
    line({ ...base, type: 'user', uuid: 'u1', parentUuid: null, timestamp: '2025-05-26T07:27:40.079Z', message: { role: 'user', content: 'Add a config file' } }),
    line({ ...base, type: 'assistant', uuid: 'a1', timestamp: '2025-05-26T07:27:41.000Z', message: { id: 'msg_1', role: 'assistant', content: [{ type: 'thinking', thinking: 'Look first.' }] } }),
    line({ ...base, type: 'assistant', uuid: 'a2', timestamp: '2025-05-26T07:27:42.000Z', message: { id: 'msg_1', role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'LS', input: { path: '/p' } }] } }),
    line({ ...base, type: 'user', uuid: 'u2', timestamp: '2025-05-26T07:27:43.000Z', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'README.md' }] } }),
    line({ ...base, type: 'assistant', uuid: 'a3', isSidechain: true, message: { id: 'msg_side', role: 'assistant', content: [{ type: 'text', text: 'sub-agent' }] } }),
    line({ ...base, type: 'assistant', uuid: 'a4', timestamp: '2025-05-26T07:27:44.000Z', message: { id: 'msg_2', role: 'assistant', content: [{ type: 'text', text: 'Created config.json.' }] } }),
  ].join('\n') + '\n'

  it('L1-L9: user text, thinking, tool_use and tool_result lines become one turn of two steps; sidechain and summary lines are not the conversation', async () => {
    const log = importLog('claude-code', session, { file: 's.jsonl' })
    expect(logTranscript(log)).toEqual({
      said: [['user', 'Add a config file'], ['reasoning', 'Look first.'], ['call', 'toolu_1', 'LS', { path: '/p' }], ['text', 'Created config.json.']],
      results: [['result', 'toolu_1', 'README.md', false]],
    })
    expect(log.header).toMatchObject({ id: 's-1', createdAt: Date.parse('2025-05-26T07:27:40.079Z'), imported: { from: 'claude-code', times: 'order' } })
    const { dir, cleanup } = tempDir()
    try {
      const { writeFileSync } = await import('node:fs')
      writeFileSync(join(dir, 's.jsonl'), session)
      expect((await cli(['import', 'claude-code', join(dir, 's.jsonl'), '-o', join(dir, 'o.jsonl')])).code).toBe(0)
      expect((await cli(['verify', join(dir, 'o.jsonl')])).code).toBe(0)
      expect((await cli(['report', join(dir, 'o.jsonl'), '-o', join(dir, 'r.html')])).code).toBe(0)
      expect((await cli(['export', join(dir, 'o.jsonl'), '--format', 'chrome-trace'])).code).toBe(0)
    } finally {
      cleanup()
    }
  })

  it('a thinking block keeps its signature and a redacted_thinking block its data as provider data (sent back with the block, never shown)', () => {
    const text = [
      line({ ...base, type: 'user', uuid: 'u1', message: { role: 'user', content: 'hi' } }),
      line({ ...base, type: 'assistant', uuid: 'a1', message: { id: 'm1', role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig-1' }, { type: 'redacted_thinking', data: 'opaque' }, { type: 'text', text: 'Hello.' }] } }),
    ].join('\n')
    const msg = importLog('claude-code', text).events.find((e) => e.type === 'assistant/message')!.data as { message: { content: unknown[] } }
    expect(msg.message.content).toEqual([
      { type: 'reasoning', text: 'Hmm.', providerData: { anthropic: { signature: 'sig-1' } } },
      { type: 'reasoning', text: '', providerData: { anthropic: { redactedData: 'opaque' } } },
      { type: 'text', text: 'Hello.' },
    ])
  })

  it('a line that is not JSON is IMPORT_NOT_JSON naming its line; a message without content is IMPORT_BAD_SHAPE naming the field', () => {
    expect(catchErr(() => importLog('claude-code', session + '{torn', { file: 's.jsonl' }))).toMatchObject({ code: 'IMPORT_NOT_JSON', file: 's.jsonl', line: 8 })
    const bad = line({ type: 'user', message: { role: 'user', content: 7 } })
    expect(catchErr(() => importLog('claude-code', bad, { file: 's.jsonl' }))).toMatchObject({ code: 'IMPORT_BAD_SHAPE', line: 1, field: 'message.content' })
  })
})

describe('turnlog import openai-responses: recorded request bodies', () => {
  /** The conversation a Responses body says, read from its items the way the API documents them. */
  function responsesTranscript(body: { instructions?: string; input: Array<Record<string, unknown>> }): { said: Entry[]; results: Entry[] } {
    const said: Entry[] = []
    const results: Entry[] = []
    if (body.instructions) said.push(['system', body.instructions])
    const texts = (c: unknown): string[] => (typeof c === 'string' ? [c] : (c as Array<{ text: string }>).map((p) => p.text))
    for (const it of body.input) {
      const type = (it.type as string | undefined) ?? 'message'
      if (type === 'message' && it.role === 'user') for (const t of texts(it.content)) said.push(['user', t])
      if (type === 'message' && it.role === 'assistant') for (const t of texts(it.content)) if (t !== '') said.push(['text', t])
      if (type === 'reasoning') said.push(['reasoning', (it.summary as Array<{ text: string }>).map((x) => x.text).join('\n\n')])
      if (type === 'function_call') said.push(['call', it.call_id, it.name, JSON.parse(it.arguments as string)])
      if (type === 'function_call_output') results.push(['result', it.call_id, it.output, false])
    }
    return { said, results }
  }

  it('L1-L9: pydantic-ai\'s recorded gpt-5 body (instructions, encrypted reasoning, a commentary message, a call and its output, the final answer) becomes a log whose transcript is the source\'s; verify, replay, report, export and eval run', async () => {
    const log = await importAndUse('openai-responses', 'openai-responses-phase.json')
    const src = JSON.parse(read('openai-responses-phase.json')) as { instructions: string; input: Array<Record<string, unknown>> }
    expect(logTranscript(log)).toEqual(responsesTranscript(src))
    // the instructions are the system prompt of the first request
    expect(log.events.find((e) => e.type === 'request/header')?.data).toMatchObject({ system: src.instructions })
    // the encrypted reasoning is kept to send back, under the keys the AI SDK's OpenAI provider reads
    const reasoning = src.input.find((i) => i.type === 'reasoning')!
    const msg = log.events.find((e) => e.type === 'assistant/message')!.data as { message: { content: Array<Record<string, unknown>> } }
    expect(msg.message.content[0]).toEqual({ type: 'reasoning', text: '', providerData: { openai: { itemId: reasoning.id, reasoningEncryptedContent: reasoning.encrypted_content } } })
    expect(log.header.imported).toMatchObject({ from: 'openai-responses', times: 'order', usage: 'absent' })
  })

  it('L5/L6: pydantic-ai\'s recorded retry body (an empty assistant message, two parallel calls, both outputs) imports as one step with both calls and no empty text block', async () => {
    const log = await importAndUse('openai-responses', 'openai-responses-retry.json')
    const src = JSON.parse(read('openai-responses-retry.json')) as { instructions: string; input: Array<Record<string, unknown>> }
    expect(logTranscript(log)).toEqual(responsesTranscript(src))
    const first = log.events.find((e) => e.type === 'assistant/message')!.data as { message: { content: Array<{ type: string }> } }
    expect(first.message.content.map((b) => b.type)).toEqual(['tool-call', 'tool-call'])
    // an empty instructions string is no system prompt
    expect(log.events.some((e) => e.type === 'request/header')).toBe(false)
  })
})

describe('turnlog import claude-code: a recorded session with sub-agents', () => {
  type Line = { type: string; isSidechain?: boolean; parentUuid: string | null; message?: { content: string | Array<Record<string, unknown>> } }
  const lines = (): Line[] => read('claude-code-subagents.jsonl').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Line)

  /** What a thread's lines say: text, thinking, tool_use in order; tool_result in call order. */
  function threadTranscript(thread: Line[]): { said: Entry[]; results: Entry[] } {
    const said: Entry[] = []
    const byCall = new Map<string, Entry>()
    const calls: string[] = []
    for (const l of thread) {
      if (l.type !== 'user' && l.type !== 'assistant') continue
      const c = l.message!.content
      if (typeof c === 'string') {
        said.push([l.type === 'user' ? 'user' : 'text', c])
        continue
      }
      for (const b of c) {
        if (b.type === 'text') said.push([l.type === 'user' ? 'user' : 'text', b.text])
        if (b.type === 'thinking') said.push(['reasoning', b.thinking])
        if (b.type === 'tool_use') {
          said.push(['call', b.id, b.name, b.input])
          calls.push(b.id as string)
        }
        if (b.type === 'tool_result') {
          const text = typeof b.content === 'string' ? b.content : (b.content as Array<{ text: string }>).map((p) => p.text).join('')
          byCall.set(b.tool_use_id as string, ['result', b.tool_use_id, text, b.is_error === true])
        }
      }
    }
    return { said, results: calls.map((id) => byCall.get(id)!) }
  }

  /** The sidechain runs, each from its line without a parent to the next such line. */
  function runs(all: Line[]): Line[][] {
    const out: Line[][] = []
    for (const l of all.filter((x) => x.isSidechain === true)) {
      if (l.parentUuid === null) out.push([])
      out.at(-1)!.push(l)
    }
    return out
  }

  it('L1-L9, L19: the main thread is the log\'s transcript and each Task sub-agent is a child log (header names the parent, the child/spawned seq and the call; its transcript is the sidechain\'s); verify --children, replay, report, export and eval run', async () => {
    let kids: ImportedLog[] = []
    let printed = ''
    const log = await importAndUse('claude-code', 'claude-code-subagents.jsonl', (k, out) => {
      kids = k
      printed = out
    })
    const all = lines()
    expect(logTranscript(log)).toEqual(threadTranscript(all.filter((l) => l.isSidechain !== true)))
    const spawned = log.events.filter((e) => e.type === 'child/spawned') as Array<{ seq: number; data: { callId: string; child: string } }>
    const sidechains = runs(all)
    expect(spawned).toHaveLength(sidechains.length)
    expect(sidechains).toHaveLength(2)
    expect(printed).toContain('2 sub-agents as child logs beside it')
    for (const [i, s] of spawned.entries()) {
      const kid = kids.find((k) => k.header.id === s.data.child)!
      expect(kid.header.parent).toEqual({ session: log.header.id, seq: s.seq, callId: s.data.callId })
      expect(logTranscript(kid)).toEqual(threadTranscript(sidechains[i]!))
      // the child runs between its spawn and the call's result in the parent's order
      const result = log.events.find((e) => e.type === 'tool/result' && (e.data as { callId: string }).callId === s.data.callId)!
      expect(kid.events.every((e) => e.time >= log.events[s.seq]!.time && e.time < result.time)).toBe(true)
    }
    // the Task call the tool rejected (is_error, no prompt) ran no sub-agent: an error result, no child
    const failed = log.events.find((e) => e.type === 'tool/result' && (e.data as { message: { isError?: true } }).message.isError === true)!
    expect(spawned.some((s) => s.data.callId === (failed.data as { callId: string }).callId)).toBe(false)
    expect(log.header.createdAt).toBe(Date.parse('2025-09-07T09:52:03.071Z'))
  })

  it('L19: a sidechain run no Task call ran (its prompt is no call\'s) is left out and counted, and the log still verifies', async () => {
    const text = read('claude-code-subagents.jsonl').split('\n').map((l) => l.replace('"content":"Analyze the current project structure', '"content":"Something else entirely: Analyze the current project structure')).join('\n')
    const log = importLog('claude-code', text, { file: 's.jsonl' })
    expect(log.children).toHaveLength(1)
    expect(log.leftOut).toEqual({ sidechainLines: runs(lines())[1]!.length })
    const { dir, cleanup } = tempDir()
    try {
      const { writeFileSync } = await import('node:fs')
      writeFileSync(join(dir, 's.jsonl'), text)
      const r = await cli(['import', 'claude-code', join(dir, 's.jsonl'), '-o', join(dir, 'o.jsonl')])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain(`left out: ${runs(lines())[1]!.length} sidechain lines`)
      const v = await cli(['verify', join(dir, 'o.jsonl'), '--children'])
      expect(v.code).toBe(0)
    } finally {
      cleanup()
    }
  })
})

describe('bad input gets a coded error naming file, line and field', () => {
  it('not JSON: IMPORT_NOT_JSON with the file and the line', () => {
    const err = catchErr(() => importLog('openai-chat', '[\n{"role":"user","content":"hi"},\n{oops}\n]', { file: 'x.json' }))
    expect(err).toMatchObject({ code: 'IMPORT_NOT_JSON', file: 'x.json', line: 3 })
  })

  it('wrong shape: IMPORT_BAD_SHAPE with the file, the element\'s line and the field', () => {
    const text = '[\n  {"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]},\n  {"id":"a","role":"assistant","parts":{"type":"text"}}\n]'
    expect(catchErr(() => importLog('ai-sdk-ui', text, { file: 'ui.json' }))).toMatchObject({ code: 'IMPORT_BAD_SHAPE', file: 'ui.json', line: 3, field: '[1].parts' })
    const chat = '[\n{"role":"user","content":"hi"},\n{"role":"assistant","tool_calls":[{"id":"c","function":{"name":1,"arguments":"{}"}}]}\n]'
    expect(catchErr(() => importLog('openai-chat', chat, { file: 'c.json' }))).toMatchObject({ code: 'IMPORT_BAD_SHAPE', line: 3, field: '[1].tool_calls[0].function.name' })
    const stray = '[{"role":"tool","tool_call_id":"nope","content":"x"}]'
    expect(catchErr(() => importLog('openai-chat', stray))).toMatchObject({ code: 'IMPORT_BAD_SHAPE', field: '[0].tool_call_id' })
  })

  it('the CLI exits 2 with the code, and an unknown format is INVALID_ARGUMENT', async () => {
    const { dir, cleanup } = tempDir()
    try {
      const { writeFileSync } = await import('node:fs')
      writeFileSync(join(dir, 'bad.json'), 'not json')
      const r = await cli(['import', 'ai-sdk-ui', join(dir, 'bad.json'), '-o', join(dir, 'o.jsonl')])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('IMPORT_NOT_JSON')
      const f = await cli(['import', 'nope', join(dir, 'bad.json'), '-o', join(dir, 'o.jsonl')])
      expect(f.code).toBe(2)
      expect(f.stderr).toContain('INVALID_ARGUMENT')
    } finally {
      cleanup()
    }
  })
})

function catchErr(f: () => unknown): TurnlogError {
  try {
    f()
  } catch (e) {
    if (TurnlogError.is(e)) return e
    throw e
  }
  throw new Error('no error thrown')
}
