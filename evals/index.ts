/** turnlog/evals: golden sessions — recorded sessions re-run as regression tests and evals (docs/spec/api.md "Golden sessions"). */
export { rerun } from './rerun.js'
export { recordedModel, type RecordedModelOptions } from './model.js'
export { loadGolden } from './golden.js'
export { canonicalArguments, callKey } from './canonical.js'
export type {
  Golden, GoldenInput, ReissuedInput, RerunDivergence, RerunFrom, RerunOptions, RerunResult, StepAt, StepModel, ToolCallAt,
  ToolMock, ToolSequenceEntry, UsageDelta,
} from './types.js'
export { evaluate } from './evaluate.js'
export {
  answersByTurn, costWithin, defaultGraders, finalAnswer, noDivergence, noInvariantBroken, noUnrecordedCalls, sameAnswers, sameFinalAnswer,
  sameToolResults, sameToolSequence,
} from './graders.js'
export { askedForApprovalBefore, type ToolMatch } from './approval-graders.js'
export { junitXml } from './junit.js'
export { passAtK, passHatK } from './stats.js'
export type {
  EvalReport, EvaluateOptions, GoldenReport, GoldenSet, GradedLog, Grader, GraderContext, GraderFn, GraderResult, GraderScore, Price,
  TrialResult,
} from './evaluate-types.js'
export { redactLog, type RedactKind, type Redactor } from './redact.js'
