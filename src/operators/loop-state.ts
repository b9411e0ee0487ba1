import { concatMap, from, isObservable, Observable, type OperatorFunction, type Subscriber } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { type AgentMessage, type AssistantMessage, type StopReason, type ToolResultMessage } from '../types/message.js';
import type { StreamRequest } from '../types/provider.js';
import type { Usage } from '../types/usage.js';
import type { OutputOutcome } from '../agent/output-spec.js';

/**
 * The loop's state as a value, handed from stage to stage. A stage never changes the value it is
 * given: it emits a new one (`{ ...state, messages }`), so anything that kept the old value still
 * sees what it saw.
 */
export interface LoopState {
  readonly type: 'LoopState';
  readonly loopId: string;
  /** The working context: history plus what the run added (compaction may replace it). */
  readonly messages: readonly AgentMessage[];
  /** Messages admitted (prompts, steering, follow-ups) and not yet added to the context. */
  readonly pending: readonly AgentMessage[];
  /** The index of the turn in progress (0 before the first). */
  readonly turnIndex: number;
  /** Set once the run is over (a stage that sees it passes the state on untouched). */
  readonly ended?: StopReason;
  /** The request for this turn's model call, once it is built. */
  readonly request?: StreamRequest;
  /** This turn's assistant message as far as it streamed (its MessageStart is out once set). */
  readonly partial?: AssistantMessage;
  /** This turn's final assistant message, once the model call delivered one. */
  readonly assistant?: AssistantMessage;
  /** How this turn's model call failed, when it did (after its retries), and the model it went to. */
  readonly failure?: { readonly error: unknown; readonly model?: { readonly id: string; readonly provider: string } };
  /** This turn's tool results, in the order of the calls, once the tools have run. */
  readonly toolResults?: readonly ToolResultMessage[];
  /** A stage asked the run to end after this turn (a pre-dispatch policy said stop), and why. */
  readonly stopRequested?: string;
  /** Every message this run added to the context, in order (what `AgentEnd` carries); kept by `appendMessages`. */
  readonly newMessages?: readonly AgentMessage[];
  /** The messages added since the last request was built (what pre-turn policies see as new). */
  readonly sinceRequest?: readonly AgentMessage[];
  /** The usage of the run's assistant messages so far (`recordAssistant` adds each). */
  readonly usage?: Usage;
  /** The stop reason of the run's last assistant message (how the run ends when nothing more is due). */
  readonly lastStopReason?: StopReason;
  /** The input filters refused the prompts, and why (carried on `AgentEnd`). */
  readonly rejection?: string;
  /** The turn at which steering was last taken (a one-at-a-time queue hands over one message per turn). */
  readonly steeredAt?: number;
  /** The run's one context-overflow recovery has been spent. */
  readonly overflowRecovered?: boolean;
  /** Scheduler time at which the run's first turn was due (the start of `maxDurationMs`). */
  readonly startedAt?: number;
  /** Where the structured output stands, once `checkOutput` looked at the answer. */
  readonly output?: OutputOutcome;
}

/** What a stage emits: the events it caused, in order, then the state it leaves. */
export type LoopOutput = AgentEvent | LoopState;

/**
 * A stage of the loop. Its contract: for each state it receives, it emits zero or more
 * `AgentEvent`s and then exactly one `LoopState` (the last value for that input), and it does
 * not change the state it was given.
 */
export type LoopStage = OperatorFunction<LoopState, LoopOutput>;

/** What a stage's step returns for one state: its outputs at once (the state last), or an Observable of them for work that takes time. */
export type StepOutputs = LoopState | readonly LoopOutput[] | Observable<LoopOutput>;

/** A stage built by `loopStage`: `loopStages` and `repeatTurns` call its `step` directly (no subscription for a synchronous step). */
export interface SteppedStage extends LoopStage {
  readonly step: (state: LoopState) => StepOutputs;
}

/** A fresh state: nothing pending, turn 0, not ended. */
export function loopState(loopId: string, messages: readonly AgentMessage[] = [], pending: readonly AgentMessage[] = []): LoopState {
  return { type: 'LoopState', loopId, messages, pending, turnIndex: 0 };
}

/** Whether a stage's output is the state it leaves (rather than an event). */
export function isLoopState(output: LoopOutput): output is LoopState {
  return output.type === 'LoopState';
}

/**
 * Builds a stage from a function of one state: it returns the state it leaves, the outputs it has
 * at once (events, then the state), or an Observable of them for work that takes time. As an
 * operator it is `concatMap` over the steps; inside `loopStages` a synchronous step costs one call.
 *
 * @example
 * const countTurns = loopStage((state) => ({ ...state, pending: [...state.pending, userMessage(`turn ${state.turnIndex}`)] }));
 */
export function loopStage(step: (state: LoopState) => StepOutputs): SteppedStage {
  const operator = concatMap((state: LoopState) => asObservable(step(state))) as LoopStage;
  return Object.assign(operator, { step });
}

/** A step's outputs as an Observable. */
export function asObservable(outputs: StepOutputs): Observable<LoopOutput> {
  if (isObservable(outputs)) return outputs;
  return from(isOutputList(outputs) ? outputs : [outputs]);
}

function isOutputList(outputs: LoopState | readonly LoopOutput[]): outputs is readonly LoopOutput[] {
  return Array.isArray(outputs);
}

/**
 * Builds a stage that handles one state at a time (as `concatMap` does, states that arrive while
 * one is in progress wait their turn), with the work for a state writing its outputs straight to
 * the stage's subscriber: no inner subscriber per event. `work` calls `done()` once it has emitted
 * the state it leaves, and returns its teardown.
 */
export function stateByState(work: (state: LoopState, out: Subscriber<LoopOutput>, done: () => void) => (() => void) | void): LoopStage {
  return (states) =>
    new Observable<LoopOutput>((out) => {
      const waiting: LoopState[] = [];
      let busy = false;
      let sourceDone = false;
      let teardown: (() => void) | void = undefined;
      const start = (state: LoopState): void => {
        busy = true;
        let finished = false;
        const done = (): void => {
          if (finished) return;
          finished = true;
          busy = false;
          teardown = undefined;
          const next = waiting.shift();
          if (next) start(next);
          else if (sourceDone) out.complete();
        };
        const ownTeardown = work(state, out, done);
        if (!finished) teardown = ownTeardown;
      };
      const subscription = states.subscribe({
        next: (state) => (busy ? waiting.push(state) : start(state)),
        error: (error: unknown) => out.error(error),
        complete: () => {
          sourceDone = true;
          if (!busy) out.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        if (teardown) teardown();
      };
    });
}

/**
 * The state with `added` appended to the context, and to the records the state keeps
 * (`newMessages`, `sinceRequest`: each only when present). New arrays; the state given is not changed.
 */
export function withRecords(state: LoopState, added: readonly AgentMessage[]): LoopState {
  if (added.length === 0) return state;
  const next: Mutable<LoopState> = { ...state, messages: [...state.messages, ...added] };
  if (state.newMessages) next.newMessages = [...state.newMessages, ...added];
  if (state.sinceRequest) next.sinceRequest = [...state.sinceRequest, ...added];
  return next;
}

/** A state being built by a stage (a fresh object, never one it was given). */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** `MessageStart` and `MessageEnd` of a message that enters the context whole (a prompt, a tool result, a notice). */
export function announce(loopId: string, message: AgentMessage, timestamp: number): AgentEvent[] {
  return [
    { type: 'MessageStart', loopId, message, timestamp },
    { type: 'MessageEnd', loopId, message, timestamp },
  ];
}
