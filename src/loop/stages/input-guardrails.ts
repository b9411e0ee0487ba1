import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import type { AgentEvent, StoppedBy } from '../../types/events.js';
import type { AssistantMessage } from '../../types/message.js';
import { Usage } from '../../types/usage.js';
import { firstTrip, type Guardrail, type GuardrailFailure, type InputGuardrailContext, type Trip } from '../guardrails.js';
import { hookError } from '../kernel/ask-hook.js';
import { keptPerRun } from '../kernel/kept-per-run.js';
import { directStage, type LoopStage, type LoopState, runStage, type StageSink } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface InputGuardrailsOptions {
  /** The model asked, named on the message a trip leaves. */
  model: { readonly id: string; readonly provider: string };
  /** What a guardrail that throws, fails or answers no verdict counts as (default `trip`); either way a `HookError` reports it. */
  onError?: 'trip' | 'pass';
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * The model-call stage `call` with input guardrails on the run's first call: the `blocking` ones
 * run first (all at once) and the call starts once they passed; the `parallel` ones (the default)
 * run beside the call, whose events go out as they come. The first guardrail to trip ends it all:
 * the call in flight is cut at once (its HTTP request aborted: nothing the model streams after
 * the trip goes out), `GuardrailTripped` is emitted, and the turn's message becomes
 * `[Stopped by guardrail: name]` (`stopReason` `guardRail`: closing the message that was
 * streaming, or announced anew), so that the turn ends the run (`guardRail`, with `stoppedBy` on
 * `AgentEnd`) and no tool of the model's runs; the run's later calls (a handoff's target's too) are
 * not checked. A call that ends before its parallel guardrails
 * waits for them (its tools run only once they passed). A guardrail that throws or fails emits a
 * `HookError` (hook `guardrail`) and trips, or with `onError: 'pass'`, passes. Later calls of the
 * run, and states without a request or whose run has ended, go straight to `call`.
 *
 * Contract: per input state, what `call` emits (up to a trip), HookErrors, and on a trip the
 * GuardrailTripped event and the stop message's MessageEnd (with a MessageStart when none was
 * open); then the state `call` left, or on a trip the state with the stop message as `assistant`
 * and `stoppedBy` set.
 *
 * ```
 * source:   s|                      (s: the run's first request; the model streams one delta every 10 ms)
 * inputGuardrails([{ name: 'topic', check: () => timer(25).pipe(map(() => ({ tripwire: true }))) }], callModel({ provider }), { model })
 * output:   a 9ms u 9ms u 4ms (Ge s')|     (a: MessageStart, u: MessageUpdate, G: GuardrailTripped, e: MessageEnd of the stop message)
 * ```
 *
 * @example
 * const call = inputGuardrails([{ name: 'on-topic', check: ({ prompts }) => classify(prompts), mode: 'parallel' }], callModel({ provider }), { model });
 * const turn = loopStages(startTurn(), buildRequest(request), call, settleCall({ model }), recordAssistant(), runToolCalls({ tools }), recordToolResults(), endTurn({ recorded: true }));
 */
export function inputGuardrails(guardrails: readonly Guardrail<InputGuardrailContext>[], call: LoopStage, options: InputGuardrailsOptions): LoopStage {
  const blocking = guardrails.filter((g) => g.mode === 'blocking');
  const parallel = guardrails.filter((g) => g.mode !== 'blocking');
  const setup: GuardSetup = { blocking, parallel, call, options, scheduler: options.scheduler ?? asyncScheduler };
  return directStage((state, sink) => {
    const guarded = guardedOf(state);
    if (guardrails.length === 0 || state.ended || !state.request || guarded.done) return runStage(call, state, sink);
    guarded.done = true;
    return new GuardedCall(setup, state, sink).start();
  });
}

/**
 * Whether a run's first call has been guarded, shared by every `inputGuardrails` stage: a recovery's
 * second call, and the first call of the agent a handoff hands the run to, are not checked again.
 */
const guardedOf = keptPerRun((): { done: boolean } => ({ done: false }));

interface GuardSetup {
  readonly blocking: readonly Guardrail<InputGuardrailContext>[];
  readonly parallel: readonly Guardrail<InputGuardrailContext>[];
  readonly call: LoopStage;
  readonly options: InputGuardrailsOptions;
  readonly scheduler: SchedulerLike;
}

/** One guarded call: the blocking checks, then the call beside the parallel ones, until all settle or one trips. */
class GuardedCall implements StageSink {
  private tripped = false;
  private closed = false;
  private checksPassed = false;
  private left: LoopState | undefined;
  /** The assistant message whose MessageStart is out and whose MessageEnd is not. */
  private open: AssistantMessage | undefined;
  private checks: Subscription | undefined;
  private stopCall: (() => void) | void = undefined;
  private readonly ctx: InputGuardrailContext;
  private readonly failed: GuardrailFailure;

  constructor(
    private readonly setup: GuardSetup,
    private readonly input: LoopState,
    private readonly sink: StageSink,
  ) {
    this.ctx = { prompts: input.run?.prompts ?? [], messages: input.messages };
    this.failed = (kind, name, message) => {
      if (!this.tripped) sink.event(hookError('guardrail', input.loopId, `${kind} guardrail "${name}" failed: ${message}`, setup.scheduler.now()));
    };
  }

  start(): () => void {
    const onError = this.setup.options.onError ?? 'trip';
    this.checks = firstTrip('input', this.setup.blocking, this.ctx, onError, this.failed).subscribe((t) => (t ? this.trip(t) : this.startCall(onError)));
    return () => {
      this.closed = true;
      this.checks?.unsubscribe();
      if (this.stopCall) this.stopCall();
    };
  }

  private startCall(onError: 'trip' | 'pass'): void {
    if (this.closed) return;
    this.checks = firstTrip('input', this.setup.parallel, this.ctx, onError, this.failed).subscribe((t) => {
      if (t) return this.trip(t);
      this.checksPassed = true;
      this.finish();
    });
    if (this.tripped || this.closed) return;
    this.stopCall = runStage(this.setup.call, this.input, this);
  }

  // ---- the call's sink

  readonly event = (e: AgentEvent): void => {
    if (this.tripped) return;
    if (e.type === 'MessageStart' || e.type === 'MessageUpdate' || e.type === 'MessageReset') {
      if (e.message.role === 'assistant') this.open = e.message;
    } else if (e.type === 'MessageEnd' && e.message.role === 'assistant') this.open = undefined;
    this.sink.event(e);
  };

  readonly error = (e: unknown): void => {
    if (!this.tripped) this.sink.error(e);
  };

  state(): void {}

  done(left: LoopState): void {
    this.left = left;
    this.finish();
  }

  // ---- how it ends

  private finish(): void {
    if (this.tripped || !this.checksPassed || this.left === undefined) return;
    this.sink.done(this.left);
  }

  /** The trip: the call is cut first (its request aborted), then the run hears of it. */
  private trip(t: Trip): void {
    if (this.tripped || this.closed) return;
    this.tripped = true;
    const stopCall = this.stopCall;
    this.stopCall = undefined;
    if (stopCall) stopCall();
    this.checks?.unsubscribe();
    const { sink, input: state } = this;
    const now = this.setup.scheduler.now();
    const stoppedBy: StoppedBy = { kind: 'guardrail', guardrail: t.guardrail, stage: 'input', ...(t.info !== undefined ? { info: t.info } : {}) };
    sink.event({
      type: 'GuardrailTripped', loopId: state.loopId, turnIndex: state.turnIndex, guardrail: t.guardrail, kind: 'input', timestamp: now,
      ...(t.info !== undefined ? { info: t.info } : {}), ...(t.error !== undefined ? { error: t.error } : {}),
    });
    const message = stopMessage(t.guardrail, this.setup.options.model, now);
    if (!this.open) sink.event({ type: 'MessageStart', loopId: state.loopId, message, timestamp: now });
    sink.event({ type: 'MessageEnd', loopId: state.loopId, message, timestamp: now });
    const base = this.left ?? state;
    sink.done(stateWith(base, { request: undefined, partial: message, assistant: message, failure: undefined, stoppedBy }));
  }
}

function stopMessage(guardrail: string, model: InputGuardrailsOptions['model'], timestamp: number): AssistantMessage {
  return {
    role: 'assistant', content: [{ type: 'text', text: `[Stopped by guardrail: ${guardrail}]` }], stopReason: 'guardRail',
    model: model.id, provider: model.provider, usage: Usage.empty(), timestamp, errorMessage: `Input guardrail "${guardrail}" tripped`,
  };
}
