import { asyncScheduler, concat, of, type SchedulerLike } from 'rxjs';
import type { AgentEndEvent } from '../../types/events.js';
import type { LoopHooks } from '../../types/hooks.js';
import { Usage } from '../../types/usage.js';
import { askHook } from '../kernel/ask-hook.js';
import { outputFields } from '../../output/output-spec.js';
import { type LoopStage, loopStage, type LoopState, signalOf } from '../kernel/loop-state.js';

export interface EndRunOptions {
  /** Called after AgentEnd with the run's new messages and usage; a failure emits a HookError. */
  afterLoop?: LoopHooks['afterLoop'];
  /** The caller's abort signal: when aborted, the run ends as `aborted` whatever else ended it (default: the state's `run.signal`). */
  signal?: AbortSignal;
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * Closes a run: `AgentEnd` with the run's `newMessages`, its `usage`, the reason it ended (`ended`,
 * else the last assistant message's stop reason; `aborted` when the signal is) and a `rejection`,
 * then calls the `afterLoop` hook (a failure emits a `HookError`).
 *
 * Contract: per input state, AgentEnd (and a HookError), then the state, unchanged.
 *
 * ```
 * source:   --s-------|
 * endRun({ afterLoop })
 * output:   --(es)----|          (e: AgentEnd)
 * ```
 *
 * @example
 * state$.pipe(loopStages(startRun(ids), admitPrompts(prompts), repeatTurns(turn), endRun({ afterLoop: (messages) => save(messages) })));
 */
export function endRun(options: EndRunOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const { afterLoop } = options;
  return loopStage((state) => {
    const end = agentEnd(state, signalOf(options, state), scheduler.now());
    if (!afterLoop) return [end, state];
    const usage = state.usage ?? Usage.empty();
    return concat(of(end), askHook<void>('afterLoop', state.loopId, () => afterLoop(state.newMessages ?? [], usage), undefined, scheduler, () => state));
  });
}

function agentEnd(state: LoopState, signal: AbortSignal | undefined, timestamp: number): AgentEndEvent {
  return {
    type: 'AgentEnd',
    loopId: state.loopId,
    messages: state.newMessages ? state.newMessages.slice() : [],
    usage: { ...(state.usage ?? Usage.empty()) },
    timestamp,
    stopReason: signal?.aborted ? 'aborted' : (state.ended ?? state.lastStopReason ?? 'stop'),
    ...(state.rejection !== undefined ? { rejection: state.rejection } : {}),
    ...(state.stoppedBy !== undefined ? { stoppedBy: state.stoppedBy } : {}),
    ...outputFields(state.output),
  };
}
