// The tools (and the change under test) for `turnlog eval examples/goldens`:
//   npx turnlog eval examples/goldens --model recorded --tools examples/goldens/tools.mjs
//   npx turnlog eval examples/goldens --model examples/goldens/terse-model.mjs --tools examples/goldens/tools.mjs --junit junit.xml
// (in the repository, `turnlog` resolves to this package itself: dist/, built by `npm ci`; run
// `npm run build` after changing the sources. Copied into an app, it resolves to the installed package.)
import { z } from 'zod'
import { defineTool } from 'turnlog'
import { noInvariantBroken, sameFinalAnswer, sameToolSequence } from 'turnlog/evals'

export const tools = [
  defineTool({
    name: 'weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string() }),
    // not called with `toolResults: 'recorded'` (the default): the golden's results are served
    execute: async ({ city }) => ({ city, tempC: 21 }),
  }),
]

// the change under test: a new system prompt
export const system = 'You are a helpful assistant. Answer in one short sentence.'

export const graders = [noInvariantBroken(), sameToolSequence(), sameFinalAnswer()]
