// The tools and hooks of `turnlog demo`, for re-executing a demo log against today's code:
//   npx turnlog demo --store demo.jsonl
//   npx turnlog reexec demo.jsonl --tools node_modules/turnlog/examples/demo-tools.mjs
// (in the repository: --tools examples/demo-tools.mjs, after `npm ci` or `npm run build`). The
// same definitions as the demo's (cli/demo-session.ts); test/cli/reexec-demo.test.ts re-executes
// a demo log with this file and gets it identical. It imports the package by name, so a copy of
// it works in your app.
import { z } from 'zod'
import { defineTool } from 'turnlog'

const TEMPS = {
  paris: { tempC: 21, sky: 'sunny' },
  tokyo: { tempC: 18, sky: 'light rain' },
}

export const tools = [
  defineTool({
    name: 'weather',
    description: 'Current weather for a city',
    parameters: z.object({ city: z.string() }),
    isConcurrencySafe: () => true,
    execute: async ({ city }) => ({ city, ...(TEMPS[city.toLowerCase()] ?? { tempC: 15, sky: 'cloudy' }) }),
  }),
  defineTool({
    name: 'search',
    description: 'Search the web (slow)',
    parameters: z.object({ query: z.string() }),
    isConcurrencySafe: () => true,
    execute: async ({ query }, { signal }) => {
      await new Promise((resolve, reject) => {
        const h = setTimeout(resolve, 40)
        signal.addEventListener('abort', () => {
          clearTimeout(h)
          reject(signal.reason)
        }, { once: true })
      })
      return { query, results: ['Open-air cinema, Parc de la Villette (Paris)', 'Tea ceremony workshop, indoors (Tokyo)'] }
    },
  }),
]

// The demo's hook: refuse any prompt that mentions the forbidden word (the turn ends `blocked`).
export const hooks = {
  'agent/pre-step': async (p, next) => {
    const text = p.messages.flatMap((m) => m.content.map((b) => (b.type === 'text' ? b.text : ''))).join(' ')
    if (text.toLowerCase().includes('password')) return { kind: 'reject', reason: "mentions 'password'" }
    return next()
  },
}
