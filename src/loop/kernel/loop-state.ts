import { from, isObservable, Observable, of, type OperatorFunction } from 'rxjs';
import type { AgentEvent, StoppedBy } from '../../types/events.js';
import { type AgentMessage, type AssistantMessage, type StopReason, type ToolResultMessage } from '../../types/message.js';
import type { StreamRequest } from '../../types/provider.js';
import { Usage } from '../../types/usage.js';
import type { OutputOutcome } from '../../output/output-spec.js';
import type { ContinuationKind, TurnTrigger } from '../../types/config.js';
import type { MessageSource } from '../../sources/queues.js';
import type { ToolCallCancel } from '../../operators/internal/call-cancellations.js';
import type { SteeringCheck } from '../../operators/dispatch-tools.js';
import type { ToolApprovalConfig } from '../../operators/request-approval.js';
import { copyState, StateRecord } from './state-with.js';

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
  /** Every message this run added to the context, in order (what `AgentEnd` carries); `loopState` starts it, `withRecords` keeps it (a state made by hand without it keeps none). */
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
  /** What ended the run when a stop condition or a guardrail did (carried on `AgentEnd`). */
  readonly stoppedBy?: StoppedBy;
  /**
   * What the run is and is given (ids, prompts, first trigger, abort signal, queues, call
   * cancellations, approval), when it was started with them (`agentLoop` does): the stages whose
   * options leave them out read them here, so that one composition of stages serves every run.
   */
  readonly run?: RunInfo;
}

/**
 * A run's identity, input and controls, carried on its state (`LoopState.run`): what `startRun`,
 * `admitPrompts`, `startTurn`, `buildRequest`, `runToolCalls` and every stage's `signal` take when
 * their options leave them out. One object per run, shared by every state of the run (stages that
 * keep something per run key it by this object).
 */
export interface RunInfo {
  readonly agentId: string;
  readonly sessionId: string;
  readonly parentLoopId?: string;
  readonly parentToolCallId?: string;
  readonly continuationKind?: ContinuationKind;
  /** The prompts the run was started with (`admitPrompts()` admits them); none for a continuation. */
  readonly prompts?: readonly AgentMessage[];
  /** What the run's first turn is triggered by (`startTurn`'s `TurnStart.triggeredBy` for turn 0). */
  readonly firstTrigger: TurnTrigger;
  /** The run's abort signal: what the stages whose options name none watch. */
  readonly signal?: AbortSignal;
  /** The run's steering, as its checkpoints read it (`agentLoop`'s `takeSteering`, `decideNext` and tool dispatch). */
  readonly steering?: RunSteering;
  /** Where the run's follow-ups wait (`agentLoop`'s `decideNext`). */
  readonly followUp?: MessageSource;
  /** Cancels single tool calls of the run by id (`runToolCalls` without a `cancel$` of its own). */
  readonly cancelToolCalls?: Observable<string | ToolCallCancel>;
  /** Approval of the run's tool calls (`runToolCalls` without an `approval` of its own). */
  readonly approval?: ToolApprovalConfig;
  /** The agent of a handoff team the run starts with (`context.agent`; see `agentTurns`). */
  readonly agent?: string;
}

/** A run's steering: what its checkpoints ask and take. */
export interface RunSteering extends SteeringCheck {
  /** Takes everything queued now. */
  take(): readonly AgentMessage[];
  /** How many messages wait in a queue (a function source: 0, it cannot be asked without taking). */
  size(): number;
}

/** The abort signal a stage watches: its own option's, else the run's (`state.run.signal`). */
export function signalOf(options: { readonly signal?: AbortSignal }, state: LoopState): AbortSignal | undefined {
  return options.signal ?? state.run?.signal;
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

/** Where a stage run directly (`runStage`) writes: its events, a state along the way, the state it leaves, or its failure. */
export interface StageSink {
  readonly event: (event: AgentEvent) => void;
  /** A state along the way (`repeatTurns`: the state each turn but the last leaves). */
  readonly state: (state: LoopState) => void;
  /** The stage is done with its input and leaves `state` (called once). */
  readonly done: (state: LoopState) => void;
  readonly error: (error: unknown) => void;
}

/** A stage run on one state, writing to a sink; returns its teardown. */
export type StageRun = (state: LoopState, sink: StageSink) => (() => void) | void;

/**
 * A stage that can also be run directly on one state (`run`): `loopStages`, `repeatTurns` and
 * `whenTurnDue` hand their sink down, so that an event goes from the stage that made it straight
 * to the consumer, however deeply stages are nested. Every stage built with `loopStage`,
 * `stateByState` or `directStage` is one.
 */
export interface DirectStage extends LoopStage {
  readonly run: StageRun;
}

/** What `stateByState` work writes to: its events, then the state it leaves. */
export interface StageOutput {
  next(output: LoopOutput): void;
  error(error: unknown): void;
}

/**
 * A fresh state: nothing pending, turn 0, not ended, and the run's records started (no new
 * messages yet, no usage), so that a loop of the exported stages ends with an `AgentEnd` that holds
 * every message the run added. Every field of `LoopState` is there (unset ones `undefined`), always
 * in the same order, so that every state a run derives from it with `stateWith(state, { field })`
 * has the same shape (what keeps each stage's reads and copies fast). `run` is what the run is and
 * is given (see {@link RunInfo}), for the stages that read it from the state rather than from their options.
 */
export function loopState(loopId: string, messages: readonly AgentMessage[] = [], pending: readonly AgentMessage[] = [], run?: RunInfo): LoopState {
  return new StateRecord({
    loopId, messages, pending, turnIndex: 0, ended: undefined, request: undefined, partial: undefined,
    assistant: undefined, failure: undefined, toolResults: undefined, stopRequested: undefined, newMessages: [],
    sinceRequest: [], usage: Usage.empty(), lastStopReason: undefined, rejection: undefined, steeredAt: undefined,
    overflowRecovered: undefined, startedAt: undefined, output: undefined, stoppedBy: undefined, run,
  });
}

/** Whether a stage's output is the state it leaves (rather than an event). */
export function isLoopState(output: LoopOutput): output is LoopState {
  return output.type === 'LoopState';
}

/**
 * Builds a stage from how it runs on one state. As an operator it handles one state at a time
 * (states that arrive while one is in progress wait their turn, as with `concatMap`), emitting
 * each state's events, the states along the way and the state it leaves.
 */
export function directStage(run: StageRun): DirectStage {
  const operator: LoopStage = (states) =>
    new Observable<LoopOutput>((out) => {
      const waiting: LoopState[] = [];
      let busy = false;
      let sourceDone = false;
      let teardown: (() => void) | void = undefined;
      const start = (state: LoopState): void => {
        busy = true;
        let finished = false;
        const sink: StageSink = {
          event: (e) => out.next(e),
          state: (s) => out.next(s),
          error: (e) => out.error(e),
          done: (left) => {
            if (finished) return;
            finished = true;
            teardown = undefined;
            out.next(left);
            busy = false;
            const next = waiting.shift();
            if (next) start(next);
            else if (sourceDone) out.complete();
          },
        };
        const own = run(state, sink);
        if (!finished) teardown = own;
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
  // A property set on the function (no object to copy it from: a run builds a score of stages).
  (operator as LoopStage & { run?: StageRun }).run = run;
  return operator as DirectStage;
}

/**
 * Runs any stage on one state, writing to `sink`: a `DirectStage` directly, any other operator
 * by subscribing to it (the last state it emits is the one it leaves; the input, if it emits none).
 */
export function runStage(stage: LoopStage, state: LoopState, sink: StageSink): (() => void) | void {
  const run = (stage as Partial<DirectStage>).run;
  if (run) return run(state, sink);
  let left = state;
  const subscription = of(state)
    .pipe(stage)
    .subscribe({ next: (o) => (isLoopState(o) ? (left = o) : sink.event(o)), error: sink.error, complete: () => sink.done(left) });
  return () => subscription.unsubscribe();
}

/**
 * Builds a stage from a function of one state: it returns the state it leaves, the outputs it has
 * at once (events, then the state), or an Observable of them for work that takes time. Inside
 * `loopStages` a synchronous step costs one call.
 *
 * @example
 * const countTurns = loopStage((state) => ({ ...state, pending: [...state.pending, userMessage(`turn ${state.turnIndex}`)] }));
 */
export function loopStage(step: (state: LoopState) => StepOutputs): DirectStage {
  return directStage((state, sink) => {
    let outputs: StepOutputs;
    try {
      outputs = step(state);
    } catch (error) {
      // A step that throws fails the stage (and the run), wherever it was called from.
      return sink.error(error);
    }
    if (isObservable(outputs)) {
      let left = state;
      const subscription = outputs.subscribe({
        next: (o) => (isLoopState(o) ? (left = o) : sink.event(o)),
        error: sink.error,
        complete: () => sink.done(left),
      });
      return () => subscription.unsubscribe();
    }
    if (!isOutputList(outputs)) return sink.done(outputs);
    let left = state;
    for (const o of outputs) {
      if (isLoopState(o)) left = o;
      else sink.event(o);
    }
    sink.done(left);
  });
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
 * Builds a stage whose work for a state writes its outputs straight to `out` (no inner subscriber
 * per event): its events, then the state it leaves, then `done()`. States that arrive while one is
 * in progress wait their turn. `work` returns its teardown.
 */
export function stateByState(work: (state: LoopState, out: StageOutput, done: () => void) => (() => void) | void): DirectStage {
  return directStage((state, sink) => {
    let left = state;
    const out: StageOutput = { next: (o) => (isLoopState(o) ? (left = o) : sink.event(o)), error: sink.error };
    try {
      return work(state, out, () => sink.done(left));
    } catch (error) {
      return sink.error(error);
    }
  });
}

/**
 * The state with `added` appended to the context, and to the records the state keeps
 * (`newMessages`, `sinceRequest`: each only when present). New arrays; the state given is not changed.
 */
export function withRecords(state: LoopState, added: readonly AgentMessage[]): LoopState {
  return added.length === 0 ? state : recordInto(copyState(state), added);
}

/**
 * {@link withRecords} on a state a stage is building (a fresh copy it owns, never one it was
 * given), so that a stage that changes other fields too makes one copy of the state, not two.
 */
export function recordInto(draft: LoopStateDraft, added: readonly AgentMessage[]): LoopStateDraft {
  if (added.length === 0) return draft;
  draft.messages = draft.messages.concat(added);
  if (draft.newMessages) draft.newMessages = draft.newMessages.concat(added);
  if (draft.sinceRequest) draft.sinceRequest = draft.sinceRequest.concat(added);
  return draft;
}

/**
 * The state with last turn's request, messages, results and stop request cleared (set to
 * `undefined`, not deleted: a state keeps one shape from stage to stage, which keeps every
 * stage's reads of it fast).
 */
export function turnCleared(state: LoopState): LoopStateDraft {
  const next = copyState(state);
  next.request = next.partial = next.assistant = next.failure = next.toolResults = undefined;
  next.stopRequested = undefined;
  return next;
}

/** A state being built by a stage (a fresh object, never one it was given): `LoopState` without `readonly`. */
export type LoopStateDraft = { -readonly [K in keyof LoopState]: LoopState[K] };

/** `MessageStart` and `MessageEnd` of a message that enters the context whole (a prompt, a tool result, a notice). */
export function announce(loopId: string, message: AgentMessage, timestamp: number): AgentEvent[] {
  return [
    { type: 'MessageStart', loopId, message, timestamp },
    { type: 'MessageEnd', loopId, message, timestamp },
  ];
}
