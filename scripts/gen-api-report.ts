/** `npm run api:report`: writes api/<entry>.api.md for every subpath export (scripts/api-report.ts). */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { apiReports } from './api-report.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const dir = join(root, 'api')
mkdirSync(dir, { recursive: true })
const reports = apiReports(root)
// a report whose subpath is gone goes too
for (const f of readdirSync(dir)) if (f.endsWith('.api.md') && !reports.has(f.slice(0, -'.api.md'.length))) rmSync(join(dir, f))
for (const [name, r] of reports) writeFileSync(join(dir, `${name}.api.md`), r.text)
console.log(`api/: ${reports.size} reports written`)
