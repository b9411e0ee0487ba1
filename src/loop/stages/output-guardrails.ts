import { asyncScheduler, concatMap, type Observable, type SchedulerLike } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { type AgentMessage, type AssistantMessage, textOf } from '../../types/message.js';
import { hookError } from '../kernel/ask-hook.js';
import { firstTrip, type Guardrail, type GuardrailFailure, type OutputGuardrailContext } from '../guardrails.js';
import { type LoopOutput, type LoopStage, loopStage, type LoopState } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface OutputGuardrailsOptions {
  /** What a guardrail that throws, fails or answers no verdict counts as (default `trip`); either way a `HookError` reports it. */
  onError?: 'trip' | 'pass';
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * Checks the run's final answer with the output guardrails, all at once, before `AgentEnd` (put it
 * after the turns, before `endRun`): the last assistant message when it ended in `stop`, its text,
 * and the structured output when `config.output` validated one. The first to trip ends the run as
 * `guardRail` (`stoppedBy` on `AgentEnd`), with a `GuardrailTripped` event, and withholds the
 * structured output; the answer stays in the conversation as it was shown. A guardrail that throws
 * or fails emits a `HookError` (hook `guardrail`) and trips, or with `onError: 'pass'`, passes. A
 * run that ended without an answer (aborted, failed, stopped by a guardrail or a stop condition)
 * passes through unchecked.
 *
 * Contract: per input state, HookErrors and a GuardrailTripped event if one tripped, then the
 * state, ended `guardRail` on a trip.
 *
 * ```
 * source:   --s------|          (s: a run that ended with an answer that names a card number)
 * outputGuardrails([{ name: 'pii', check: ({ text }) => ({ tripwire: /\d{16}/.test(text) }) }])
 * output:   --(Gs')--|          (G: GuardrailTripped, s': { ...s, ended: 'guardRail', stoppedBy })
 * ```
 *
 * @example
 * loopStages(startRun(), admitPrompts(), repeatTurns(turn, { more: (s) => !s.ended }), outputGuardrails([noSecrets]), endRun());
 */
export function outputGuardrails(guardrails: readonly Guardrail<OutputGuardrailContext>[], options: OutputGuardrailsOptions = {}): LoopStage {
  const scheduler = options.scheduler ?? asyncScheduler;
  const onError = options.onError ?? 'trip';
  return loopStage((state) => {
    const answer = guardrails.length === 0 ? undefined : answerOf(state);
    if (!answer) return state;
    const events: AgentEvent[] = [];
    const failed: GuardrailFailure = (kind, name, message) => events.push(hookError('guardrail', state.loopId, `${kind} guardrail "${name}" failed: ${message}`, scheduler.now()));
    const output = state.output?.status === 'valid' ? { output: state.output.value } : {};
    const ctx: OutputGuardrailContext = { answer, text: textOf(answer), messages: state.messages, ...output };
    return firstTrip('output', guardrails, ctx, onError, failed).pipe(
      concatMap((t): LoopOutput[] => {
        if (!t) return [...events, state];
        const info = t.info !== undefined ? { info: t.info } : {};
        const tripped: AgentEvent = {
          type: 'GuardrailTripped', loopId: state.loopId, turnIndex: Math.max(0, state.turnIndex - 1), guardrail: t.guardrail, kind: 'output', timestamp: scheduler.now(),
          ...info, ...(t.error !== undefined ? { error: t.error } : {}),
        };
        return [...events, tripped, stateWith(state, { ended: 'guardRail', output: undefined, stoppedBy: { kind: 'guardrail', guardrail: t.guardrail, stage: 'output', ...info } })];
      }),
    ) as Observable<LoopOutput>;
  });
}

/** The run's final answer: its last assistant message, when the run ended with it (`stop`). */
function answerOf(state: LoopState): AssistantMessage | undefined {
  if (state.ended !== 'stop' && state.ended !== undefined) return undefined;
  if (state.stoppedBy !== undefined) return undefined;
  const added: readonly AgentMessage[] = state.newMessages ?? state.messages;
  for (let i = added.length - 1; i >= 0; i--) {
    const m = added[i]!;
    if (m.role === 'assistant') return m.stopReason === 'stop' ? m : undefined;
    if (m.role !== 'extension') return undefined;
  }
  return undefined;
}
