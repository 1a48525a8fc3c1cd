// Placeholder until the checker lands (being written now); keeps the tree compiling.
import type { LogEvent } from '../envelope.js'
import type { CheckerOptions, Violation } from './types.js'

export class LogChecker {
  constructor(_opts: CheckerOptions = {}) {}
  check(_e: LogEvent): Violation[] {
    return []
  }
  apply(_e: LogEvent): void {}
}
