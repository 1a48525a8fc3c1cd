import { createAgent } from '/work/main/dist/agent/index.js'
import v8 from 'node:v8'
const model = { info: { name: 'bench' }, async *stream() { yield { type: 'finish', reason: 'stop' } } }
const agents = []
globalThis.gc(); const b = process.memoryUsage().heapUsed
for (let i = 0; i < 2000; i++) agents.push(createAgent({ model, system: 'bench', retry: false }))
globalThis.gc(); console.log('KB/agent', ((process.memoryUsage().heapUsed - b) / 2000 / 1024).toFixed(2))
v8.writeHeapSnapshot('/work/main/tmpprof/h.heapsnapshot')
