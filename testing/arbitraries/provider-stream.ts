/** The fuzzer's provider responses (issue 23): a stream plan rendered as a real provider would stream it. */
import fc from 'fast-check'
import type { StreamChunk } from '../../events/chunks.js'
import { arbStreamPlan, renderStream } from './blocks.js'

/**
 * A complete answer as a real provider streams it, with no call for turnlog to run (issue 23):
 * text (some with citations), thinking (some signed, some redacted), sources, files and
 * provider-executed calls with their results, finishing `stop` or (half the time) `refusal`. The
 * fuzzer plays it as a scripted response.
 */
export function arbProviderStream(): fc.Arbitrary<StreamChunk[]> {
  return fc.record({ plan: arbStreamPlan({ types: ['text', 'reasoning', 'whole'], maxBlocks: 4 }), refuse: fc.boolean() })
    .map(({ plan, refuse }) => renderStream({ ...plan, refusal: plan.refusal ?? {} }, refuse ? 'refusal' : 'stop'))
}
