export { verify, type VerifyOptions, type VerifyResult } from './verify.js'
export { replay, stateAt, type ReplayState } from './replay.js'
export {
  readLog, readLogStream, isLogHeader, type ReadLogOptions, type ReadLogResult, type ReadLogSummary,
} from './read-log.js'
export { writeLog, type WriteLogOptions, type WriteLogResult } from './write-log.js'
export { LogHeader, type TornTail } from '../events/jsonl.js'
export { repair, repairEvents, writeRepaired, type RepairOptions, type RepairResult, type WriteRepairedResult } from './repair.js'
export { fork, type ForkOptions, type ForkResult } from './fork.js'
export { computeClosers, type CloserReason, type CloserOptions } from './closers.js'
export { resumeAgent, wakePending, type ResumeOptions } from './resume.js'
export { planResume, applyResumePlan, type ResumePlan, type ResumePlanOptions } from './resume-plan.js'
export { reexecute, type ReexecuteOptions, type ReexecuteResult, type Divergence } from './reexecute.js'
export { repairSession, type RepairSessionResult } from './repair-session.js'
