import {
  asyncScheduler, catchError, concat, concatMap, defer, EMPTY, from, identity, ignoreElements, map, Observable, of,
  type MonoTypeOperatorFunction, type OperatorFunction, type SchedulerLike, type Subscription, tap, queueScheduler, repeat, scheduled, subscribeOn,
} from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import {
  type AgentMessage, type AssistantMessage, type LlmMessage, type Message, type StopReason, type ToolResultMessage,
  isExtension, toolCallsOf,
} from '../types/message.js';
import type { Provider, StreamRequest } from '../types/provider.js';
import {
  DEFAULT_CACHE_CONFIG, DEFAULT_CONTEXT_CONFIG, NO_RETRY, type ContextConfig, type TurnTrigger,
} from '../types/config.js';
import { AgentError, errorMessage, isProviderError } from '../types/errors.js';
import type { HookResult, PolicyVerdict } from '../types/hooks.js';
import { Usage } from '../types/usage.js';
import type { ToolDefinition } from '../types/tool.js';
import { callHookSafely } from '../sources/hook-result.js';
import type { QueuedMessage } from '../sources/queues.js';
import { defaultProviderRegistry } from '../sources/providers/registry.js';
import { compactContext } from '../operators/compact-context.js';
import { injectQueued } from '../operators/inject-queued.js';
import { isLoopState, type LoopOutput, type LoopStage, type LoopState } from '../operators/loop-state.js';
import { runToolCalls } from '../operators/run-tool-calls.js';
import { filterInput } from '../operators/filter-input.js';
import { limitExecution } from '../operators/limit-execution.js';
import { callModel } from '../operators/call-model.js';
import { isCut, settleCall } from '../operators/settle-call.js';
import { onErrorHook } from '../operators/on-error-hook.js';
import { postTurnPolicies } from '../operators/post-turn-policies.js';
import { beforeTurnHook } from '../operators/before-turn-hook.js';
import { afterTurnHook } from '../operators/after-turn-hook.js';
import type { AgentContext, AgentLoopConfig } from './config.js';
import { defaultIds } from './ids.js';
import { checkLoopOptions } from './check-options.js';
import { checkPrompts } from './check-prompts.js';
import { checkApprovalOptions } from './check-approval.js';
import { openToolCalls } from './open-calls.js';
import { checkTools } from '../tools/check-tools.js';
import { LlmViews } from './llm-views.js';
import { queuedSize, SteeringInbox, takeQueued } from './steering-inbox.js';
import { type EventStage, NO_EVENTS, playStages, type Stage, toObservable } from './play-stages.js';

/**
 * The state of one run and the stages of its pipeline. `stages()` is the run's lifecycle written
 * top to bottom as a generator; `playStages` turns it into one Observable. Each stage is computed
 * when the one before it has completed and is either the events it has at once or an Observable
 * for work that takes time (the model call, the tools, an async hook). State lives here rather
 * than in a scan because stages read it at the moment they start, which is exactly the spec's
 * checkpoint semantics. A plain turn costs the model call and the tool dispatch, not one
 * subscription per stage.
 */
export class Run {
  private readonly scheduler: SchedulerLike;
  private readonly provider: Provider;
  private readonly toolDefs: ToolDefinition[];
  private readonly contextConfig: ContextConfig | undefined;
  readonly loopId: string;
  readonly agentId: string;
  readonly sessionId: string;

  /** The working context: history plus everything this run added (compaction may rewrite it). */
  private messages: AgentMessage[];
  private readonly newMessages: AgentMessage[] = [];
  /** Messages added since the last model call, for pre-turn policies. */
  private fresh: AgentMessage[] = [];
  private pending: AgentMessage[] = [];
  private readonly usage = Usage.empty();
  private turnIndex = 0;
  /** The turn in progress (0 before the first), as stages see it. */
  private currentTurn = 0;
  private nextTurn = false;
  private ended: StopReason | undefined;
  private rejection: string | undefined;
  private stopRequested: string | undefined;
  private vetoed = false;
  private overflowRecovered = false;
  private assistant: AssistantMessage | undefined;
  private partial: AssistantMessage | undefined;
  private messageStarted = false;
  private toolResults: ToolResultMessage[] = [];
  private lastStopReason: StopReason = 'stop';
  private polledThisTurn = false;

  constructor(
    context: AgentContext,
    private readonly config: AgentLoopConfig,
    prompts: readonly AgentMessage[] | string | undefined,
  ) {
    const ids = config.ids ?? defaultIds;
    // Bad options, tools or prompts fail the run before anything is emitted or sent to the model.
    checkLoopOptions(config);
    checkTools(context.tools);
    checkApprovalOptions(config, context.tools);
    this.scheduler = config.scheduler ?? asyncScheduler;
    this.prompts = prompts === undefined ? undefined : checkPrompts(prompts, this.scheduler.now());
    if (prompts === undefined) this.checkContinuable(context);
    this.agentId = context.agentId ?? ids();
    this.sessionId = context.sessionId ?? ids();
    this.loopId = context.loopId ?? ids();
    this.provider = config.provider ?? defaultProviderRegistry().resolve(config.model);
    this.toolDefs = context.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
    this.contextConfig = config.contextConfig ? { ...DEFAULT_CONTEXT_CONFIG, ...config.contextConfig } : undefined;
    this.messages = context.messages.slice();
    this.context = context;
    this.steering = new SteeringInbox(config.steering, config.steeringPolicy);
  }

  private readonly context: AgentContext;
  private readonly steering: SteeringInbox;
  /** What the provider sees of the context, converted once per message. */
  private readonly llmViews = new LlmViews();
  /** The prompts as checked (`undefined` for a continuation). */
  private readonly prompts: readonly AgentMessage[] | undefined;

  events$(): Observable<AgentEvent> {
    return playStages(() => this.stages(), this.adoptState);
  }

  /** The run: before-loop hook, AgentStart, the prompts, turn after turn while there is work, AgentEnd. */
  private *stages(): Generator<Stage, void, undefined> {
    yield this.beforeLoop$();
    if (this.vetoed) {
      yield [this.agentEndEvent('userStop')];
      return;
    }
    yield [this.agentStartEvent()];
    // A beforeLoop hook that threw is reported after AgentStart: AgentStart is every run's first event.
    yield this.hookErrors.splice(0);
    yield this.start$();
    yield* this.answerOpenCalls();
    yield this.turns$();
    yield this.end$();
  }

  // ---- loop level ---------------------------------------------------------------------------

  private checkContinuable(context: AgentContext): void {
    if (!context.agentId || !context.sessionId) {
      throw new AgentError(
        'MissingIds',
        'agentLoopContinue needs context.agentId and context.sessionId: continue the run that produced this context (BasicAgent sets them).',
      );
    }
    if (context.messages.length === 0) throw new AgentError('InvalidContinue', 'Cannot continue: the context has no messages.');
    const last = context.messages[context.messages.length - 1]!;
    const queued = queuedSize(this.config.steering) + queuedSize(this.config.followUp);
    if (last.role === 'assistant' && queued === 0 && !openToolCalls(context.messages)) {
      throw new AgentError(
        'InvalidContinue',
        'Cannot continue: the context ends with an assistant message and nothing is queued. Add a user message, steer or follow up first.',
      );
    }
  }

  /** A continuation of a run suspended mid-dispatch first answers the calls it left open (see `openToolCalls`). */
  private *answerOpenCalls(): Generator<Stage, void, undefined> {
    const open = this.prompts === undefined && !this.ended ? openToolCalls(this.messages) : undefined;
    if (!open) return;
    this.assistant = open;
    yield this.tools$();
    this.recordToolResults();
  }

  private beforeLoop$(): Stage {
    const hook = this.config.hooks?.beforeLoop;
    if (!hook) return undefined;
    return this.safely$('beforeLoop', () => hook(this.messages, 0), true as boolean | void).pipe(
      tap((ok) => {
        if (ok === false) this.vetoed = true;
      }),
      ignoreElements(),
    );
  }

  private agentStartEvent(): AgentEvent {
    const c = this.context;
    return {
      type: 'AgentStart',
      agentId: this.agentId,
      sessionId: this.sessionId,
      loopId: this.loopId,
      ...(c.parentLoopId ? { parentLoopId: c.parentLoopId } : {}),
      ...(c.parentToolCallId ? { parentToolCallId: c.parentToolCallId } : {}),
      ...(c.continuationKind ? { continuationKind: c.continuationKind } : {}),
      timestamp: this.now(),
      ...(this.config.metadata !== undefined ? { metadata: this.config.metadata } : {}),
    };
  }

  /** Filters the prompts (an origin call) or picks up queued follow-ups (a continuation). */
  private start$(): Stage {
    if (this.prompts === undefined) {
      const last = this.messages[this.messages.length - 1];
      if (last?.role === 'assistant' && queuedSize(this.config.steering) === 0) return this.admit$(takeQueued(this.config.followUp));
      return undefined;
    }
    const filters = this.config.inputFilters ?? [];
    if (filters.length === 0) {
      this.pending.push(...this.prompts);
      return undefined;
    }
    return of(this.prompts).pipe(
      filterInput(filters),
      concatMap((verdict) => {
        if (verdict.action === 'pass') {
          this.pending.push(...verdict.messages);
          return EMPTY;
        }
        this.rejection = verdict.reason;
        this.ended = 'stop';
        return of<AgentEvent>({ type: 'InputRejected', loopId: this.loopId, reason: verdict.reason, timestamp: this.now() });
      }),
    );
  }

  /**
   * Turn after turn while there is work: each turn is one Observable of its stages, guarded by
   * `limitExecution` and re-subscribed by `repeat` while the run says another turn is due.
   * The whole repetition runs in a queue-scheduler action and the signal for the next turn is
   * queued on it, so a synchronous run (scripted provider, synchronous tools) repeats as a flat
   * loop instead of recursing: the stack does not grow with the number of turns.
   */
  private turns$(): Observable<AgentEvent> {
    const limits = this.config.limits;
    const guard: MonoTypeOperatorFunction<AgentEvent> = limits
      ? limitExecution(limits, {
          scheduler: this.scheduler,
          ...(this.config.model.cost ? { pricing: this.config.model.cost } : {}),
          onLimit: (reason) => this.limitReached$(reason),
        })
      : identity;
    return playStages(() => this.turn(), this.adoptState).pipe(
      guard,
      repeat({ delay: () => (this.nextTurn && !this.ended ? nextTurnSignal : EMPTY) }),
      subscribeOn(queueScheduler),
    );
  }

  private limitReached$(reason: string): Observable<AgentEvent> {
    return defer(() => {
      this.ended = reason.startsWith('Max turns') ? 'maxTurns' : 'guardRail';
      const message: AgentMessage = { role: 'user', content: [{ type: 'text', text: `[Agent stopped: ${reason}]` }], timestamp: this.now() };
      return from(this.append([message]));
    });
  }

  private end$(): Stage {
    const end = this.agentEndEvent(this.ended ?? this.lastStopReason);
    const after = this.config.hooks?.afterLoop;
    return after ? concat(of(end), this.hook$('afterLoop', () => after(this.newMessages, this.usage), undefined, () => undefined)) : [end];
  }

  private agentEndEvent(stopReason: StopReason): AgentEvent {
    return {
      type: 'AgentEnd',
      loopId: this.loopId,
      messages: this.vetoed ? [] : this.newMessages.slice(),
      usage: { ...this.usage },
      timestamp: this.now(),
      stopReason: this.config.signal?.aborted ? 'aborted' : stopReason,
      ...(this.rejection !== undefined ? { rejection: this.rejection } : {}),
    };
  }

  // ---- one turn -----------------------------------------------------------------------------

  /** One turn, in the order of spec 000's lifecycle. */
  private *turn(): Generator<Stage, void, undefined> {
    this.nextTurn = false;
    this.polledThisTurn = false;
    if (this.ended) return;
    yield this.pollSteering$(); // checkpoint 6: loop re-entry
    if (!this.turnDue()) {
      // Everything that asked for this turn was refused by the input filters: no turn starts, and
      // the run goes on (follow-ups, post-loop policies) or ends as if nothing had been queued.
      yield* this.decideNext();
      return;
    }
    yield this.beforeTurn$();
    if (this.ended) return;
    const turnIndex = this.turnIndex;
    yield this.turnStart();
    if (!this.polledThisTurn) yield this.pollSteering$(); // checkpoint 1: after before_turn, before the model call
    yield this.append(this.pending.splice(0), turnIndex);
    yield this.compaction('budget');
    yield this.preTurnPolicies$(turnIndex);
    if (!this.ended) yield this.buildRequest$();
    yield* this.modelCall(turnIndex);
    yield this.tools$();
    this.recordToolResults();
    yield this.postTurn$();
    yield this.turnEnd$(turnIndex);
    yield* this.decideNext();
  }

  /** A model call is due: messages wait to be sent, or the context does not end with the model's answer. */
  private turnDue(): boolean {
    if (this.pending.length > 0) return true;
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const m = this.messages[i]!;
      if (!isExtension(m)) return m.role !== 'assistant';
    }
    return false;
  }

  private beforeTurn$(): Stage {
    const hook = this.config.hooks?.beforeTurn;
    if (!hook) return undefined;
    // The stage sees the index of the turn about to start.
    return this.through$(beforeTurnHook(hook, { scheduler: this.scheduler }), () => ({ ...this.snapshot(), turnIndex: this.turnIndex }));
  }

  private turnStart(): Stage {
    const turnIndex = this.turnIndex++;
    this.currentTurn = turnIndex;
    this.assistant = undefined;
    this.partial = undefined;
    this.messageStarted = false;
    this.failure = undefined;
    this.toolResults = [];
    return [{ type: 'TurnStart', loopId: this.loopId, turnIndex, timestamp: this.now(), triggeredBy: this.triggerFor(turnIndex) }];
  }

  private triggerFor(turnIndex: number): TurnTrigger {
    if (turnIndex > 0) return 'continuation';
    const kind = this.context.continuationKind?.kind;
    if (kind === 'branch') return 'branch';
    if (kind !== undefined || this.prompts === undefined) return 'continuation';
    return this.config.firstTurnTrigger ?? 'user';
  }

  /** Adds messages to the context and announces each with MessageStart / MessageEnd. */
  private append(messages: AgentMessage[], turnIndex?: number): AgentEvent[] {
    if (messages.length === 0) return NO_EVENTS;
    const events: AgentEvent[] = [];
    for (const m of messages) {
      const stored = turnIndex === undefined || isExtension(m) ? m : ({ ...m, turnId: { loopId: this.loopId, turnIndex } } as LlmMessage);
      this.record(stored);
      const timestamp = this.now();
      events.push({ type: 'MessageStart', loopId: this.loopId, message: stored, timestamp }, { type: 'MessageEnd', loopId: this.loopId, message: stored, timestamp });
    }
    return events;
  }

  private record(message: AgentMessage): void {
    this.messages.push(message);
    this.newMessages.push(message);
    this.fresh.push(message);
  }

  // ---- before the model call ------------------------------------------------------------------

  /** Compaction, pre-turn policies and transforms leave the request for the model call here. */
  private request: StreamRequest | undefined;

  private compaction(reason: 'budget' | 'overflow'): EventStage {
    const cfg = this.contextConfig;
    return cfg ? this.through$(compactContext(cfg, { reason, scheduler: this.scheduler })) : undefined;
  }

  /** The run's state as a value, for a stage. */
  private snapshot(): LoopState {
    const state: LoopState = { type: 'LoopState', loopId: this.loopId, messages: this.messages, pending: this.pending, turnIndex: this.currentTurn };
    return {
      ...state,
      ...(this.ended ? { ended: this.ended } : {}),
      ...(this.request ? { request: this.request } : {}),
      ...(this.partial ? { partial: this.partial } : {}),
      ...(this.assistant ? { assistant: this.assistant } : {}),
      ...(this.failure ? { failure: this.failure } : {}),
    };
  }

  /** Takes on the state a stage left (arrays it replaced are copied: the run still appends to its own). */
  private adopt(state: LoopState): void {
    if (state.messages !== this.messages) this.messages = state.messages.slice();
    if (state.pending !== this.pending) this.pending = state.pending.slice();
    this.request = state.request;
    this.partial = state.partial;
    if (state.partial) this.messageStarted = true;
    this.assistant = state.assistant;
    this.failure = state.failure;
    this.stagedResults = state.toolResults;
    if (state.stopRequested !== undefined) this.stopRequested = state.stopRequested;
    if (state.ended) this.ended = state.ended;
  }

  /** Tool results the tool stage handed on, until the run records them. */
  private stagedResults: readonly ToolResultMessage[] | undefined;

  /** How the last model call failed (after its retries), until the turn settles it. */
  private failure: { readonly error: unknown } | undefined;

  /** A stage on the run's state when reached, as a stage of `playStages` (which adopts the state it leaves). */
  private direct$(stage: LoopStage): Observable<LoopOutput> {
    return defer(() => stage(of(this.snapshot())));
  }

  private readonly adoptState = (state: LoopState): void => this.adopt(state);

  /** Runs a stage on the run's state when reached: its events go out, the state it leaves is adopted. */
  private through$(stage: LoopStage, state: () => LoopState = () => this.snapshot()): Observable<AgentEvent> {
    // One observer that sorts events from the state: no extra operator hop for every delta.
    return new Observable<AgentEvent>((subscriber) =>
      stage(of(state())).subscribe({
        next: (out) => (isLoopState(out) ? this.adopt(out) : subscriber.next(out)),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      }),
    );
  }

  private preTurnPolicies$(turnIndex: number): Stage {
    const policies = this.config.policies?.preTurn ?? [];
    if (policies.length === 0) return undefined;
    return from(policies).pipe(
      concatMap((policy) =>
        defer(() => {
          if (this.ended) return EMPTY;
          const ctx = { newMessages: this.fresh.slice(), messages: this.messages, turnIndex };
          return this.hook$('preTurn', () => policy(ctx), { action: 'continue' } as PolicyVerdict, () => undefined, (v) => this.applyPreTurn$(v));
        }),
      ),
    );
  }

  private applyPreTurn$(verdict: PolicyVerdict): Observable<AgentEvent> {
    if (verdict.action === 'inject') return from(this.append(verdict.messages, this.turnIndex - 1));
    if (verdict.action === 'stop') {
      this.ended = 'guardRail';
      const message: AssistantMessage = {
        role: 'assistant',
        content: [{ type: 'text', text: `[Stopped by policy: ${verdict.reason}]` }],
        stopReason: 'guardRail',
        model: this.config.model.id,
        provider: this.config.model.provider,
        usage: Usage.empty(),
        timestamp: this.now(),
        errorMessage: verdict.reason,
      };
      this.assistant = message;
      return from(this.append([message], this.turnIndex - 1));
    }
    return EMPTY;
  }

  private buildRequest$(): EventStage {
    const c = this.config;
    if (!c.asyncTransformContext && !c.transformContext && !c.operators?.context && !c.getApiKey) {
      // Nothing to await or to guard against: build the request at once (every turn of a plain run).
      this.setRequest(this.requestFor(this.messages, c.model.apiKey));
      return this.hookErrors.length ? this.hookErrors.splice(0) : undefined;
    }
    return defer(() => {
      let messages$: Observable<AgentMessage[]> = of(this.messages.slice());
      const asyncTransform = c.asyncTransformContext;
      if (asyncTransform) {
        messages$ = messages$.pipe(concatMap((m) => this.safely$('asyncTransformContext', () => asyncTransform(m, c.signal), m)));
      }
      const transform = c.transformContext;
      if (transform) messages$ = messages$.pipe(concatMap((m) => this.safely$('transformContext', () => transform(m), m)));
      if (c.operators?.context) messages$ = messages$.pipe(c.operators.context);
      const getKey = c.getApiKey;
      return messages$.pipe(
        concatMap((messages) =>
          (getKey ? this.safely$('getApiKey', () => getKey(c.model), c.model.apiKey) : of(c.model.apiKey)).pipe(
            map((apiKey) => this.requestFor(messages, apiKey)),
          ),
        ),
        tap((request) => this.setRequest(request)),
        ignoreElements(),
        (built$) => concat(built$, defer(() => this.drainHookErrors())),
      );
    });
  }

  private setRequest(request: StreamRequest): void {
    this.request = request;
    this.fresh = [];
  }

  /** `messages` is the context to send: `this.messages` itself on the plain path (it is not modified here). */
  private requestFor(messages: AgentMessage[], apiKey: string | undefined): StreamRequest {
    const c = this.config;
    let llm: Message[];
    if (c.convertToLlm) llm = c.convertToLlm(messages === this.messages ? messages.slice() : messages);
    else llm = messages === this.messages ? this.llmViews.of(messages) : this.llmViews.each(messages);
    const request: StreamRequest = {
      model: c.model,
      systemPrompt: this.context.systemPrompt,
      messages: llm,
      tools: this.toolDefs,
      thinkingLevel: c.thinkingLevel ?? 'off',
      cacheConfig: c.cacheConfig ?? DEFAULT_CACHE_CONFIG,
      sessionId: this.sessionId,
    };
    // Optional fields only when set (no throwaway objects to spread on every turn).
    if (c.maxTokens !== undefined) request.maxTokens = c.maxTokens;
    if (c.temperature !== undefined) request.temperature = c.temperature;
    if (apiKey !== undefined) request.apiKey = apiKey;
    return request;
  }

  // ---- the model call -----------------------------------------------------------------------

  /**
   * The model call (the `callModel` stage), then what settles the turn: a failure is recovered (a
   * context overflow) or kept as an error turn, and an aborted or empty stream still leaves one
   * assistant message.
   */
  private *modelCall(turnIndex: number): Generator<Stage, void, undefined> {
    if (this.ended || !this.request) return;
    yield this.direct$(this.modelStage());
    const failure = this.failure;
    if (failure) yield this.recover$(failure.error);
    yield this.settle(turnIndex);
  }

  private modelStageMade: LoopStage | undefined;

  /** One provider call of the state's request, with retries, cut by abort, as message lifecycle events. */
  private attempt$(): Observable<AgentEvent> {
    return this.through$(this.modelStage());
  }

  /** The `callModel` stage as this run configures it, made once. */
  private modelStage(): LoopStage {
    const c = this.config;
    return (this.modelStageMade ??= callModel({
      provider: this.provider,
      retry: c.retry === false ? NO_RETRY : (c.retry ?? {}),
      scheduler: this.scheduler,
      ...(c.random ? { random: c.random } : {}),
      ...(c.signal ? { signal: c.signal } : {}),
      ...(c.operators?.providerStream ? { providerStream: c.operators.providerStream } : {}),
    }));
  }

  /** A failed call: one compaction-and-retry for a context overflow, else a failed turn that is kept. */
  private recover$(error: unknown): Observable<AgentEvent> {
    const overflow = isProviderError(error) && error.kind === 'contextOverflow';
    if (overflow && this.contextConfig && !this.overflowRecovered && !this.messageStarted) {
      this.overflowRecovered = true;
      return concat(
        defer(() => toObservable(this.compaction('overflow'))),
        defer(() => toObservable(this.buildRequest$())),
        this.attempt$(),
        defer(() => (this.failure ? this.fail$(this.failure.error) : EMPTY)),
      ).pipe(catchError((again: unknown) => this.fail$(again)));
    }
    return this.fail$(error);
  }

  private fail$(error: unknown): Observable<AgentEvent> {
    if (isCut(error, this.config.signal)) return EMPTY; // settle closes it as aborted
    return defer(() => {
      this.failure = { error };
      const onError = this.config.hooks?.onError;
      const c = this.config;
      return concat(
        this.through$(this.settleStage()),
        onError ? this.through$(onErrorHook(onError, { scheduler: this.scheduler, ...(c.signal ? { signal: c.signal } : {}) })) : EMPTY,
      );
    });
  }

  private settleStageMade: LoopStage | undefined;

  /** The `settleCall` stage as this run configures it, made once. */
  private settleStage(): LoopStage {
    const c = this.config;
    return (this.settleStageMade ??= settleCall({ model: c.model, scheduler: this.scheduler, ...(c.signal ? { signal: c.signal } : {}) }));
  }

  /** After the call: an aborted or empty stream still leaves exactly one assistant message. */
  private settle(turnIndex: number): Stage {
    if (this.assistant) {
      this.recordAssistant(this.assistant, turnIndex);
      return NO_EVENTS;
    }
    return concat(
      this.through$(this.settleStage()),
      defer(() => {
        this.recordAssistant(this.assistant!, turnIndex);
        return EMPTY;
      }),
    );
  }

  private recordAssistant(message: AssistantMessage, turnIndex: number): void {
    (message as LlmMessage).turnId = { loopId: this.loopId, turnIndex };
    this.record(message);
    Usage.accumulate(this.usage, message.usage);
    this.lastStopReason = message.stopReason;
    if (message.stopReason === 'error' || message.stopReason === 'aborted') this.ended = message.stopReason;
  }

  // ---- tools --------------------------------------------------------------------------------

  private toolStage: LoopStage | undefined;

  /** The `runToolCalls` stage, when the assistant message calls tools. */
  private tools$(): Stage {
    const assistant = this.assistant;
    if (!assistant || assistant.stopReason === 'error' || assistant.stopReason === 'guardRail') return undefined;
    if (toolCallsOf(assistant).length === 0) return undefined;
    const c = this.config;
    this.toolStage ??= runToolCalls({
      tools: this.context.tools,
      strategy: c.toolExecution ?? 'parallel',
      scheduler: this.scheduler,
      now: this.now,
      ...(c.toolTimeoutMs !== undefined ? { timeoutMs: c.toolTimeoutMs } : {}),
      ...(c.signal ? { signal: c.signal } : {}),
      ...(c.hooks ? { hooks: c.hooks } : {}),
      preDispatch: c.policies?.preDispatch ?? [],
      // Without a steering source nothing can arrive: no checkpoints or interrupt wiring to pay for on every call.
      ...(c.steering ? { steering: this.steering.check() } : {}),
      ...(c.operators?.toolResults ? { toolResults: c.operators.toolResults } : {}),
      ...(c.operators?.toolCalls ? { toolCalls: c.operators.toolCalls } : {}),
      ...(c.approval ? { approval: c.approval } : {}),
      ...(c.cancelToolCalls ? { cancel$: c.cancelToolCalls } : {}),
    });
    return this.direct$(this.toolStage);
  }

  /** The tool results the stage handed on enter the context, in the order of the calls. */
  private recordToolResults(): void {
    const results = this.stagedResults;
    if (!results) return;
    this.stagedResults = undefined;
    for (const result of results) {
      this.toolResults.push(result);
      this.record(result);
    }
    if (this.config.signal?.aborted) this.ended = 'aborted';
  }

  private pollSteering$(): Stage {
    // No source, nothing to poll: only a steering source ever fills the buffer.
    if (!this.config.steering || this.ended) return undefined;
    const taken = this.steering.take();
    // One poll per turn start: a OneAtATime queue hands over one message per turn.
    if (taken.length > 0) this.polledThisTurn = true;
    return this.admit$(taken);
  }

  /** Queued messages through the input filters into `pending`; rejected ones are announced and dropped. */
  private admit$(queued: QueuedMessage[]): Stage {
    if (queued.length === 0) return undefined;
    const messages = queued.map((q) => q.message);
    return this.through$(injectQueued(() => messages, { filters: this.config.inputFilters ?? [], scheduler: this.scheduler }));
  }

  // ---- after the tools ----------------------------------------------------------------------

  private postTurnStage: LoopStage | undefined;

  /** The `postTurnPolicies` stage on the turn's message and results; a replaced message is replaced in the run's records too. */
  private postTurn$(): Stage {
    const policies = this.config.policies?.postTurn ?? [];
    if (policies.length === 0) return undefined;
    this.postTurnStage ??= postTurnPolicies(policies, { scheduler: this.scheduler });
    const before = this.assistant;
    return concat(
      this.through$(this.postTurnStage, () => ({ ...this.snapshot(), toolResults: this.toolResults })),
      defer(() => {
        this.stagedResults = undefined; // already recorded
        const after = this.assistant;
        if (before && after && after !== before) {
          const i = this.newMessages.lastIndexOf(before);
          if (i >= 0) this.newMessages[i] = after;
          this.llmViews.reset(); // the context changed in place
        }
        return EMPTY;
      }),
    );
  }

  private turnEnd$(turnIndex: number): Stage {
    const message = this.assistant;
    if (!message) return undefined;
    const end: AgentEvent = {
      type: 'TurnEnd', loopId: this.loopId, turnIndex, message, usage: message.usage, timestamp: this.now(), toolResults: this.toolResults,
    };
    const after = this.config.hooks?.afterTurn;
    return after ? concat(of(end), this.through$(afterTurnHook(after, { scheduler: this.scheduler }))) : [end];
  }

  /** Whether another turn runs: tool results to answer, steering, then follow-ups, then post-loop policies. */
  private *decideNext(): Generator<Stage, void, undefined> {
    if (this.config.signal?.aborted) this.ended = 'aborted';
    if (this.ended) return;
    if (this.stopRequested !== undefined) {
      this.ended = this.lastStopReason;
      return;
    }
    if (this.toolResults.length > 0 || this.pending.length > 0 || this.steering.pending()) {
      this.nextTurn = true;
      return;
    }
    yield this.admit$(takeQueued(this.config.followUp));
    if (this.pending.length === 0) yield this.postLoop$();
    this.nextTurn = this.pending.length > 0;
  }

  private postLoop$(): Stage {
    const policies = this.config.policies?.postLoop ?? [];
    if (policies.length === 0) return undefined;
    return from(policies).pipe(
      concatMap((policy) =>
        defer(() => {
          if (this.pending.length > 0 || this.ended) return EMPTY;
          const ctx = { messages: this.messages, newMessages: this.newMessages };
          return this.hook$('postLoop', () => policy(ctx), { action: 'continue' } as PolicyVerdict, (v) => {
            if (v.action === 'inject') this.pending.push(...v.messages);
            if (v.action === 'stop') this.ended = this.lastStopReason;
          });
        }),
      ),
    );
  }

  // ---- hooks --------------------------------------------------------------------------------

  private readonly hookErrors: AgentEvent[] = [];

  /**
   * Calls a hook, hands its answer to `use`, and emits a HookError event if it threw (it then
   * counts as `fallback`). `then` may return events that follow from the answer.
   */
  private hook$<T>(
    name: string,
    call: () => HookResult<T | void>,
    fallback: T,
    use: (value: T) => void,
    then?: (value: T) => Observable<AgentEvent>,
  ): Observable<AgentEvent> {
    let failure: AgentEvent | undefined;
    return callHookSafely<T>(call, fallback, (e) => (failure = this.hookError(name, errorMessage(e)))).pipe(
      concatMap((value) => {
        use(value);
        const report = failure ? of(failure) : EMPTY;
        return then ? concat(report, then(value)) : report;
      }),
    );
  }

  /** Like hook$ for transforms that produce a value the pipeline continues with. */
  private safely$<T>(name: string, call: () => HookResult<T>, fallback: T): Observable<T> {
    return callHookSafely<T>(call, fallback, (e) => this.hookErrors.push(this.hookError(name, errorMessage(e))));
  }

  private drainHookErrors(): Observable<AgentEvent> {
    return this.hookErrors.length ? from(this.hookErrors.splice(0)) : EMPTY;
  }

  private hookError(hook: string, message: string): AgentEvent {
    return { type: 'HookError', loopId: this.loopId, hook, message, timestamp: this.now() };
  }

  /** An arrow, so that it can be handed on (toMessageEvents reads it once per delta). */
  private readonly now = (): number => this.scheduler.now();
}

/** Queued on the queue scheduler: within a running flush it waits for the current turn to unwind. */
const nextTurnSignal = scheduled([true], queueScheduler);
