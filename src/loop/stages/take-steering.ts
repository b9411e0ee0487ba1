import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { AgentMessage } from '../../types/message.js';
import type { InputFilter } from '../../types/hooks.js';
import { admitQueued } from './inject-queued.js';
import { type LoopStage, loopStage, type LoopState } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface TakeSteeringOptions {
  /** Checked on every steering message; a refused one is announced (`InputRejected`) and dropped. */
  filters?: readonly InputFilter[];
  /** Take nothing when this turn already took steering (spec 003's checkpoint 1 after checkpoint 6: a one-at-a-time queue hands over one message per turn). */
  oncePerTurn?: boolean;
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * A steering checkpoint (spec 003): when a state arrives, takes the steering messages queued now
 * into `pending`, through the input filters, and notes the turn that took them (`steeredAt`). Put
 * one at loop re-entry (checkpoint 6, the start of a turn) and one after `beforeTurnHook`, before
 * the model call (checkpoint 1, `oncePerTurn`). A state whose run has ended passes through and
 * nothing is taken.
 *
 * Contract: per input state, an `InputRejected` per refused message, then the state with the
 * admitted messages appended to `pending` and `steeredAt` set (the same state when nothing was taken).
 *
 * ```
 * take:     a, then b
 * source:   --s----t--|           (s, t: the same turn)
 * takeSteering(take, { oncePerTurn: true })
 * output:   --s'---t--|           (s': pending + a, steeredAt: s.turnIndex; t: nothing taken, b stays queued)
 * ```
 *
 * @example
 * const steering = new MessageQueue('one-at-a-time');
 * const turn = loopStages(takeSteering(() => steering.take().map((q) => q.message)), startTurn(), buildRequest(request), callModel({ provider }), endTurn());
 */
export function takeSteering(take: (state: LoopState) => readonly AgentMessage[], options: TakeSteeringOptions = {}): LoopStage {
  const filters = options.filters ?? [];
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => {
    if (state.ended || (options.oncePerTurn && state.steeredAt === state.turnIndex)) return state;
    const taken = take(state);
    if (taken.length === 0) return state;
    return admitQueued(stateWith(state, { steeredAt: state.turnIndex }), taken, filters, scheduler);
  });
}
