import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { TurnTrigger } from '../../types/config.js';
import { type AgentMessage, isExtension, withTurnId } from '../../types/message.js';
import { announce, type LoopOutput, type LoopStage, loopStage, type LoopState, recordInto, turnCleared } from '../kernel/loop-state.js';

export interface TurnBoundsOptions {
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

export interface StartTurnOptions extends TurnBoundsOptions {
  /** What turn 0 is triggered by (`TurnStart.triggeredBy`; default: the state's `run.firstTrigger`, else `user`); later turns are `continuation`. */
  firstTrigger?: TurnTrigger;
}

/**
 * Opens a turn: `TurnStart`, then the state's `pending` messages enter the context (each tagged
 * with the turn and announced with MessageStart / MessageEnd), and last turn's model call and tool
 * results are cleared. A state whose run has ended passes through untouched.
 *
 * Contract: per input state, TurnStart and a MessageStart/MessageEnd pair per pending message, then
 * the state with `pending` moved into `messages` and `request`, `partial`, `assistant`, `failure`,
 * `toolResults` and `stopRequested` cleared.
 *
 * ```
 * source:   --s--------|          (s: turnIndex 0, one pending prompt p)
 * startTurn()
 * output:   --(tabs')--|          (t: TurnStart 0, a/b: MessageStart/End of p, s': messages + p)
 * ```
 *
 * @example
 * of(loopState('loop-1', [], [userMessage('hi')])).pipe(startTurn()).subscribe(console.log);
 */
export function startTurn(options: StartTurnOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const firstTrigger = options.firstTrigger;
  return loopStage((state) => {
    if (state.ended) return state;
    const { loopId, turnIndex } = state;
    const timestamp = scheduler.now();
    const triggeredBy = turnIndex > 0 ? 'continuation' : (firstTrigger ?? state.run?.firstTrigger ?? 'user');
    const out: LoopOutput[] = [{ type: 'TurnStart', loopId, turnIndex, timestamp, triggeredBy }];
    const added: AgentMessage[] = [];
    for (const m of state.pending) {
      const stored = isExtension(m) ? m : withTurnId(m, { loopId, turnIndex });
      added.push(stored);
      out.push(...announce(loopId, stored, timestamp));
    }
    const next = turnCleared(state);
    next.pending = [];
    out.push(recordInto(next, added));
    return out;
  });
}
