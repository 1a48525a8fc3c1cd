/**
 * The log format as JSON Schema (draft 2020-12), generated from the zod definitions the reader
 * validates with (events/data.ts, events/envelope.ts, events/jsonl/header.ts), so the published
 * schema and the code cannot say different things: `turnlog schema` writes these files and a test
 * compares them with the copies checked into docs/spec/schema/ (docs/spec/README.md says how the
 * files are laid out and how another implementation uses them).
 *
 * The schema is the shape of a line and nothing more: a line it accepts may still be refused by a
 * reader for what JSON Schema cannot say (seq equal to the line's index, the L invariants of
 * docs/spec/invariants.md, -0, lone surrogates, the nesting limit, the CRC: docs/spec/events.md).
 * Pure: no I/O.
 */
import { z } from 'zod'
import { EVENT_DATA } from './data.js'
import { Envelope, SurfaceOp } from './envelope.js'
import { JSONL_FORMAT, LogHeader } from './jsonl/header.js'
import { StreamChunk } from './chunks.js'
import { AssistantMessage, Block, Failure, MessageSource, ProviderData, ToolErrorInfo, ToolResultMessage, Usage, UserMessage } from './messages.js'

/** A JSON Schema document (a plain JSON object). */
export type JsonSchemaDocument = Record<string, unknown>

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

/** Shapes used by many event types: named definitions (`$defs`) rather than inlined copies. */
function sharedNames(): Array<[string, z.ZodType]> {
  return [
    ['Block', Block], ['ProviderData', ProviderData], ['UserMessage', UserMessage], ['MessageSource', MessageSource],
    ['AssistantMessage', AssistantMessage], ['ToolResultMessage', ToolResultMessage], ['Usage', Usage],
    ['Failure', Failure], ['ToolError', ToolErrorInfo], ['StreamChunk', StreamChunk], ['SurfaceOp', SurfaceOp],
  ]
}

/** `turn/start` → `TurnStart`, `agent/inbox/spliced` → `AgentInboxSpliced`: the `$defs` name of a type's data. */
export function dataDefName(type: string): string {
  return type.split(/[/-]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('') + 'Data'
}

/** `tool/approval-requested` → `tool-approval-requested`: the file name (without `.schema.json`) of a type. */
export function typeFileSlug(type: string): string {
  return type.replace(/\//g, '-')
}

function convert(schema: z.ZodType, extra: Array<[string, z.ZodType]> = []): JsonSchemaDocument {
  const metadata = z.registry<{ id: string }>()
  for (const [id, s] of [...sharedNames(), ...extra]) if (!metadata.has(s)) metadata.add(s, { id })
  // io 'input': the shape a line must have to be accepted (the schemas have no transforms, so
  // input and output agree; input is the honest name for what a reader checks)
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', metadata, unrepresentable: 'throw', cycles: 'ref', reused: 'inline' }) as JsonSchemaDocument
}

/** The core event types in the order of events/data.ts. */
export function coreEventTypes(): string[] {
  return Object.keys(EVENT_DATA)
}

/** The header line of a JSONL log. */
export function headerJsonSchema(): JsonSchemaDocument {
  const s = convert(LogHeader)
  return {
    $schema: DRAFT,
    title: `turnlog JSONL header (format ${JSONL_FORMAT})`,
    description: 'Line 1 of a turnlog JSONL log (docs/spec/events.md "The JSONL file"). A reader refuses a header whose format is newer than the one it reads (docs/spec/versioning.md).',
    ...withoutDraft(s),
  }
}

/** The envelope alone: what every event line has, whatever its type (`data` unconstrained). */
export function envelopeJsonSchema(): JsonSchemaDocument {
  const s = convert(Envelope)
  return {
    $schema: DRAFT,
    title: 'turnlog event envelope',
    description: 'Every event line (docs/spec/events.md "The envelope"); `data` is constrained per type by event.schema.json.',
    ...lineSchema(s),
  }
}

/**
 * One event line of any type: the envelope, the data schema of its type (`$defs/<Type>Data`), and
 * for a type outside the core vocabulary, `ignorable: true` (a reader skips such an event; one
 * without it is refused).
 */
export function eventJsonSchema(): JsonSchemaDocument {
  const types = coreEventTypes()
  const named = types.map((t) => [dataDefName(t), EVENT_DATA[t as keyof typeof EVENT_DATA]] as [string, z.ZodType])
  // one document: every data schema a named definition, shared shapes named once
  const all = convert(z.strictObject(Object.fromEntries(named)), named)
  const env = lineSchema(convert(Envelope))
  const defs = { ...(env.$defs as Record<string, unknown> | undefined), ...(all.$defs as Record<string, unknown> | undefined) }
  return {
    $schema: DRAFT,
    title: `turnlog log event (format ${JSONL_FORMAT})`,
    description: 'One event line of a turnlog log (docs/spec/events.md). The shape only: seq order and the L invariants are checked by `turnlog verify` (docs/spec/invariants.md).',
    ...env,
    allOf: [
      { if: { properties: { type: { enum: types } } }, else: { properties: { ignorable: { const: true } }, required: ['ignorable'] } },
      ...types.map((t) => ({
        if: { properties: { type: { const: t } } },
        then: { properties: { data: { $ref: `#/$defs/${dataDefName(t)}` } } },
      })),
    ],
    $defs: sortKeys(defs),
  }
}

/** One file per core type: the whole event (envelope with `type` fixed, and its data). */
export function typeJsonSchema(type: string): JsonSchemaDocument {
  const data = EVENT_DATA[type as keyof typeof EVENT_DATA]
  if (data === undefined) throw new Error(`not a core event type: ${type}`)
  const s = convert(Envelope.extend({ type: z.literal(type), data }))
  return {
    $schema: DRAFT,
    title: `turnlog event ${type}`,
    description: `An event of type ${type} (docs/spec/events.md).`,
    ...lineSchema(s),
  }
}

/**
 * Every schema file, by path relative to the schema folder: `header.schema.json`,
 * `envelope.schema.json`, `event.schema.json` and `events/<type>.schema.json` per core type.
 * The text of each file is `schemaFileText(doc)`.
 */
export function logJsonSchemas(): Record<string, JsonSchemaDocument> {
  const out: Record<string, JsonSchemaDocument> = {
    'header.schema.json': headerJsonSchema(),
    'envelope.schema.json': envelopeJsonSchema(),
    'event.schema.json': eventJsonSchema(),
  }
  for (const t of coreEventTypes()) out[`events/${typeFileSlug(t)}.schema.json`] = typeJsonSchema(t)
  return out
}

/** The bytes of a schema file: two-space JSON and a final newline. */
export function schemaFileText(doc: JsonSchemaDocument): string {
  return JSON.stringify(doc, null, 2) + '\n'
}

/**
 * Without zod's `$schema` (ours comes first), and with the record's `crc` member: a JSONL line of a
 * log whose header says `"checksums":"crc32"` ends in it (docs/spec/events.md "The JSONL file").
 * The codec checks and strips it before the envelope is validated, so zod's envelope never sees it;
 * a schema for lines has to allow it.
 */
function lineSchema(s: JsonSchemaDocument): JsonSchemaDocument {
  const { $schema: _drop, ...rest } = s
  const properties = rest.properties as Record<string, unknown>
  return { ...rest, properties: { ...properties, crc: CRC } }
}

const CRC = {
  type: 'string',
  pattern: '^[0-9a-f]{8}$',
  description: 'CRC-32 of the record without this member, eight lowercase hex digits (only in a log whose header says checksums: crc32)',
}

function withoutDraft(s: JsonSchemaDocument): JsonSchemaDocument {
  const { $schema: _drop, ...rest } = s
  return rest
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)))
}
