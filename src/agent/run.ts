import {
  asyncScheduler, catchError, concat, concatMap, defer, EMPTY, from, identity, ignoreElements, map, NEVER, Observable, of,
  queueScheduler, repeat, type SchedulerLike, subscribeOn, takeUntil, tap,
} from 'rxjs';
import type { AgentEvent, CompactionEndEvent } from '../types/events.js';
import {
  type AgentMessage, type AssistantMessage, type LlmMessage, type Message, type StopReason, type ToolResultMessage,
  isExtension, toLlmMessages, toolCallsOf,
} from '../types/message.js';
import type { ToolCall } from '../types/content.js';
import type { StreamRequest, Provider } from '../types/provider.js';
import { DEFAULT_CACHE_CONFIG, DEFAULT_CONTEXT_CONFIG, NO_RETRY, type ContextConfig, type SteeringPolicy, type TurnTrigger } from '../types/config.js';
import { AgentError, errorMessage, isProviderError } from '../types/errors.js';
import type { HookResult, PolicyVerdict, PostTurnVerdict } from '../types/hooks.js';
import { Usage } from '../types/usage.js';
import type { ToolDefinition } from '../types/tool.js';
import { callHookSafely } from '../sources/hook-result.js';
import { fromAbortSignal } from '../sources/cancellation.js';
import { MessageQueue, type MessageSource, type QueuedMessage } from '../sources/queues.js';
import { TOOL_TEXTS } from '../sources/tool-run.js';
import { defaultProviderRegistry } from '../sources/providers/registry.js';
import { effectiveBudget } from '../context/compaction.js';
import { estimateContextTokens } from '../context/tokens.js';
import { compact } from '../operators/compact.js';
import { dispatchTools, type SteeringCheck } from '../operators/dispatch-tools.js';
import { filterInput } from '../operators/filter-input.js';
import { limitExecution } from '../operators/limit-execution.js';
import { retryBackoff } from '../operators/retry-backoff.js';
import { toMessageEvents } from '../operators/to-message-events.js';
import type { AgentContext, AgentLoopConfig } from './config.js';
import { defaultIds } from './ids.js';

const POLICY_STRENGTH: Record<SteeringPolicy, number> = { wait: 0, skip: 1, interrupt: 2 };

/**
 * The state of one run and the stages of its pipeline. Each stage is a small cold Observable of
 * events; `events$` composes them. State lives here rather than in a scan because stages read it
 * lazily (`defer`) at the moment they start, which is exactly the spec's checkpoint semantics.
 */
export class Run {
  private readonly scheduler: SchedulerLike;
  private readonly provider: Provider;
  private readonly abort$: Observable<void>;
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
  private readonly steeringBuffer: QueuedMessage[] = [];
  private readonly usage = Usage.empty();
  private turnIndex = 0;
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
    private readonly prompts: readonly AgentMessage[] | undefined,
  ) {
    const ids = config.ids ?? defaultIds;
    if (prompts === undefined) this.checkContinuable(context);
    this.scheduler = config.scheduler ?? asyncScheduler;
    this.agentId = context.agentId ?? ids();
    this.sessionId = context.sessionId ?? ids();
    this.loopId = context.loopId ?? ids();
    this.provider = config.provider ?? defaultProviderRegistry().resolve(config.model);
    this.abort$ = config.signal ? fromAbortSignal(config.signal) : NEVER;
    this.toolDefs = context.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
    this.contextConfig = config.contextConfig ? { ...DEFAULT_CONTEXT_CONFIG, ...config.contextConfig } : undefined;
    this.messages = context.messages.slice();
    this.context = context;
  }

  private readonly context: AgentContext;

  events$(): Observable<AgentEvent> {
    return stages(
      this.beforeLoop$(),
      defer(() => (this.vetoed ? of(this.agentEndEvent('userStop')) : stages(of(this.agentStartEvent()), this.start$(), this.turns$(), this.end$()))),
    );
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
    if (last.role === 'assistant' && queued === 0) {
      throw new AgentError(
        'InvalidContinue',
        'Cannot continue: the context ends with an assistant message and nothing is queued. Add a user message, steer or follow up first.',
      );
    }
  }

  private beforeLoop$(): Observable<AgentEvent> {
    const hook = this.config.hooks?.beforeLoop;
    if (!hook) return EMPTY;
    return this.hook$('beforeLoop', () => hook(this.messages, 0), true as boolean | void, (ok) => {
      if (ok === false) this.vetoed = true;
    });
  }

  private agentStartEvent(): AgentEvent {
    const c = this.context;
    return {
      type: 'AgentStart',
      agentId: this.agentId,
      sessionId: this.sessionId,
      loopId: this.loopId,
      ...(c.parentLoopId ? { parentLoopId: c.parentLoopId } : {}),
      ...(c.continuationKind ? { continuationKind: c.continuationKind } : {}),
      timestamp: this.now(),
      ...(this.config.metadata !== undefined ? { metadata: this.config.metadata } : {}),
    };
  }

  /** Filters the prompts (an origin call) or picks up queued follow-ups (a continuation). */
  private start$(): Observable<AgentEvent> {
    if (this.prompts === undefined) {
      return defer(() => {
        const last = this.messages[this.messages.length - 1];
        if (last?.role === 'assistant' && queuedSize(this.config.steering) === 0) return this.admit$(takeQueued(this.config.followUp), 'followUp');
        return EMPTY;
      });
    }
    const filters = this.config.inputFilters ?? [];
    if (filters.length === 0) {
      this.pending.push(...this.prompts);
      return EMPTY;
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

  /** Turn after turn while there is work; `limitExecution` guards each one. */
  private turns$(): Observable<AgentEvent> {
    const limits = this.config.limits;
    const guard = limits
      ? limitExecution(limits, {
          scheduler: this.scheduler,
          ...(this.config.model.cost ? { pricing: this.config.model.cost } : {}),
          onLimit: (reason) => this.limitReached$(reason),
        })
      : identity;
    return defer(() => {
      this.nextTurn = false;
      return this.ended ? EMPTY : this.turn$();
    }).pipe(
      guard,
      // Trampoline: a synchronous run (scripted provider, sync tools) repeats without growing the stack.
      subscribeOn(queueScheduler),
      repeat({ delay: () => (this.nextTurn && !this.ended ? of(true) : EMPTY) }),
    );
  }

  private limitReached$(reason: string): Observable<AgentEvent> {
    return defer(() => {
      this.ended = reason.startsWith('Max turns') ? 'maxTurns' : 'guardRail';
      const message: AgentMessage = { role: 'user', content: [{ type: 'text', text: `[Agent stopped: ${reason}]` }], timestamp: this.now() };
      return this.append$([message]);
    });
  }

  private end$(): Observable<AgentEvent> {
    return defer(() => {
      const end = this.agentEndEvent(this.ended ?? this.lastStopReason);
      const after = this.config.hooks?.afterLoop;
      return after ? concat(of(end), this.hook$('afterLoop', () => after(this.newMessages, this.usage), undefined, () => undefined)) : of(end);
    });
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

  private turn$(): Observable<AgentEvent> {
    this.polledThisTurn = false;
    return stages(
      this.pollSteering$(), // checkpoint 6: loop re-entry
      this.beforeTurn$(),
      defer(() => (this.ended ? EMPTY : this.turnBody$())),
    );
  }

  private beforeTurn$(): Observable<AgentEvent> {
    const hook = this.config.hooks?.beforeTurn;
    if (!hook) return EMPTY;
    return this.hook$('beforeTurn', () => hook(this.messages, this.turnIndex), true as boolean | void, (ok) => {
      if (ok === false) this.ended = 'userStop';
    });
  }

  private turnBody$(): Observable<AgentEvent> {
    const turnIndex = this.turnIndex++;
    this.assistant = undefined;
    this.partial = undefined;
    this.messageStarted = false;
    this.toolResults = [];
    return stages(
      of<AgentEvent>({ type: 'TurnStart', loopId: this.loopId, turnIndex, timestamp: this.now(), triggeredBy: this.triggerFor(turnIndex) }),
      this.config.steering ? defer(() => (this.polledThisTurn ? EMPTY : this.pollSteering$())) : EMPTY, // checkpoint 1: after before_turn, before the model call
      defer(() => this.append$(this.pending.splice(0), turnIndex)),
      this.prepare$(turnIndex),
      this.stream$(turnIndex),
      this.tools$(turnIndex),
      this.postTurn$(turnIndex),
      this.turnEnd$(turnIndex),
      this.decideNext$(),
    );
  }

  private triggerFor(turnIndex: number): TurnTrigger {
    if (turnIndex > 0) return 'continuation';
    const kind = this.context.continuationKind?.kind;
    if (kind === 'branch') return 'branch';
    if (kind !== undefined || this.prompts === undefined) return 'continuation';
    return this.config.firstTurnTrigger ?? 'user';
  }

  /** Adds messages to the context and announces each with MessageStart / MessageEnd. */
  private append$(messages: AgentMessage[], turnIndex?: number): Observable<AgentEvent> {
    if (messages.length === 0) return EMPTY;
    const events: AgentEvent[] = [];
    for (const m of messages) {
      const stored = turnIndex === undefined || isExtension(m) ? m : ({ ...m, turnId: { loopId: this.loopId, turnIndex } } as LlmMessage);
      this.record(stored);
      const timestamp = this.now();
      events.push({ type: 'MessageStart', loopId: this.loopId, message: stored, timestamp }, { type: 'MessageEnd', loopId: this.loopId, message: stored, timestamp });
    }
    return from(events);
  }

  private record(message: AgentMessage): void {
    this.messages.push(message);
    this.newMessages.push(message);
    this.fresh.push(message);
  }

  // ---- before the model call ------------------------------------------------------------------

  /** Transforms, compaction, pre-turn policies; leaves the request in `this.request`. */
  private request: StreamRequest | undefined;

  private prepare$(turnIndex: number): Observable<AgentEvent> {
    return stages(
      this.compaction$('budget'),
      this.preTurnPolicies$(turnIndex),
      defer(() => (this.ended ? EMPTY : this.buildRequest$())),
    );
  }

  private compaction$(reason: 'budget' | 'overflow'): Observable<AgentEvent> {
    if (!this.contextConfig) return EMPTY;
    return defer(() => {
      const cfg = this.contextConfig;
      if (!cfg) return EMPTY;
      const tokensBefore = estimateContextTokens(this.messages);
      // After an overflow the estimate was wrong: aim well below what we sent.
      const budget = reason === 'overflow' ? Math.min(effectiveBudget(cfg), Math.floor(tokensBefore * 0.6)) : effectiveBudget(cfg);
      if (reason === 'budget' && tokensBefore <= budget) return EMPTY;
      const messagesBefore = this.messages.length;
      const startedAt = this.now();
      return of(this.messages).pipe(
        compact(cfg, { budget }),
        concatMap((result) => {
          this.messages = result.messages;
          const end: CompactionEndEvent = {
            type: 'CompactionEnd',
            loopId: this.loopId,
            tier: result.tier ?? 1,
            tokensBefore: result.tokensBefore,
            tokensAfter: result.tokensAfter,
            messagesBefore,
            messagesAfter: result.messages.length,
            timestamp: this.now(),
          };
          const start: AgentEvent = { type: 'CompactionStart', loopId: this.loopId, reason, tokensBefore, timestamp: startedAt };
          return from([start, end]);
        }),
      );
    });
  }

  private preTurnPolicies$(turnIndex: number): Observable<AgentEvent> {
    const policies = this.config.policies?.preTurn ?? [];
    if (policies.length === 0) return EMPTY;
    return from(policies).pipe(
      concatMap((policy) =>
        defer(() => {
          if (this.ended) return EMPTY;
          const ctx = { newMessages: this.fresh.slice(), messages: this.messages, turnIndex };
          return this.hook$('preTurn', () => policy(ctx), { action: 'continue' } as PolicyVerdict, (v) => undefined, (v) => this.applyPreTurn$(v));
        }),
      ),
    );
  }

  private applyPreTurn$(verdict: PolicyVerdict): Observable<AgentEvent> {
    if (verdict.action === 'inject') return this.append$(verdict.messages, this.turnIndex - 1);
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
      return this.append$([message], this.turnIndex - 1);
    }
    return EMPTY;
  }

  private buildRequest$(): Observable<AgentEvent> {
    const c = this.config;
    if (!c.asyncTransformContext && !c.transformContext && !c.operators?.context && !c.getApiKey) {
      // Nothing to await or to guard against: build the request at once (every turn of a plain run).
      return defer(() => {
        this.setRequest(this.requestFor(this.messages.slice(), c.model.apiKey));
        return this.drainHookErrors();
      });
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

  private requestFor(messages: AgentMessage[], apiKey: string | undefined): StreamRequest {
    const c = this.config;
    return {
      model: c.model,
      systemPrompt: this.context.systemPrompt,
      messages: c.convertToLlm ? c.convertToLlm(messages) : this.llmMessages(messages),
      tools: this.toolDefs,
      thinkingLevel: c.thinkingLevel ?? 'off',
      ...(c.maxTokens !== undefined ? { maxTokens: c.maxTokens } : {}),
      ...(c.temperature !== undefined ? { temperature: c.temperature } : {}),
      cacheConfig: c.cacheConfig ?? DEFAULT_CACHE_CONFIG,
      ...(apiKey !== undefined ? { apiKey } : {}),
      sessionId: this.sessionId,
    };
  }

  /** What the provider sees of each message, made once per message (`null`: not sent). */
  private readonly llmViews = new WeakMap<AgentMessage, Message | null>();

  /**
   * `toLlmMessages`, remembering each message's view: messages are not changed once recorded, and
   * converting the whole conversation again on every turn would make a long run quadratic.
   */
  private llmMessages(messages: readonly AgentMessage[]): Message[] {
    const out: Message[] = [];
    for (const m of messages) {
      let view = this.llmViews.get(m);
      if (view === undefined) {
        view = toLlmMessages([m])[0] ?? null;
        this.llmViews.set(m, view);
      }
      if (view !== null) out.push(view);
    }
    return out;
  }

  // ---- the model call -----------------------------------------------------------------------

  private stream$(turnIndex: number): Observable<AgentEvent> {
    return defer(() => {
      if (this.ended || !this.request) return EMPTY;
      return this.attempt$(this.request).pipe(
        catchError((error: unknown) => this.recover$(error, turnIndex)),
        (source) => concat(source, defer(() => this.settle$(turnIndex))),
      );
    });
  }

  /** One provider call with retries, cut by abort, as message lifecycle events. */
  private attempt$(request: StreamRequest): Observable<AgentEvent> {
    const c = this.config;
    return new Observable<AgentEvent>((subscriber) => {
      const stream$ = this.provider(request, { ...(c.signal ? { signal: c.signal } : {}), scheduler: this.scheduler }).pipe(
        c.operators?.providerStream ?? identity,
        retryBackoff(c.retry === false ? NO_RETRY : (c.retry ?? {}), {
          scheduler: this.scheduler,
          ...(c.random ? { random: c.random } : {}),
          onRetry: (attempt, delayMs, error) =>
            subscriber.next({
              type: 'RetryScheduled', loopId: this.loopId, attempt, delayMs, errorKind: error.kind, errorMessage: error.message, timestamp: this.now(),
            }),
        }),
        c.signal ? takeUntil(this.abort$) : identity,
        toMessageEvents({ loopId: this.loopId, now: () => this.now(), onPartial: (p) => (this.partial = p) }),
      );
      return stream$.subscribe({
        next: (e) => {
          if (e.type === 'MessageStart') this.messageStarted = true;
          else if (e.type === 'MessageEnd') this.assistant = e.message as AssistantMessage;
          subscriber.next(e);
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => subscriber.complete(),
      });
    });
  }

  /** A failed call: one compaction-and-retry for a context overflow, else a failed turn that is kept. */
  private recover$(error: unknown, turnIndex: number): Observable<AgentEvent> {
    const overflow = isProviderError(error) && error.kind === 'contextOverflow';
    if (overflow && this.contextConfig && !this.overflowRecovered && !this.messageStarted) {
      this.overflowRecovered = true;
      return concat(
        this.compaction$('overflow'),
        this.buildRequest$(),
        defer(() => this.attempt$(this.request!)),
      ).pipe(catchError((again: unknown) => this.fail$(again, turnIndex)));
    }
    return this.fail$(error, turnIndex);
  }

  private fail$(error: unknown, turnIndex: number): Observable<AgentEvent> {
    if (this.config.signal?.aborted || (isProviderError(error) && error.kind === 'cancelled')) return EMPTY; // settle$ closes it as aborted
    const text = isProviderError(error) ? `${error.kind}: ${error.message}` : errorMessage(error);
    const message = this.closedPartial('error', text);
    this.assistant = message;
    const onError = this.config.hooks?.onError;
    return concat(
      this.finalMessage$(message),
      onError ? this.hook$('onError', () => onError(text, error), undefined, () => undefined) : EMPTY,
    );
  }

  /** After the call: an aborted or empty stream still leaves exactly one assistant message. */
  private settle$(turnIndex: number): Observable<AgentEvent> {
    if (this.assistant) {
      this.recordAssistant(this.assistant, turnIndex);
      return EMPTY;
    }
    const aborted = this.config.signal?.aborted === true;
    const message = aborted
      ? this.closedPartial('aborted', 'Aborted by the caller.')
      : this.closedPartial('error', 'other: the provider stream completed without a final message');
    this.assistant = message;
    this.recordAssistant(message, turnIndex);
    return this.finalMessage$(message);
  }

  private recordAssistant(message: AssistantMessage, turnIndex: number): void {
    (message as LlmMessage).turnId = { loopId: this.loopId, turnIndex };
    this.record(message);
    Usage.accumulate(this.usage, message.usage);
    this.lastStopReason = message.stopReason;
    if (message.stopReason === 'error' || message.stopReason === 'aborted') this.ended = message.stopReason;
  }

  /** The partial so far, closed: text and thinking kept, half-streamed tool calls dropped. */
  private closedPartial(stopReason: StopReason, errorText: string): AssistantMessage {
    const p = this.partial;
    return {
      role: 'assistant',
      content: p ? p.content.filter((c) => c.type !== 'toolCall') : [],
      stopReason,
      model: p?.model ?? this.config.model.id,
      provider: p?.provider ?? this.config.model.provider,
      usage: p ? { ...p.usage } : Usage.empty(),
      timestamp: p?.timestamp ?? this.now(),
      errorMessage: errorText,
    };
  }

  private finalMessage$(message: AssistantMessage): Observable<AgentEvent> {
    const events: AgentEvent[] = [];
    if (!this.messageStarted) events.push({ type: 'MessageStart', loopId: this.loopId, message, timestamp: this.now() });
    this.messageStarted = true;
    events.push({ type: 'MessageEnd', loopId: this.loopId, message, timestamp: this.now() });
    return from(events);
  }

  // ---- tools --------------------------------------------------------------------------------

  private tools$(turnIndex: number): Observable<AgentEvent> {
    return defer(() => {
      const assistant = this.assistant;
      if (!assistant || assistant.stopReason === 'error' || assistant.stopReason === 'guardRail') return EMPTY;
      const calls = toolCallsOf(assistant);
      if (calls.length === 0) return EMPTY;
      const c = this.config;
      // Truncation guard: arguments of a message cut off at `length` are never "repaired" and run.
      const truncated = assistant.stopReason === 'length';
      const results = new Map<string, ToolResultMessage>();
      return from(calls).pipe(
        truncated ? identity : (c.operators?.toolCalls ?? identity),
        dispatchTools({
          tools: this.context.tools,
          loopId: this.loopId,
          strategy: c.toolExecution ?? 'parallel',
          scheduler: this.scheduler,
          now: () => this.now(),
          ...(c.toolTimeoutMs !== undefined ? { timeoutMs: c.toolTimeoutMs } : {}),
          ...(c.signal ? { signal: c.signal } : {}),
          ...(c.hooks ? { hooks: c.hooks } : {}),
          preDispatch: truncated ? [() => ({ action: 'skip', reason: TOOL_TEXTS.truncated })] : (c.policies?.preDispatch ?? []),
          messages: () => this.messages,
          // Without a steering source nothing can arrive: no checkpoints or interrupt wiring to pay for on every call.
          ...(c.steering ? { steering: this.steeringCheck() } : {}),
          ...(c.operators?.toolResults ? { toolResults: c.operators.toolResults } : {}),
          onStop: (reason) => (this.stopRequested = reason),
          onInject: (messages) => this.pending.push(...messages),
        }),
        tap((e) => {
          if (e.type === 'MessageEnd' && e.message.role === 'toolResult') results.set(e.message.toolCallId, e.message);
        }),
        (source) => concat(source, defer(() => this.collectResults$(calls, results, turnIndex))),
      );
    });
  }

  /** Tool results enter the context in the order of the calls, whatever order they finished in. */
  private collectResults$(calls: ToolCall[], results: Map<string, ToolResultMessage>, turnIndex: number): Observable<AgentEvent> {
    const missing: AgentEvent[] = [];
    for (const call of calls) {
      let result = results.get(call.id);
      if (!result) {
        // A user `toolCalls` stage dropped it: the model still needs an answer to every call.
        result = { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: 'Tool call was dropped before dispatch.' }], isError: true, timestamp: this.now() };
        missing.push({ type: 'MessageStart', loopId: this.loopId, message: result, timestamp: this.now() }, { type: 'MessageEnd', loopId: this.loopId, message: result, timestamp: this.now() });
      }
      (result as LlmMessage).turnId = { loopId: this.loopId, turnIndex };
      this.toolResults.push(result);
      this.record(result);
    }
    if (this.config.signal?.aborted) this.ended = 'aborted';
    return from(missing);
  }

  private steeringCheck(): SteeringCheck {
    const source = this.config.steering;
    return {
      pending: () => this.steeringPending(),
      policy: () => this.steeringPolicy(),
      arrivals$: source instanceof MessageQueue ? source.added$ : NEVER,
    };
  }

  private steeringPending(): boolean {
    const source = this.config.steering;
    if (!source) return this.steeringBuffer.length > 0;
    if (source instanceof MessageQueue) return source.size > 0 || this.steeringBuffer.length > 0;
    this.steeringBuffer.push(...source().map((message) => ({ message })));
    return this.steeringBuffer.length > 0;
  }

  /** The strongest policy any queued message asks for; the agent's policy when none asks. */
  private steeringPolicy(): SteeringPolicy {
    const source = this.config.steering;
    const queued = [...this.steeringBuffer, ...(source instanceof MessageQueue ? source.peek() : [])];
    let explicit: SteeringPolicy | undefined;
    for (const q of queued) if (q.policy && (!explicit || POLICY_STRENGTH[q.policy] > POLICY_STRENGTH[explicit])) explicit = q.policy;
    return explicit ?? this.config.steeringPolicy ?? 'skip';
  }

  private pollSteering$(): Observable<AgentEvent> {
    // No source, nothing to poll: only a steering source ever fills the buffer.
    if (!this.config.steering) return EMPTY;
    return defer(() => {
      if (this.ended) return EMPTY;
      const taken = [...this.steeringBuffer.splice(0), ...takeQueued(this.config.steering)];
      // One poll per turn start: a OneAtATime queue hands over one message per turn.
      if (taken.length > 0) this.polledThisTurn = true;
      return this.admit$(taken, 'steering');
    });
  }

  /** Queued messages through the input filters into `pending`; rejected ones are announced and dropped. */
  private admit$(queued: QueuedMessage[], _from: 'steering' | 'followUp'): Observable<AgentEvent> {
    if (queued.length === 0) return EMPTY;
    const messages = queued.map((q) => q.message);
    const filters = this.config.inputFilters ?? [];
    if (filters.length === 0) {
      this.pending.push(...messages);
      return EMPTY;
    }
    return from(messages).pipe(
      concatMap((m) => of([m]).pipe(filterInput(filters))),
      concatMap((verdict) => {
        if (verdict.action === 'pass') {
          this.pending.push(...verdict.messages);
          return EMPTY;
        }
        return of<AgentEvent>({ type: 'InputRejected', loopId: this.loopId, reason: verdict.reason, timestamp: this.now() });
      }),
    );
  }

  // ---- after the tools ----------------------------------------------------------------------

  private postTurn$(turnIndex: number): Observable<AgentEvent> {
    const policies = this.config.policies?.postTurn ?? [];
    if (policies.length === 0) return EMPTY;
    return from(policies).pipe(
      concatMap((policy) =>
        defer(() => {
          const message = this.assistant;
          if (!message || this.stopRequested) return EMPTY;
          const ctx = { message, toolResults: this.toolResults, messages: this.messages, turnIndex };
          return this.hook$('postTurn', () => policy(ctx), { action: 'continue' } as PostTurnVerdict, () => undefined, (v) => this.applyPostTurn$(v));
        }),
      ),
    );
  }

  private applyPostTurn$(verdict: PostTurnVerdict): Observable<AgentEvent> {
    if (verdict.action === 'stop') this.stopRequested = verdict.reason;
    if (verdict.action !== 'inject' || !this.assistant) return EMPTY;
    const current = this.assistant;
    const signature = (m: AssistantMessage): string => toolCallsOf(m).map((c) => `${c.id}:${c.name}`).join(',');
    if (signature(verdict.message) !== signature(current)) {
      return of(this.hookError('postTurn', 'an Inject verdict may replace the assistant message but not add or drop tool calls; kept the original'));
    }
    const replacement = { ...verdict.message, turnId: (current as LlmMessage).turnId } as AssistantMessage;
    this.replace(current, replacement);
    this.assistant = replacement;
    return EMPTY;
  }

  private replace(old: AgentMessage, next: AgentMessage): void {
    for (const list of [this.messages, this.newMessages]) {
      const i = list.lastIndexOf(old);
      if (i >= 0) list[i] = next;
    }
  }

  private turnEnd$(turnIndex: number): Observable<AgentEvent> {
    return defer(() => {
      const message = this.assistant;
      if (!message) return EMPTY;
      const end: AgentEvent = {
        type: 'TurnEnd', loopId: this.loopId, turnIndex, message, usage: message.usage, timestamp: this.now(), toolResults: this.toolResults,
      };
      const after = this.config.hooks?.afterTurn;
      return after ? concat(of(end), this.hook$('afterTurn', () => after(this.messages, message.usage), undefined, () => undefined)) : of(end);
    });
  }

  /** Whether another turn runs: tool results to answer, steering, then follow-ups, then post-loop policies. */
  private decideNext$(): Observable<AgentEvent> {
    return defer(() => {
      if (this.config.signal?.aborted) this.ended = 'aborted';
      if (this.ended) return EMPTY;
      if (this.stopRequested !== undefined) {
        this.ended = this.lastStopReason;
        return EMPTY;
      }
      if (this.toolResults.length > 0 || this.pending.length > 0 || this.steeringPending()) {
        this.nextTurn = true;
        return EMPTY;
      }
      return concat(
        this.admit$(takeQueued(this.config.followUp), 'followUp'),
        defer(() => (this.pending.length > 0 ? EMPTY : this.postLoop$())),
        defer(() => {
          this.nextTurn = this.pending.length > 0;
          return EMPTY;
        }),
      );
    });
  }

  private postLoop$(): Observable<AgentEvent> {
    const policies = this.config.policies?.postLoop ?? [];
    if (policies.length === 0) return EMPTY;
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

  private now(): number {
    return this.scheduler.now();
  }
}

/**
 * `concat` of the stages that can emit. A stage that is EMPTY by configuration (no hook, no
 * policy, no steering source) would still cost a subscription on every turn of every run.
 */
function stages(...parts: Observable<AgentEvent>[]): Observable<AgentEvent> {
  const live = parts.filter((part) => part !== EMPTY);
  if (live.length === 0) return EMPTY;
  return live.length === 1 ? live[0]! : concat(...live);
}

function queuedSize(source: MessageSource | undefined): number {
  return source instanceof MessageQueue ? source.size : 0;
}

function takeQueued(source: MessageSource | undefined): QueuedMessage[] {
  if (!source) return [];
  if (source instanceof MessageQueue) return source.take();
  return source().map((message) => ({ message }));
}

