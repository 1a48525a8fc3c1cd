/** The modules `turnlog eval` loads in the tests: the weather tool of the goldens, and a model under test that never calls it. */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

const ZOD = JSON.stringify(join(process.cwd(), 'node_modules', 'zod', 'index.js'))
const TOOLS = `import { z } from ${ZOD}
export const tools = [{
  name: 'weather', description: 'Current weather for a city', isConcurrencySafe: () => true,
  parameters: z.object({ city: z.string(), unit: z.string().optional() }),
  execute: ({ city }) => ({ city, tempC: city.length + 10 }),
}]
`
// a model under test that answers every request with the same text
const MODEL = `export const model = {
  async *stream() {
    yield { type: 'block-start', index: 0, blockType: 'text' }
    yield { type: 'text-delta', index: 0, text: 'I cannot check the weather.' }
    yield { type: 'block-end', index: 0 }
    yield { type: 'finish', reason: 'stop' }
  },
}
`

/** Writes `tools.mjs` and `model.mjs` into `dir`; returns their paths. */
export function writeEvalModules(dir: string): { tools: string; model: string } {
  const tools = join(dir, 'tools.mjs')
  const model = join(dir, 'model.mjs')
  writeFileSync(tools, TOOLS)
  writeFileSync(model, MODEL)
  return { tools, model }
}
