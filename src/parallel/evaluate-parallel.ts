import {
  asyncScheduler, catchError, concatMap, defer, from, isObservable, map, type Observable, type ObservableInput, of,
  type OperatorFunction, type SchedulerLike, take, throwError, throwIfEmpty,
} from 'rxjs';
import type { ProgressMessageEvent } from '../types/events.js';
import type { AgentMessage, StopReason } from '../types/message.js';
import { AgentError, errorMessage } from '../types/errors.js';
import { Usage } from '../types/usage.js';

/** How one branch of a parallel run ended. */
export interface ParallelOutcome {
  loopId: string;
  /** The branch's position in the configs (0-based). */
  configIndex: number;
  /** Every message the branch added (its AgentEnd's messages; empty when it never ended). */
  messages: AgentMessage[];
  usage: Usage;
  /** The branch's AgentEnd stop reason; `error` when its Observable failed. */
  stopReason: StopReason;
  /** Ended in error, was aborted, had its input rejected, or its Observable failed: not a candidate. */
  failed: boolean;
  /** The error the branch's Observable failed with (a loop that ends with stopReason `error` has none). */
  error?: unknown;
  /** Set when an input filter rejected the prompt. */
  rejection?: string;
  /** 0-based rank in which the branch finished; -1 while it runs. */
  finishOrder: number;
  /** A race (`race: true` strategy) was won by another branch and this one was aborted, or it was cancelled (`cancelBranches`, `agent.cancelBranch`). */
  cancelled: boolean;
}

/** What a strategy judges: the branches' outcomes and the conversation they answered. */
export interface ParallelOutcomes {
  sessionId: string;
  systemPrompt: string;
  /** The prompts every branch got; empty when the branches continued the base context. */
  prompts: readonly AgentMessage[];
  /** The base context's messages (before the prompts), as each branch started from them. */
  baseMessages: readonly AgentMessage[];
  /** `baseMessages.length`: the boundary between prior context and branch output. */
  originalContextLen: number;
  /** One per branch, in config order. */
  outcomes: readonly ParallelOutcome[];
}

/** A strategy's answer: the 0-based index of the winner, or the index with usage and warnings. */
export type EvaluationVerdict = number | { index: number; usage?: Usage; warnings?: readonly string[] };

/** What a strategy may use while it decides. */
export interface EvaluationContext {
  scheduler: SchedulerLike;
  /** The parallel run's abort signal: a strategy that calls a model should pass it on. */
  signal?: AbortSignal;
}

/** A verdict now, or later (Promise, Observable — its first value counts). */
export type EvaluationResult = EvaluationVerdict | ObservableInput<EvaluationVerdict>;

/** Picks the winner among parallel branches (spec 000 EvaluationStrategy). */
export interface EvaluationStrategy {
  readonly name: string;
  /**
   * When true, `agentLoopParallel` aborts the other branches as soon as one succeeds, so
   * `evaluate` sees one success and the rest cancelled.
   */
  readonly race?: boolean;
  /** Rejects an unsupported branch count before any branch runs (throw an AgentError). */
  check?(branchCount: number): void;
  evaluate(input: ParallelOutcomes, context: EvaluationContext): EvaluationResult;
}

/** A custom strategy as a plain function. */
export type EvaluatorFn = (input: ParallelOutcomes, context: EvaluationContext) => EvaluationResult;

/** Anything `evaluateParallel` and `agentLoopParallel` accept as a strategy. */
export type Evaluator = EvaluationStrategy | EvaluatorFn;

/** The outcome of an evaluation, ready to become a ParallelLoopEnd. */
export interface ParallelDecision {
  /** 0-based config index of the winner. */
  selectedIndex: number;
  selectedLoopId: string;
  /** Tokens the evaluation itself spent (a judge's calls); zero for the arithmetic strategies. */
  usage: Usage;
  /** The strategy's warnings, as ProgressMessage events on the selected loop (toolName `evaluateParallel`). */
  warnings: ProgressMessageEvent[];
  /** The name of the strategy that decided. */
  strategy: string;
}

export interface EvaluateParallelOptions {
  /** Time source for warning timestamps and for the strategy (default asyncScheduler). */
  scheduler?: SchedulerLike;
  /** Handed to the strategy (a judge's model call is aborted with it). */
  signal?: AbortSignal;
}

/** The ProgressMessage `toolName` of evaluation warnings. */
export const EVALUATION_WARNING_SOURCE = 'evaluateParallel';

/**
 * Turns the outcomes of parallel branches into a decision: which branch won, what the evaluation
 * cost, and any warnings to surface. The strategy may answer at once, with a Promise or with an
 * Observable (its first value counts), so a model-judged evaluation is just another inner
 * Observable; inputs are evaluated one at a time, in order (`concatMap`).
 *
 * Every failure is a typed `AgentError` with code `StrategyError`: a strategy that throws or
 * errors, completes without a verdict, or selects an index that is not a branch.
 *
 * ```
 * outcomes:  --o---------p----|      (o, p: ParallelOutcomes of two runs)
 * evaluateParallel(judge)             (judge answers after 3 frames)
 * decisions: -----d---------e-|      (d, e: ParallelDecision { selectedIndex, usage, warnings })
 * ```
 *
 * @example
 * of(outcomes).pipe(evaluateParallel(Evaluation.TokenEfficient))
 *   .subscribe(({ selectedIndex, selectedLoopId }) => console.log(`branch ${selectedIndex} (${selectedLoopId}) wins`));
 *
 * // A custom strategy is a function; return a number, a Promise or an Observable.
 * of(outcomes).pipe(evaluateParallel((input) => input.outcomes.findIndex((o) => !o.failed && o.messages.length > 2)));
 */
export function evaluateParallel(strategy: Evaluator, options: EvaluateParallelOptions = {}): OperatorFunction<ParallelOutcomes, ParallelDecision> {
  const s = asStrategy(strategy);
  const scheduler = options.scheduler ?? asyncScheduler;
  const context: EvaluationContext = { scheduler, ...(options.signal ? { signal: options.signal } : {}) };
  return concatMap((input) =>
    defer(() => {
      if (input.outcomes.length === 0) throw strategyError(s, 'there are no branches to evaluate');
      return verdict$(s.evaluate(input, context));
    }).pipe(
      take(1),
      throwIfEmpty(() => strategyError(s, 'it completed without selecting a branch')),
      catchError((e: unknown) => throwError(() => (e instanceof AgentError ? e : strategyError(s, `it failed: ${errorMessage(e)}`, e)))),
      map((verdict) => decide(s, input, verdict, scheduler)),
    ),
  );
}

/** Lets callers pass a bare function wherever a strategy is expected. */
export function asStrategy(strategy: Evaluator): EvaluationStrategy {
  if (typeof strategy !== 'function') return strategy;
  return { name: strategy.name || 'custom', evaluate: strategy };
}

function verdict$(result: EvaluationResult): Observable<EvaluationVerdict> {
  if (typeof result === 'number' || isVerdictObject(result)) return of(result);
  return isObservable(result) ? result : from(result);
}

function isVerdictObject(v: unknown): v is Exclude<EvaluationVerdict, number> {
  return typeof v === 'object' && v !== null && typeof (v as { index?: unknown }).index === 'number' && !isObservable(v)
    && typeof (v as { then?: unknown }).then !== 'function';
}

function decide(s: EvaluationStrategy, input: ParallelOutcomes, verdict: EvaluationVerdict, scheduler: SchedulerLike): ParallelDecision {
  const v = typeof verdict === 'number' ? { index: verdict } : verdict;
  const n = input.outcomes.length;
  if (!Number.isInteger(v.index) || v.index < 0 || v.index >= n) {
    throw strategyError(s, `it selected branch ${String(v.index)}, but there ${n === 1 ? 'is 1 branch (index 0)' : `are ${n} branches (indexes 0-${n - 1})`}`);
  }
  const selected = input.outcomes[v.index]!;
  const now = scheduler.now();
  return {
    selectedIndex: v.index,
    selectedLoopId: selected.loopId,
    usage: { ...Usage.empty(), ...v.usage },
    warnings: (v.warnings ?? []).map((text) => ({
      type: 'ProgressMessage',
      loopId: selected.loopId,
      toolCallId: '',
      toolName: EVALUATION_WARNING_SOURCE,
      text: `${s.name}: ${text}`,
      timestamp: now,
    })),
    strategy: s.name,
  };
}

function strategyError(s: EvaluationStrategy, what: string, cause?: unknown): AgentError {
  const error = new AgentError('StrategyError', `Evaluation strategy "${s.name}" could not decide: ${what}.`);
  if (cause !== undefined) error.cause = cause;
  return error;
}
