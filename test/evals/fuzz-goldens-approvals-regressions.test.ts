/**
 * P4 for goldens with approvals: counterexamples the approvals property found on random seeds,
 * each replayed exactly (its seed and shrunk path).
 */
import fc from 'fast-check'
import { describe, it } from 'vitest'
import { approvalsReproduce } from './approval-runs.js'

const cases: { seed: number; path: string; what: string }[] = [
  {
    seed: 392312382, path: '32:0:0:0:0:0:0:0:0:0:1:0:2:0:2:8:8:8:8',
    what: 'an inject while parked (a next-step send that does not wake) is not re-issued as a steer: the open request is not superseded',
  },
  {
    seed: 970568751, path: '1:0:0:0:0:1:0:1:1:0:0:0:0:0:0:1:2:0:1:2:7:6:7:8:8:8:6',
    what: 'an inject while parked, then a person approves: approved, not superseded',
  },
  {
    seed: 980300003, path: '6:0:0:0:0:0:0:0:1:0:1:2:2:2:5:6:7:7:7:7:7:7',
    what: 'an inject and a followup while parked: the request stays open for the person',
  },
  {
    seed: 938791077, path: '11:0:0:0:3:2:2:2:2:2:3:2:5:4:4:10:8:8:8',
    what: 'a steer after a `tools` step while the pre-step listeners wait, then a reject (`blocked`): the steer is issued after the claim and stays pending',
  },
  {
    seed: 515943978, path: '25:0:0:0:0:0:0:0:0:0:0:0:0:1:4:7:6:8:13:13:13:13',
    what: 'a steer supersedes the parked request, a cancel clears the inbox before the denied pair: the next (asked) call is ABORTED_BEFORE_DISPATCH',
  },
  {
    seed: 1287895711, path: '85:3:2:6:5:5:8:8:11:10:10:10:10:10:10:10:10:10:10:10:10:12:11:11:14:1:10:10:10',
    what: 'a long golden (25 turns of a cycling script, 100 parks, each decided) is recorded to its end and re-runs equal',
  },
  {
    seed: 1145134089, path: '259:0:0:0:0:0:0:1:2:1:2:2:4:7:5:5',
    what: 'a cancel while pre-execute decides `ask`: the request is decided `canceled` at once, the step never parks',
  },
  {
    seed: 1241066186, path: '147:1:0:3:2:4:4:5:5:5:5:5:5:5:5:5:5:6:6:6:6:7:8',
    what: 'a decision re-issued right after the park: the agent is running again at once (not parked while the next call starts), so the driver does not flush later inputs into the step',
  },
  {
    seed: 1997684145, path: '57:0:0:0:0:1:0:1:1:0:0:0:0:0:0:0:3:2:3:5:4:4:11:11:11:11',
    what: 'a cancel while the only pool slot\'s body runs and answers anyway: the deferred call is ABORTED_BEFORE_DISPATCH',
  },
  {
    seed: 457230189, path: '100:6:8:1:4:4:4:4:5:4:4:5:4:4:4:4:4:6:5:6:6:6:6:6:6:8',
    what: 'a body settled early to free a slot: its commit waits until the next call\'s approval request is logged, as in the golden',
  },
  {
    seed: 998929474, path: '291:0:0:0:0:0:1:0:0:1:1:4:3:12:12:10:10:10:10:10',
    what: 'a cancel while parked after a body started, its output logged after the cancel: the cancel waits for that body to start',
  },
  {
    seed: 952250528, path: '181:6:4:4:4:3:3:3:3:3:3:3:3:3:4:4:4:10:9:9:9:9',
    what: 'a cancel while pre-execute decides `ask` and another call\'s request is open: the hook answers, its request is decided `canceled`',
  },
  {
    seed: 1145087176, path: '278:2:1:1:1:1:5:8:6:6:6:6:8:7:8:15:17:18:18:18:15:15:15',
    what: 'an empty steer after a `tools` step while step 2\'s pre-step waits, which then throws (`error {HOOK_ERROR}` naming agent/pre-step): the steer is issued after the empty claim and stays pending',
  },
]

describe('P4 for goldens with approvals: the fuzz counterexamples, replayed', () => {
  for (const c of cases) {
    it(`P4: ${c.what} (seed ${c.seed})`, async () => {
      await fc.assert(approvalsReproduce(), { seed: c.seed, path: c.path, endOnFailure: true })
    })
  }
})
