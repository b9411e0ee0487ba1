import { asyncScheduler, concatMap, from, of, type SchedulerLike } from 'rxjs';
import type { AgentMessage } from '../../types/message.js';
import type { InputFilter } from '../../types/hooks.js';
import { filterInput } from '../../operators/filter-input.js';
import { type LoopOutput, type LoopStage, loopStage } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface AdmitPromptsOptions {
  /** Checked on every prompt (`filterInput`): the first refusal refuses them all and ends the run. */
  filters?: readonly InputFilter[];
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * The run's prompts through the input filters into `pending`: all of them (warnings appended to
 * their text), or, when a filter refuses one, none: `InputRejected` is emitted and the run ends
 * (`ended: 'stop'`, `rejection` set). A state whose run has ended passes through.
 *
 * Contract: per input state, the state with the prompts appended to `pending`; or `InputRejected`
 * and the state with `ended` and `rejection` set. `prompts` left out (`undefined`): the state's
 * own, `run.prompts` (what `agentLoop` sets), or none — one `admitPrompts()` serves every run.
 *
 * ```
 * source:   --s-------|          (a filter refuses one prompt)
 * admitPrompts(prompts, { filters })
 * output:   --(rs')---|          (r: InputRejected, s': { ...s, ended: 'stop', rejection })
 * ```
 *
 * @example
 * of(loopState('loop-1', history)).pipe(admitPrompts([userMessage('hi')], { filters: [noSecrets] }));
 */
export function admitPrompts(prompts?: readonly AgentMessage[], options: AdmitPromptsOptions = {}): LoopStage {
  const filters = options.filters ?? [];
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => {
    if (state.ended) return state;
    const admitted = prompts ?? state.run?.prompts ?? [];
    if (filters.length === 0) return admitted.length === 0 ? state : stateWith(state, { pending: [...state.pending, ...admitted] });
    if (admitted.length === 0) return state;
    return of(admitted).pipe(
      filterInput(filters),
      concatMap((verdict) =>
        from<LoopOutput[]>(
          verdict.action === 'pass'
            ? [stateWith(state, { pending: [...state.pending, ...verdict.messages] })]
            : [
                { type: 'InputRejected', loopId: state.loopId, reason: verdict.reason, timestamp: scheduler.now() },
                stateWith(state, { ended: 'stop', rejection: verdict.reason }),
              ],
        ),
      ),
    );
  });
}
