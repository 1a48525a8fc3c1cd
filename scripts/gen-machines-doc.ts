/**
 * `npm run docs:machines`: regenerates the diagrams and tables of docs/machines.md from the machine
 * definitions (see scripts/machines-doc.ts). `--check` writes nothing and exits 1 when the document
 * is stale, for use before a commit.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { regenerate } from './machines-doc.js'

const path = fileURLToPath(new URL('../docs/machines.md', import.meta.url))
const before = readFileSync(path, 'utf8')
const after = regenerate(before)
if (process.argv.includes('--check')) {
  if (after !== before) {
    console.error('docs/machines.md is stale: run `npm run docs:machines`')
    process.exit(1)
  }
  console.log('docs/machines.md is up to date')
} else if (after !== before) {
  writeFileSync(path, after)
  console.log('docs/machines.md regenerated')
} else {
  console.log('docs/machines.md already up to date')
}
