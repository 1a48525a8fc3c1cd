// A child process for the two-writers test: reads commands on stdin, one per line.
//   open ID       → tries store.open(ID, 'write'); prints "WON ID token" or "LOST ID CODE"
//   append ID N   → the winner appends N copies of a turn-less splice event at its length; prints "APPENDED ID length"
//   close ID      → closes the handle; prints "CLOSED ID"
// argv: LIB (compiled turnlog) DIR (store directory)
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import { join } from 'node:path'

const [lib, dir] = process.argv.slice(2)
const { jsonlStore } = await import(pathToFileURL(join(lib, 'stores/jsonl/index.js')).href)
const store = jsonlStore(dir)
const handles = new Map()
const out = (s) => process.stdout.write(s + '\n')

function splice(seq, id) {
  return {
    seq, time: 1, type: 'agent/inbox/spliced',
    data: { target: 'next-turn', start: seq, inserted: [{ id: `${id}-${process.pid}-${seq}`, role: 'user', content: [{ type: 'text', text: 'x' }], source: { kind: 'user' } }] },
  }
}

out('READY')
for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, id, arg] = line.trim().split(' ')
  try {
    if (cmd === 'open') {
      const w = await store.open(id, 'write')
      handles.set(id, w)
      out(`WON ${id} ${w.token}`)
    } else if (cmd === 'append') {
      const w = handles.get(id)
      const n = Number(arg)
      const events = []
      for (let i = 0; i < n; i++) events.push(splice(w.length + i, id))
      await w.append(events, { expectedSeq: w.length })
      out(`APPENDED ${id} ${w.length}`)
    } else if (cmd === 'close') {
      await handles.get(id)?.close()
      handles.delete(id)
      out(`CLOSED ${id}`)
    }
  } catch (err) {
    out(`LOST ${id} ${err?.code ?? 'UNCODED:' + String(err?.message ?? err)}`)
  }
}
