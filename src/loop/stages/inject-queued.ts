import { asyncScheduler, concat, concatMap, defer, EMPTY, from, of, type Observable, type SchedulerLike } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import type { AgentMessage } from '../../types/message.js';
import type { InputFilter } from '../../types/hooks.js';
import { filterInput } from '../../operators/filter-input.js';
import { type LoopOutput, type LoopStage, loopStage, type LoopState, type StepOutputs } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface InjectQueuedOptions {
  /** Checked on every queued user message; a rejected message is announced (`InputRejected`) and dropped. */
  filters?: readonly InputFilter[];
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * The loop's "inject queued input" stage: when a state arrives, takes what is queued (steering,
 * follow-ups: `take(state)` is called then, which is the spec's checkpoint) and appends it to the state's
 * `pending` messages, each user message through the input filters one at a time. A rejected
 * message is dropped and announced with `InputRejected`; the others still go in. A state whose run
 * has ended passes through and nothing is taken.
 *
 * Contract: per input state, one `InputRejected` per refused message, then the state with the
 * admitted messages appended to `pending` (the same state when nothing was queued).
 *
 * ```
 * take:     a, then b x           (x: refused by a filter)
 * source:   --s-----t--|
 * injectQueued(take, { filters })
 * output:   --s'----(rt')--|      (s': pending + a, r: InputRejected, t': pending + b)
 * ```
 *
 * @example
 * const steering = new MessageQueue();
 * of(state).pipe(injectQueued(() => steering.take().map((q) => q.message), { filters: [noSecrets] }));
 */
export function injectQueued(take: (state: LoopState) => readonly AgentMessage[], options: InjectQueuedOptions = {}): LoopStage {
  const filters = options.filters ?? [];
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => (state.ended ? state : admitQueued(state, take(state), filters, scheduler)));
}

/**
 * The state with `queued` appended to `pending`, each user message through the input filters one
 * at a time (a refused one is dropped and announced with `InputRejected`). Synchronous when there
 * are no filters.
 */
export function admitQueued(state: LoopState, queued: readonly AgentMessage[], filters: readonly InputFilter[], scheduler: SchedulerLike): StepOutputs {
  if (queued.length === 0) return state;
  if (filters.length === 0) return stateWith(state, { pending: [...state.pending, ...queued] });
  return defer(() => {
    const admitted: AgentMessage[] = [];
    const verdicts$ = from(queued).pipe(
      concatMap((message) => of([message]).pipe(filterInput(filters))),
      concatMap((verdict): Observable<AgentEvent> => {
        if (verdict.action === 'pass') {
          admitted.push(...verdict.messages);
          return EMPTY;
        }
        return of({ type: 'InputRejected', loopId: state.loopId, reason: verdict.reason, timestamp: scheduler.now() });
      }),
    );
    return concat(verdicts$, defer(() => of<LoopOutput>(stateWith(state, { pending: [...state.pending, ...admitted] }))));
  });
}
