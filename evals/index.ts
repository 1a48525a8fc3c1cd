/** turnlog/evals: golden sessions — recorded sessions re-run as regression tests and evals (api.md "Golden sessions"). */
export { rerun } from './rerun.js'
export { recordedModel, type RecordedModelOptions } from './model.js'
export { loadGolden } from './golden.js'
export { canonicalArguments, callKey } from './canonical.js'
export type {
  Golden, GoldenInput, ReissuedInput, RerunDivergence, RerunFrom, RerunOptions, RerunResult, StepAt, StepModel, ToolCallAt,
  ToolMock, ToolSequenceEntry, UsageDelta,
} from './types.js'
