export { turnMachine, type TurnMachine, type TurnContext, type TurnEvent, type TurnInput, type ProposalKind } from './turn.js'
export { stepMachine, type StepMachine, type StepContext, type StepEvent, type StepInput } from './step.js'
export { inboxMachine, spliceKeepsIdsUnique, type InboxMachine, type InboxContext, type InboxEvent, type InboxInput, type SpliceEvent } from './inbox.js'
export {
  callMachine, type CallContext, type CallEvent, type CallInput, type CallState, type PreVerdict, type ExecutionMode,
} from './call.js'
