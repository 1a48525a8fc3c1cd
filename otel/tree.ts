/** A plain-text rendering of a span tree (for the CLI, tests and notes). */
import type { SpanRecord } from './log-to-spans.js'

const SHOWN = ['gen_ai.request.model', 'gen_ai.response.finish_reasons', 'gen_ai.usage.input_tokens', 'gen_ai.usage.output_tokens',
  'gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.reasoning.output_tokens', 'gen_ai.tool.call.id', 'error.type',
  'turnlog.seq.start', 'turnlog.seq.end']

/** One line per span, indented under its parent: name, kind, duration, the key attributes. */
export function renderSpanTree(spans: readonly SpanRecord[]): string[] {
  const children = new Map<string | undefined, SpanRecord[]>()
  const keys = new Set(spans.map((s) => s.key))
  for (const s of spans) {
    const parent = s.parentKey !== undefined && keys.has(s.parentKey) ? s.parentKey : undefined
    const list = children.get(parent) ?? []
    list.push(s)
    children.set(parent, list)
  }
  const lines: string[] = []
  const walk = (parent: string | undefined, depth: number): void => {
    for (const s of children.get(parent) ?? []) {
      const attrs = SHOWN.filter((k) => s.attributes[k] !== undefined)
        .map((k) => `${k.replace(/^gen_ai\.|^turnlog\./, '')}=${JSON.stringify(s.attributes[k])}`)
      const dur = s.endTime === undefined ? 'open' : `${s.endTime - s.startTime}ms`
      lines.push(`${'  '.repeat(depth)}${s.name} [${s.kind}, ${dur}${s.status.code === 'error' ? ', ERROR' : ''}] ${attrs.join(' ')}`)
      walk(s.key, depth + 1)
    }
  }
  walk(undefined, 0)
  return lines
}
