import { asyncScheduler, defer, finalize, Observable, type Observer, type SchedulerLike, Subscription } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { type AgentMessage, userMessage } from '../types/message.js';
import type { ModelConfig } from '../types/provider.js';
import type { ContinuationKind, SteeringPolicy } from '../types/config.js';
import { AgentError } from '../types/errors.js';
import { parseMessagesJson } from '../types/message-checks.js';
import { MessageQueue } from '../sources/queues.js';
import { composedLoop, runLoop } from '../loop/agent-loop.js';
import type { RunCompositions } from '../loop/run-composition.js';
import { agentLoopParallel, parallelResultOf } from '../parallel/agent-loop-parallel.js';
import { forkQueue } from './forked-queue.js';
import type { Evaluator } from '../parallel/evaluate-parallel.js';
import type { AgentContext, AgentLoopConfig } from '../loop/config.js';
import { configSegment, continuationTag, defaultIds, loopIdFor } from '../loop/ids.js';
import { runText, textStream } from '../output/run-text.js';
import { runOutput } from '../output/run-output.js';
import type { OutputOf, OutputSchema } from '../output/output-spec.js';
import { shareRun, TranscriptStore } from './agent-state.js';
import type { Transcript } from '../view/transcript-state.js';
import type { BasicAgentOptions } from './agent-builder.js';
import { AgentControls } from './agent-controls.js';
import { RunFollower } from './run-follower.js';
import type { RestoredAgentState } from './agent-session.js';

export type { AgentRunOptions, BasicAgentOptions } from './agent-builder.js';

export type PromptInput = string | AgentMessage | readonly AgentMessage[];
export type ContinueKindName = 'default' | 'rerun' | 'branch';

/**
 * The stateful agent: owns the conversation, tools, queues and ids, and runs `agentLoop` for you.
 * Every run is an Observable that starts when first subscribed and is shared by later
 * subscribers (who catch up on its events, each run of deltas to one block as one update); `state$` is the view state with a current value;
 * `events$` is one hot stream of
 * every event of every run, for UIs.
 *
 * @example
 * const agent = new BasicAgent({ model: anthropic('claude-sonnet-4-5'), systemPrompt: 'Be brief.' }).withTools(add);
 * agent.events$.subscribe(render);
 * const answer = await agent.run('What is 2+2?');
 */
export class BasicAgent extends AgentControls {
  private conversation: AgentMessage[] = [];
  private readonly steering: MessageQueue;
  private readonly followUps: MessageQueue;
  private controller: AbortController | undefined;
  private streaming = false;
  private loopCounters = new Map<string, number>();
  private lastActiveAt: number | undefined;
  private readonly ids: () => string;
  private readonly scheduler: SchedulerLike;
  readonly agentId: string;
  private currentSessionId: string;
  /** The most recent loop id; the parent of the next continuation. */
  lastLoopId: string | undefined;
  /** With handoff tools: the agent that answered last (the next run starts with it); `undefined` for the agent's own. */
  activeAgent: string | undefined;

  /** Where a session of a definition takes its runs' composed stages from (`defineAgent`); a standalone agent composes each run. */
  protected compositions: RunCompositions | undefined;

  private readonly store = new TranscriptStore();
  /** Every event of every run, hot. A subscriber that throws is reported by RxJS and cannot break a run. */
  readonly events$: Observable<AgentEvent> = this.store.events$;
  /** The agent's view state ({@link Transcript}), hot with a current value: a new subscriber gets it at once. */
  readonly state$: Observable<Transcript> = this.store.state$;
  /** The current view state. */
  get state(): Transcript {
    return this.store.value;
  }

  constructor(options: BasicAgentOptions) {
    super(options);
    this.ids = options.ids ?? defaultIds;
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.agentId = options.agentId ?? this.ids();
    this.currentSessionId = options.sessionId ?? this.ids();
    this.steering = new MessageQueue(options.steeringMode ?? 'oneAtATime');
    this.followUps = new MessageQueue(options.followUpMode ?? 'oneAtATime');
  }

  // ---- state ----------------------------------------------------------------------------------

  get messages(): readonly AgentMessage[] {
    return this.conversation;
  }
  get isStreaming(): boolean {
    return this.streaming;
  }
  get sessionId(): string {
    return this.currentSessionId;
  }

  // ---- runs -----------------------------------------------------------------------------------

  /**
   * Runs the agent on new input. Starts when first subscribed and runs once however many
   * subscribe: a later subscriber shares the run and first catches up on its events, each run of
   * deltas to one block as one update (see `shareRun`); when all unsubscribe, the run is
   * cancelled. Another prompt while a run is
   * active fails with AgentError('AlreadyRunning') and leaves that run alone. `options.output`
   * asks this run for structured output (see `config.output`), on its AgentEnd.
   */
  prompt(input: PromptInput, options?: { output?: OutputSchema }): Observable<AgentEvent> {
    return shareRun((sink) => this.startPrompt(input, options, sink));
  }

  /**
   * `prompt` for a caller that subscribes once and keeps no Observable a later subscriber could
   * reach (`run`): cold, so nothing is kept for a replay that cannot happen.
   */
  private promptOnce(input: PromptInput, options?: { output?: OutputSchema }): Observable<AgentEvent> {
    return new Observable<AgentEvent>((subscriber) => this.startPrompt(input, options, subscriber));
  }

  private startPrompt(input: PromptInput, options: { output?: OutputSchema } | undefined, sink: Observer<AgentEvent>): Subscription {
    this.assertIdle('prompt');
    const prompts = toMessages(input, this.scheduler.now());
    return this.execute(prompts, options?.output, undefined, sink);
  }

  /**
   * Resumes from the current conversation (after an error, or to answer queued messages).
   * `rerun` and `branch` tag the continuation with the current time (RFC 3339).
   */
  continue(kind: ContinueKindName | ContinuationKind = 'default'): Observable<AgentEvent> {
    return shareRun((sink) => {
      this.assertIdle('continue');
      const continuation = typeof kind === 'string' ? this.continuationOf(kind) : kind;
      return this.execute(undefined, undefined, continuation, sink);
    });
  }

  /**
   * Best-of-N: runs the prompt on N variants of this agent's config at once (each `configs[i]`
   * overrides the agent's options: another model, provider, temperature ...), lets `strategy` pick
   * a branch, and continues the conversation from the winner. Each branch sees every steering and
   * follow-up message queued before or during the run (through its own copy of the queues): the
   * ones the winner used are in the adopted conversation, all others stay queued.
   */
  promptParallel(input: PromptInput, configs: ReadonlyArray<Partial<BasicAgentOptions>>, strategy: Evaluator): Observable<AgentEvent> {
    return defer(() => {
      this.assertIdle('promptParallel');
      const prompts = toMessages(input, this.scheduler.now());
      const controller = new AbortController();
      const base = this.loopConfig(controller.signal);
      const steering = forkQueue(this.steering, configs.length);
      const followUps = forkQueue(this.followUps, configs.length);
      const branchConfigs = configs.map(
        (c, i) => ({ ...base, ...c, signal: controller.signal, steering: steering.branches[i], followUp: followUps.branches[i] }) as AgentLoopConfig,
      );
      const loopIds = branchConfigs.map((c) => this.nextLoopId(c));
      this.runStarts(this.conversation);
      const context: AgentContext = {
        systemPrompt: this.systemPrompt,
        messages: this.conversation.slice(),
        tools: this.tools,
        agentId: this.agentId,
        sessionId: this.currentSessionId,
      };
      const run$ = agentLoopParallel(prompts, context, branchConfigs, strategy, { signal: controller.signal, scheduler: this.scheduler, ids: this.ids, loopIds, cancelBranches: this.controls.parallel(loopIds) });
      const onEvent = (event: AgentEvent): void => {
        const result = event.type === 'ParallelLoopEnd' ? parallelResultOf(event) : undefined;
        if (result) {
          this.conversation = result.selectedContext.messages.slice();
          this.lastLoopId = result.selected.loopId;
          steering.adopt(result.selectedIndex);
          followUps.adopt(result.selectedIndex);
        }
      };
      return new Observable<AgentEvent>((subscriber) => this.follow(run$, controller, onEvent, undefined, subscriber)).pipe(
        finalize(() => {
          steering.dispose();
          followUps.dispose();
        }),
      );
    });
  }

  /**
   * Prompts and resolves the final answer's text; rejects with an AgentRunError (holding the
   * AgentEnd) when the run fails, is aborted or the prompt is rejected. For the AgentEnd itself:
   * `await runToEnd(agent.prompt(input))`.
   */
  run(input: PromptInput): Promise<string>;
  /**
   * With `output`: this run's answer must match the schema (see `config.output`); resolves the
   * validated, typed output, rejects with an InvalidOutputError when it stayed invalid after
   * its corrective turn, or an AgentRunError when the run failed.
   */
  run<S extends OutputSchema>(input: PromptInput, options: { output: S }): Promise<OutputOf<S>>;
  run(input: PromptInput, options?: { output: OutputSchema }): Promise<unknown> {
    if (!options) return runText(this.promptOnce(input));
    return runOutput(this.promptOnce(input, options));
  }

  /** `for await` over just the text of a run; throws an AgentRunError when the run fails. */
  textStream(input: PromptInput): AsyncIterable<string> {
    return textStream(this.prompt(input));
  }

  /** Queues a message for the active run's next steering checkpoint (or the next run). */
  steer(message: string | AgentMessage, policy?: SteeringPolicy): void {
    this.steering.push(typeof message === 'string' ? userMessage(message, this.scheduler.now()) : message, policy);
  }

  /** Queues a message that runs only when the agent would otherwise stop. */
  followUp(message: string | AgentMessage): void {
    this.followUps.push(typeof message === 'string' ? userMessage(message, this.scheduler.now()) : message);
  }

  get queuedSteering(): number {
    return this.steering.size;
  }
  get queuedFollowUps(): number {
    return this.followUps.size;
  }
  clearQueues(): void {
    this.steering.clear();
    this.followUps.clear();
  }

  /** Graceful abort of the active run: it ends with TurnEnd and AgentEnd (stopReason `aborted`). */
  abort(reason?: unknown): void {
    this.controller?.abort(reason);
  }

  /** Back to a blank agent: aborts a run, clears messages and queues. Tools and options stay. */
  reset(): void {
    this.abort();
    this.conversation = [];
    this.activeAgent = undefined;
    this.clearQueues();
    this.streaming = false;
    this.store.reset();
    this.forgetControls();
  }

  /** The conversation as JSON (phi-core's `save_messages` shape: an array of messages). */
  saveMessages(): string {
    return JSON.stringify(this.conversation, null, 2);
  }

  /**
   * Replaces the conversation with saved messages. Bad JSON throws AgentError('InvalidJson')
   * naming the first bad path (`messages[3].content[0].type`) and leaves the conversation as it was.
   * A session that has runs already describes the conversation it had: a new session starts.
   */
  restoreMessages(json: string): void {
    this.assertIdle('restoreMessages');
    this.conversation = parseMessagesJson(json);
    if (this.sessionHasRuns()) this.newSession();
  }

  /** Starts a new session now: a new session id, loop counters and lastLoopId cleared. */
  newSession(): string {
    this.currentSessionId = this.ids();
    this.loopCounters = new Map();
    this.lastLoopId = undefined;
    return this.currentSessionId;
  }

  /** Rotates the session when idle longer than `idleMs` (scheduler time) since the last prompt. */
  checkAndRotate(idleMs: number): string | undefined {
    if (this.lastActiveAt === undefined || this.scheduler.now() - this.lastActiveAt <= idleMs) return undefined;
    return this.newSession();
  }

  /** The loop id the next run of `config` gets: `{sessionId}.{configId}.{N}`, N counted per config. */
  nextLoopId(config: { configId?: string; model: ModelConfig } = this.options): string {
    const segment = configSegment(config);
    const n = (this.loopCounters.get(segment) ?? 0) + 1;
    this.loopCounters.set(segment, n);
    return loopIdFor(this.currentSessionId, segment, n);
  }

  /** Gives back the id `nextLoopId()` just handed out, if no later one was. */
  private releaseLoopId(loopId: string): void {
    const segment = configSegment(this.options);
    const n = this.loopCounters.get(segment);
    if (n !== undefined && loopIdFor(this.currentSessionId, segment, n) === loopId) this.loopCounters.set(segment, n - 1);
  }

  /** The loop config every run gets; exposed for integrations (parallel branches, sub-agents). */
  loopConfig(signal?: AbortSignal): AgentLoopConfig {
    const { systemPrompt: _s, tools: _t, steeringMode: _sm, followUpMode: _fm, agentId: _a, sessionId: _si, tracing: _tr, ...loop } = this.options;
    return { ...loop, ...this.controls.wire(loop, this.tools), steering: this.steering, followUp: this.followUps, ...(signal ? { signal } : {}) };
  }

  /** Takes on a restored session's state (see AgentControls.restore). */
  protected adoptRestored(state: RestoredAgentState, sessionId: string): void {
    this.assertIdle('restore');
    ({ messages: this.conversation, lastLoopId: this.lastLoopId, loopCounters: this.loopCounters, activeAgent: this.activeAgent } = state);
    this.currentSessionId = sessionId;
  }

  // ---- internals ------------------------------------------------------------------------------

  /** A run of `agentLoop` on `prompts`, or of `agentLoopContinue` without. */
  private execute(
    prompts: readonly AgentMessage[] | undefined,
    output: OutputSchema | undefined,
    continuation: ContinuationKind | undefined,
    sink: Observer<AgentEvent>,
  ): Subscription {
    const controller = new AbortController();
    const loopId = this.nextLoopId();
    this.runStarts(this.conversation);
    const context: AgentContext = {
      systemPrompt: this.systemPrompt,
      messages: this.conversation.slice(),
      tools: this.tools,
      agentId: this.agentId,
      sessionId: this.currentSessionId,
      loopId,
      ...(continuation && this.lastLoopId ? { parentLoopId: this.lastLoopId } : {}),
      ...(continuation ? { continuationKind: continuation } : {}),
      ...(this.activeAgent !== undefined ? { agent: this.activeAgent } : {}),
    };
    const parentLoopId = this.lastLoopId;
    this.lastLoopId = loopId;
    // A run refused before it starts (InvalidContinue) consumes no loop id and parents nothing.
    const undo = (): void => {
      this.lastLoopId = parentLoopId;
      this.releaseLoopId(loopId);
    };
    const onEvent = (event: AgentEvent): void => {
      if (event.type === 'AgentEnd' && event.loopId === loopId) this.conversation = [...this.conversation, ...event.messages];
      if (event.type === 'Handoff' && event.loopId === loopId) this.activeAgent = event.to;
    };
    const loop = this.loopConfig(controller.signal);
    const config = output ? { ...loop, output } : loop;
    // Straight into the agent's observer, unless an operator of the user's needs the Observable.
    const run: LoopRun = this.options.tracing || config.operators?.events
      ? composedLoop(this.compositions, prompts, context, config)
      : (observer) => runLoop(prompts, context, config, observer, this.compositions);
    return this.follow(run, controller, onEvent, undo, sink);
  }

  /**
   * Runs `run` for the agent into `sink`: marks the agent busy until the run ends or is cancelled,
   * and keeps its state in step with every event through one {@link RunFollower} (which mirrors the
   * events to `events$`). `onEvent` is told every event but the deltas (MessageUpdate).
   * `undoIfUnstarted` runs when the run is refused before any event. Returns what cancels the run.
   */
  private follow(
    run: LoopRun, controller: AbortController, onEvent: (event: AgentEvent) => void,
    undoIfUnstarted: (() => void) | undefined, sink: Observer<AgentEvent>,
  ): Subscription {
    this.streaming = true;
    this.controller = controller;
    this.lastActiveAt = this.scheduler.now();
    const following = new Subscription();
    const { controls, store, recorder } = this;
    const follower = new RunFollower({ controls, store, recorder }, onEvent, undoIfUnstarted, sink, following);
    if (typeof run === 'function') following.add(run(follower));
    else following.add((this.options.tracing ? run.pipe(this.options.tracing.trace()) : run).subscribe(follower));
    following.add(() => {
      if (this.controller === controller) {
        this.controller = undefined;
        this.streaming = false;
      }
    });
    return following;
  }

  private continuationOf(kind: ContinueKindName): ContinuationKind {
    if (kind === 'default') return { kind: 'default' };
    return { kind, tag: continuationTag(this.scheduler.now()) };
  }

  private assertIdle(action: string): void {
    if (this.streaming) {
      throw new AgentError(
        'AlreadyRunning',
        `Cannot ${action} while a run is active: use steer() to redirect it or followUp() to queue work for after it.`,
      );
    }
  }

}

/** A run to follow: its Observable, or what starts it into an observer and returns what cancels it. */
type LoopRun = Observable<AgentEvent> | ((observer: Observer<AgentEvent>) => () => void);

function toMessages(input: PromptInput, now: number): AgentMessage[] {
  if (typeof input === 'string') return [userMessage(input, now)];
  if (Array.isArray(input)) return [...(input as readonly AgentMessage[])];
  return [input as AgentMessage];
}
