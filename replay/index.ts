export { verify, type VerifyOptions, type VerifyResult } from './verify.js'
export { replay, stateAt, type ReplayState } from './replay.js'
export {
  readLog, readLogStream, isLogHeader, type ReadLogOptions, type ReadLogResult, type ReadLogSummary,
} from './read-log.js'
export { writeLog, type WriteLogOptions, type WriteLogResult } from './write-log.js'
export { LogHeader, type TornTail } from '../events/jsonl.js'
