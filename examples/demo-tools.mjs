// The tools and hooks of `turnlog demo`, for re-executing a demo log against today's code:
//   npm run demo -- --store demo.jsonl
//   npx turnlog reexec demo.jsonl --tools examples/demo-tools.mjs
// (dist/ is built by `npm ci`; run `npm run build` after changing the sources.)
import { demoHooks, demoTools } from '../dist/cli/demo-session.js'

export const tools = demoTools()
export const hooks = demoHooks
