import {
  asyncScheduler, catchError, concat, concatMap, defer, EMPTY, filter, finalize, from, lastValueFrom, map, merge, type Observable, of,
  type OperatorFunction, type SchedulerLike, tap, throwIfEmpty,
} from 'rxjs';
import type { AgentEndEvent, AgentEvent, ParallelLoopEndEvent, ParallelLoopStartEvent } from '../types/events.js';
import type { AgentMessage } from '../types/message.js';
import { AgentError } from '../types/errors.js';
import { Usage } from '../types/usage.js';
import { linkedAbortController } from '../sources/cancellation.js';
import {
  asStrategy, evaluateParallel, type Evaluator, type ParallelDecision, type ParallelOutcome, type ParallelOutcomes,
} from './evaluate-parallel.js';
import { agentLoop, agentLoopContinue } from '../loop/agent-loop.js';
import { deepFreeze, FREEZE_EVENTS } from '../loop/freeze-events.js';
import type { AgentContext, AgentLoopConfig } from '../loop/config.js';
import { configSegment, defaultIds, loopIdFor } from '../loop/ids.js';

export interface AgentLoopParallelOptions {
  /** Aborts every branch (gracefully: each still ends with AgentEnd, stopReason `aborted`) and a judge's call. */
  signal?: AbortSignal;
  /** Time source for the parallel events and the evaluation; also given to configs that have none. */
  scheduler?: SchedulerLike;
  /** Id source for a missing agentId / sessionId (default: the first config's, else crypto.randomUUID). */
  ids?: () => string;
  /** Explicit loop ids, one per config, all distinct (BasicAgent passes its per-config counters' ids). */
  loopIds?: readonly string[];
  /** The `{N}` of a branch's `{sessionId}.{configSegment}.{N}` loop id; default counts from 1 per segment within this call. */
  nextLoopNumber?: (segment: string) => number;
  /** How many branches run at once (default: all). */
  concurrency?: number;
  /**
   * Cancels single branches while the others go on (by config index or loop id): the branch is
   * aborted (AgentEnd `aborted`), and the evaluation sees it failed and `cancelled`. A branch that
   * has already ended, or a key that names none, is ignored (BasicAgent's `cancelBranch` checks keys).
   */
  cancelBranches?: Observable<number | string | { branch: number | string; reason?: string }>;
}

/** Everything a parallel run produced, attached to its ParallelLoopEnd (read it with `parallelResult()`). */
export interface ParallelResult {
  sessionId: string;
  /** One per branch, in config order — the losers included. */
  outcomes: ParallelOutcome[];
  selected: ParallelOutcome;
  selectedIndex: number;
  /** Tokens the evaluation spent (a judge's calls). */
  evaluationUsage: Usage;
  /** Number of base-context messages: the boundary between prior context and the winner's messages. */
  originalContextLen: number;
  /**
   * The base messages followed by the winner's, with agentId and sessionId set and
   * `parentLoopId` = the winner's loop: hand it to `agentLoopContinue`. (For a new prompt with
   * `agentLoop`, drop `parentLoopId` unless you want the next loop recorded as the winner's child.)
   */
  selectedContext: AgentContext;
  /** The evaluation's warnings (also emitted as ProgressMessage events before ParallelLoopEnd). */
  warnings: string[];
  /** The strategy that decided. */
  strategy: string;
}

interface Branch {
  index: number;
  loopId: string;
  context: AgentContext;
  config: AgentLoopConfig;
  prompts: AgentMessage[];
  abort: AbortController;
  dispose(): void;
}

/** ParallelLoopEnd event -> the result of the run that emitted it. Keeps the events themselves plain data. */
const RESULTS = new WeakMap<ParallelLoopEndEvent, ParallelResult>();

/**
 * Runs N loop configs concurrently on copies of one context and lets a strategy pick the winner
 * (best-of-N, spec 000 `agent_loop_parallel`). A cold Observable: ParallelLoopStart (every loopId,
 * in config order), then every branch's events interleaved as they happen — each carries its
 * branch's `loopId` —, then the strategy's warnings (ProgressMessage) and ParallelLoopEnd.
 *
 * Each branch gets a deep copy of the base messages (structuredClone) and of the prompts, the same
 * tools, one shared sessionId and agentId, and its own loopId `{sessionId}.{configSegment}.{N}`.
 * With prompts, each branch is `agentLoop(prompts, ...)`; with none, `agentLoopContinue(...)` (the
 * query is already the last message of the base context).
 *
 * The result is attached to the ParallelLoopEnd event and read with the `parallelResult()`
 * operator (or `agentLoopParallelResult` as a Promise), so the event stream stays plain data that
 * any recorder can store, and one subscription gives both.
 *
 * Cancellation: `options.signal` (and each config's own `signal`) aborts branches gracefully —
 * each ends with AgentEnd `aborted`, and the evaluation skips any model call. A branch that fails
 * (ends in error, or its Observable errors) does not touch its siblings; the strategy sees it with
 * `failed: true`. With a racing strategy (`Evaluation.FirstToFinish`), the first branch to end
 * successfully wins and the others are *aborted* (not unsubscribed), so their AgentEnd events
 * still arrive and their session records close. Unsubscribing tears every branch down at once.
 *
 * Errors: no configs, duplicate loop ids, or a strategy that rejects the branch count (Transparent
 * with several) fail before any branch starts; a strategy that cannot decide fails with a
 * `StrategyError`; if every branch's Observable errored (nothing ended), the first error is rethrown.
 *
 * @example
 * const result = await lastValueFrom(
 *   agentLoopParallel([userMessage('Name a prime > 100')], context, [fast, thorough, creative], Evaluation.LlmJudge({ judge }))
 *     .pipe(tap((e) => ui.show(e)), parallelResult()),
 * );
 * agentLoopContinue(result.selectedContext, fast);
 */
export function agentLoopParallel(
  prompts: readonly AgentMessage[],
  baseContext: AgentContext,
  configs: readonly AgentLoopConfig[],
  strategy: Evaluator,
  options: AgentLoopParallelOptions = {},
): Observable<AgentEvent> {
  return defer(() => {
    const s = asStrategy(strategy);
    if (configs.length === 0) throw new AgentError('InvalidConfig', 'agentLoopParallel needs at least one loop config.');
    s.check?.(configs.length);
    const scheduler = options.scheduler ?? configs[0]!.scheduler ?? asyncScheduler;
    const ids = options.ids ?? configs[0]!.ids ?? defaultIds;
    const agentId = baseContext.agentId ?? ids();
    const sessionId = baseContext.sessionId ?? ids();
    const loopIds = branchLoopIds(sessionId, configs, options);
    const branches = configs.map((config, index) => makeBranch(index, loopIds[index]!, prompts, baseContext, config, { agentId, sessionId, scheduler, options }));
    const outcomes = branches.map(pendingOutcome);
    let finished = 0;
    let winner: number | undefined;

    const settle = (b: Branch, end: AgentEndEvent): void => {
      const o = outcomes[b.index]!;
      o.messages = end.messages;
      o.usage = { ...end.usage };
      o.stopReason = end.stopReason;
      if (end.rejection !== undefined) o.rejection = end.rejection;
      o.failed = end.stopReason === 'error' || end.stopReason === 'aborted' || end.rejection !== undefined;
      o.finishOrder = finished++;
      if (s.race && !o.failed && winner === undefined) winner = b.index;
    };
    // Called when the winner's stream is over, so its AgentEnd reaches subscribers before the losers' ones.
    const cancelLosers = (b: Branch): void => {
      for (const other of branches) {
        if (other === b || outcomes[other.index]!.finishOrder >= 0) continue;
        outcomes[other.index]!.cancelled = true;
        other.abort.abort(new AgentError('StrategyError', `branch ${b.index} (${b.loopId}) won the race`));
      }
    };
    const fail = (b: Branch, error: unknown): void => {
      const o = outcomes[b.index]!;
      o.failed = true;
      o.error = error;
      o.stopReason = 'error';
      o.finishOrder = finished++;
    };
    const branch$ = (b: Branch): Observable<AgentEvent> =>
      concat(
        defer(() => (b.prompts.length > 0 ? agentLoop(b.prompts, b.context, b.config) : agentLoopContinue(b.context, b.config))).pipe(
          tap((e) => {
            if (e.type === 'AgentEnd' && e.loopId === b.loopId) settle(b, e);
          }),
          catchError((error: unknown) => {
            fail(b, error);
            return EMPTY;
          }),
        ),
        defer(() => {
          if (outcomes[b.index]!.finishOrder < 0) {
            fail(b, new AgentError('InvalidConfig', `branch ${b.index} (${b.loopId}) completed without an AgentEnd event; did an events operator drop it?`));
          }
          if (winner === b.index) cancelLosers(b);
          return EMPTY;
        }),
      ).pipe(finalize(() => b.dispose()));

    const start: ParallelLoopStartEvent = { type: 'ParallelLoopStart', sessionId, loopIds: [...loopIds], timestamp: scheduler.now() };
    const input: ParallelOutcomes = {
      sessionId,
      systemPrompt: baseContext.systemPrompt,
      prompts,
      baseMessages: baseContext.messages,
      originalContextLen: baseContext.messages.length,
      outcomes,
    };
    const evaluate$ = defer(() => {
      const ended = outcomes.some((o) => o.error === undefined);
      if (!ended) throw outcomes[0]!.error;
      return of(input).pipe(
        evaluateParallel(s, { scheduler, ...(options.signal ? { signal: options.signal } : {}) }),
        concatMap((decision) => {
          const end: ParallelLoopEndEvent = {
            type: 'ParallelLoopEnd',
            sessionId,
            selectedLoopId: decision.selectedLoopId,
            selectedConfigIndex: decision.selectedIndex,
            evaluationUsage: decision.usage,
            timestamp: scheduler.now(),
          };
          RESULTS.set(end, resultOf(decision, branches, outcomes, baseContext, { agentId, sessionId }));
          return from<AgentEvent[]>([...decision.warnings, end]);
        }),
      );
    });
    const cancelling = options.cancelBranches?.subscribe((c) => {
      const { branch, reason } = typeof c === 'object' ? c : { branch: c, reason: undefined };
      const b = typeof branch === 'number' ? branches[branch] : branches.find((x) => x.loopId === branch);
      if (!b || outcomes[b.index]!.finishOrder >= 0) return;
      outcomes[b.index]!.cancelled = true;
      b.abort.abort(new AgentError('StrategyError', `branch ${b.index} (${b.loopId}) was cancelled${reason ? `: ${reason}` : ''}`));
    });
    const merged$ = concat(of<AgentEvent>(start), merge(...branches.map(branch$), options.concurrency ?? Infinity), evaluate$);
    const run$ = FREEZE_EVENTS ? merged$.pipe(map(deepFreeze)) : merged$; // the development check (PHI_RX_FREEZE=1)
    return cancelling ? run$.pipe(finalize(() => cancelling.unsubscribe())) : run$;
  });
}

/** Runs `agentLoopParallel` and resolves with its result (the events are not kept). */
export function agentLoopParallelResult(
  prompts: readonly AgentMessage[],
  baseContext: AgentContext,
  configs: readonly AgentLoopConfig[],
  strategy: Evaluator,
  options: AgentLoopParallelOptions = {},
): Promise<ParallelResult> {
  return lastValueFrom(agentLoopParallel(prompts, baseContext, configs, strategy, options).pipe(parallelResult()));
}

/**
 * The result of each parallel run in an event stream, emitted when its ParallelLoopEnd passes.
 * Put it after your own taps: `agentLoopParallel(...).pipe(tap(show), parallelResult())`. The
 * result is tied to the event object, so an event that was copied on its way (JSON, structuredClone)
 * fails with an AgentError saying so, and a stream without ParallelLoopEnd fails when it completes.
 *
 * ```
 * events:  P-a-b-a-b-Q|       (P: ParallelLoopStart, a/b: branch events, Q: ParallelLoopEnd)
 * parallelResult()
 * output:  ----------r|       (r: ParallelResult)
 * ```
 *
 * @example
 * agentLoopParallel(prompts, context, configs, Evaluation.TokenEfficient)
 *   .pipe(recordSession(recorder), parallelResult())
 *   .subscribe(({ selectedContext }) => (conversation = selectedContext));
 */
/** The result attached to a ParallelLoopEnd that `agentLoopParallel` emitted (undefined for a copy). */
export function parallelResultOf(event: ParallelLoopEndEvent): ParallelResult | undefined {
  return RESULTS.get(event);
}

export function parallelResult(): OperatorFunction<AgentEvent, ParallelResult> {
  return (source) =>
    source.pipe(
      filter((e): e is ParallelLoopEndEvent => e.type === 'ParallelLoopEnd'),
      map((e) => {
        const result = RESULTS.get(e);
        if (!result) {
          throw new AgentError(
            'InvalidConfig',
            `ParallelLoopEnd of session ${e.sessionId} carries no result: parallelResult() needs the event object agentLoopParallel emitted, not a copy.`,
          );
        }
        return result;
      }),
      throwIfEmpty(() => new AgentError('InvalidConfig', 'parallelResult(): the stream completed without a ParallelLoopEnd.')),
    );
}

// ---- building the branches ----------------------------------------------------------------------

function branchLoopIds(sessionId: string, configs: readonly AgentLoopConfig[], options: AgentLoopParallelOptions): string[] {
  let loopIds: string[];
  if (options.loopIds) {
    if (options.loopIds.length !== configs.length) {
      throw new AgentError('InvalidConfig', `agentLoopParallel got ${options.loopIds.length} loop ids for ${configs.length} configs.`);
    }
    loopIds = [...options.loopIds];
  } else {
    const counters = new Map<string, number>();
    const next = options.nextLoopNumber ?? ((segment: string): number => {
      const n = (counters.get(segment) ?? 0) + 1;
      counters.set(segment, n);
      return n;
    });
    loopIds = configs.map((c) => {
      const segment = configSegment(c);
      return loopIdFor(sessionId, segment, next(segment));
    });
  }
  const seen = new Set<string>();
  for (const id of loopIds) {
    if (seen.has(id)) throw new AgentError('InvalidConfig', `agentLoopParallel: loop id "${id}" is used by more than one branch; every branch needs its own.`);
    seen.add(id);
  }
  return loopIds;
}

interface Shared {
  agentId: string;
  sessionId: string;
  scheduler: SchedulerLike;
  options: AgentLoopParallelOptions;
}

function makeBranch(
  index: number,
  loopId: string,
  prompts: readonly AgentMessage[],
  base: AgentContext,
  config: AgentLoopConfig,
  shared: Shared,
): Branch {
  // Each branch can be aborted alone (a lost race) or with the whole run.
  const link = linkedAbortController(shared.options.signal);
  const signal = config.signal ? AbortSignal.any([link.controller.signal, config.signal]) : link.controller.signal;
  const context: AgentContext = {
    systemPrompt: base.systemPrompt,
    messages: structuredClone(base.messages),
    tools: base.tools,
    agentId: shared.agentId,
    sessionId: shared.sessionId,
    loopId,
    ...(base.parentLoopId !== undefined ? { parentLoopId: base.parentLoopId } : {}),
    ...(base.continuationKind !== undefined ? { continuationKind: base.continuationKind } : {}),
  };
  return {
    index,
    loopId,
    context,
    config: { ...config, signal, scheduler: config.scheduler ?? shared.scheduler },
    prompts: structuredClone([...prompts]),
    abort: link.controller,
    dispose: link.dispose,
  };
}

function pendingOutcome(b: Branch): ParallelOutcome {
  return { loopId: b.loopId, configIndex: b.index, messages: [], usage: Usage.empty(), stopReason: 'stop', failed: false, finishOrder: -1, cancelled: false };
}

function resultOf(
  decision: ParallelDecision,
  branches: readonly Branch[],
  outcomes: ParallelOutcome[],
  base: AgentContext,
  ids: { agentId: string; sessionId: string },
): ParallelResult {
  const selected = outcomes[decision.selectedIndex]!;
  const winner = branches[decision.selectedIndex]!;
  return {
    sessionId: ids.sessionId,
    outcomes,
    selected,
    selectedIndex: decision.selectedIndex,
    evaluationUsage: decision.usage,
    originalContextLen: base.messages.length,
    selectedContext: {
      systemPrompt: base.systemPrompt,
      messages: [...winner.context.messages, ...selected.messages],
      tools: base.tools,
      agentId: ids.agentId,
      sessionId: ids.sessionId,
      parentLoopId: selected.loopId,
    },
    warnings: decision.warnings.map((w) => w.text),
    strategy: decision.strategy,
  };
}

