/**
 * turnlog/compaction: the token meter, the tool-result pruner, the summariser and the two
 * triggers, as one agent plugin (docs/spec/lifecycle.md §7). Nothing in the spine imports this.
 *
 * ```ts
 * import { basicCompaction } from 'turnlog/compaction'
 * const compaction = basicCompaction({ contextWindow: 128_000 })
 * const agent = createAgent({ model, plugins: [compaction] })
 * await compaction.compactNow(agent)   // manual, from idle
 * ```
 */
export {
  basicCompaction, CompactionWarning,
  type CompactionOptions, type CompactionPlugin, type CompactionReport,
} from './plugin.js'
export {
  ContextMeter, createMeterReducer, measure, charTokenizer, estimateMessage, estimateHeader, textChars, usageInputTokens,
  CHARS_PER_TOKEN, MESSAGE_OVERHEAD_TOKENS, IMAGE_TOKENS,
  type Tokenizer, type MeterState, type MeterOptions, type Measurement, type NodeInfo,
} from './meter.js'
export { pruneToolResults, prunedText, prunedMessage, pruneMarker, MARKER_MAX_CHARS, type PruneOptions } from './prune.js'
export {
  summarise, chooseRange, DEFAULT_SUMMARY_INSTRUCTION, SUMMARY_PREFIX,
  type RangeOptions, type RangeChoice, type SummariseOptions, type SummariseResult,
} from './summarise.js'
export type { CompactionHost } from './host.js'
