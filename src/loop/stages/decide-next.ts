import { asyncScheduler, concatMap, isObservable, of, type SchedulerLike } from 'rxjs';
import type { AgentMessage } from '../../types/message.js';
import type { InputFilter, PolicyVerdict, PostLoopPolicy } from '../../types/hooks.js';
import { askHook } from '../kernel/ask-hook.js';
import { admitQueued } from './inject-queued.js';
import { asObservable, isLoopState, type LoopStage, loopStage, type LoopState, type StepOutputs, signalOf } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface DecideNextOptions {
  /** Whether steering waits to be taken (it asks for another turn). */
  steeringPending?(state: LoopState): boolean;
  /** Takes the queued follow-ups, asked only when nothing else asks for a turn. */
  followUp?(state: LoopState): readonly AgentMessage[];
  /** Checked on every follow-up; a refused one is announced (`InputRejected`) and dropped. */
  filters?: readonly InputFilter[];
  /** Asked, one after the other, when the run would end: `inject` queues messages for another turn, `stop` ends it. */
  postLoop?: readonly PostLoopPolicy[];
  /** The caller's abort signal: once aborted, the run ends (`aborted`) (default: the state's `run.signal`). */
  signal?: AbortSignal;
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

const CONTINUE: PolicyVerdict = { action: 'continue' };

/**
 * Decides, at the end of a turn, whether another one runs: yes for tool results to answer,
 * pending messages or waiting steering; else the queued follow-ups are taken (through the input
 * filters), and with none the post-loop policies are asked (`inject` queues messages, `stop` ends;
 * one that fails emits a `HookError`). With nothing to do, the run ends (`ended`: the last stop
 * reason); an aborted signal or a requested stop ends it at once. Put it last in the turn and
 * repeat the turn while the state has not ended: `repeatTurns(turn, { more: (s) => !s.ended })`.
 *
 * Contract: per input state, InputRejected / HookError events, then the state with follow-ups or
 * injected messages in `pending`, or with `ended` set.
 *
 * ```
 * source:   --t----e----|       (t: tool results to answer; e: nothing left, no follow-up)
 * decideNext({ followUp })
 * output:   --t----e'---|       (e': { ...e, ended: e.lastStopReason })
 * ```
 *
 * @example
 * const followUps = new MessageQueue();
 * repeatTurns(loopStages(turn, decideNext({ followUp: () => followUps.take().map((q) => q.message) })), { more: (s) => !s.ended });
 */
export function decideNext(options: DecideNextOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const filters = options.filters ?? [];
  const policies = options.postLoop ?? [];
  const end = (state: LoopState): LoopState => stateWith(state, { ended: state.lastStopReason ?? 'stop' });
  const ask = (index: number, state: LoopState): StepOutputs => {
    const policy = policies[index];
    if (!policy || state.ended || state.pending.length > 0) return state;
    const ctx = { messages: state.messages, newMessages: state.newMessages ?? [] };
    return askHook('postLoop', state.loopId, () => policy(ctx), CONTINUE, scheduler, (verdict) => {
      if (verdict.action === 'inject') return ask(index + 1, stateWith(state, { pending: [...state.pending, ...verdict.messages] }));
      return ask(index + 1, verdict.action === 'stop' ? end(state) : state);
    });
  };
  const afterPolicies = (state: LoopState): LoopState => (state.ended || state.pending.length > 0 ? state : end(state));
  const settle = (state: LoopState): StepOutputs => (state.pending.length > 0 ? state : then(ask(0, state), afterPolicies));
  return loopStage((state) => {
    if (signalOf(options, state)?.aborted && !state.ended) return stateWith(state, { ended: 'aborted' });
    if (state.ended) return state;
    if (state.stopRequested !== undefined) return end(state);
    if ((state.toolResults?.length ?? 0) > 0 || state.pending.length > 0 || options.steeringPending?.(state)) return state;
    const followUps = options.followUp?.(state) ?? [];
    const admitted = admitQueued(state, followUps, filters, scheduler);
    return then(admitted, settle);
  });
}

/** Continues a step's outputs with `next` on the state they leave. */
function then(outputs: StepOutputs, next: (state: LoopState) => StepOutputs): StepOutputs {
  if (!Array.isArray(outputs) && !isObservable(outputs)) return next(outputs as LoopState);
  return asObservable(outputs).pipe(concatMap((o) => (isLoopState(o) ? asObservable(next(o)) : of(o))));
}
