// The tools and hooks of `turnlog demo`, for re-executing a demo log against today's code:
//   npx turnlog demo --store demo.jsonl
//   npx turnlog reexec demo.jsonl --tools node_modules/turnlog/examples/demo-tools.mjs
// (in the repository: --tools examples/demo-tools.mjs; dist/ is built by `npm ci`, rebuilt by
// `npm run build` after changing the sources)
import { demoHooks, demoTools } from '../dist/cli/demo-session.js'

export const tools = demoTools()
export const hooks = demoHooks
