/**
 * `turnlog schema [-o DIR]`: the log format as JSON Schema (draft 2020-12), generated from the zod
 * definitions the reader validates with (events/json-schema.ts). Without `-o` it prints
 * `event.schema.json` (one event line of any type); with `-o DIR` it writes every file —
 * `header.schema.json`, `envelope.schema.json`, `event.schema.json`, `events/<type>.schema.json` —
 * and removes `events/*.schema.json` files of types the code no longer has, so DIR is exactly what
 * the code says (`npm run docs:schema` regenerates docs/spec/schema/ this way).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { logJsonSchemas, schemaFileText } from '../../events/json-schema.js'
import { EXIT_OK } from '../errors.js'
import { writeHuman, type CliIo } from '../io.js'

export interface SchemaCommandOptions {
  output?: string
}

export async function schemaCommand(opts: SchemaCommandOptions, io: CliIo): Promise<number> {
  const files = logJsonSchemas()
  if (opts.output === undefined) {
    io.stdout(schemaFileText(files['event.schema.json']!))
    return EXIT_OK
  }
  const dir = resolve(io.cwd ?? process.cwd(), opts.output)
  mkdirSync(join(dir, 'events'), { recursive: true })
  for (const [rel, doc] of Object.entries(files)) writeFileSync(join(dir, rel), schemaFileText(doc))
  const stale = readdirSync(join(dir, 'events')).filter((f) => f.endsWith('.schema.json') && files[`events/${f}`] === undefined)
  for (const f of stale) rmSync(join(dir, 'events', f))
  writeHuman(io, [`wrote ${Object.keys(files).length} schema files to ${opts.output}${stale.length ? ` (removed ${stale.length} stale: ${stale.join(', ')})` : ''}`])
  return EXIT_OK
}
