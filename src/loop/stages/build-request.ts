import { asyncScheduler, concatMap, defer, map, type MonoTypeOperatorFunction, type Observable, of, type SchedulerLike } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import type { AgentMessage, Message } from '../../types/message.js';
import type { ModelConfig, StreamRequest } from '../../types/provider.js';
import type { AnyTool, ToolDefinition } from '../../types/tool.js';
import type { HookResult } from '../../types/hooks.js';
import { DEFAULT_CACHE_CONFIG } from '../../types/config.js';
import { errorMessage } from '../../types/errors.js';
import { callHookSafely } from '../../sources/hook-result.js';
import { LlmViews } from '../llm-views.js';
import { hookError } from '../kernel/ask-hook.js';
import { type LoopOutput, type LoopStage, loopStage, type LoopStateDraft, type LoopState, signalOf } from '../kernel/loop-state.js';
import { keptPerRun } from '../kernel/kept-per-run.js';
import { copyState } from '../kernel/state-with.js';

export interface BuildRequestOptions extends Omit<StreamRequest, 'messages' | 'tools' | 'thinkingLevel' | 'cacheConfig'> {
  /** The tools the model may call (their name, description and parameters are sent). */
  tools?: readonly AnyTool[];
  thinkingLevel?: StreamRequest['thinkingLevel'];
  cacheConfig?: StreamRequest['cacheConfig'];
  /** Maps the context to what the model receives (default `toLlmMessages`: extension messages are not sent). */
  convertToLlm?(messages: readonly AgentMessage[]): Message[];
  /** Rewrites the context before each call (RAG, summaries); may answer later. A failure emits a HookError and sends the context as it was. */
  asyncTransformContext?(messages: AgentMessage[], signal: AbortSignal | undefined): HookResult<AgentMessage[]>;
  /** Rewrites the context synchronously, after `asyncTransformContext`. A throw emits a HookError and sends the context as it was. */
  transformContext?(messages: AgentMessage[]): AgentMessage[];
  /** Your operator on the context about to be sent, after the transforms. */
  context?: MonoTypeOperatorFunction<AgentMessage[]>;
  /** Resolves the API key for each call (default `apiKey`). A failure emits a HookError and uses `apiKey`. */
  getApiKey?(model: ModelConfig): HookResult<string | undefined>;
  /** Handed to `asyncTransformContext` (default: the state's `run.signal`). */
  signal?: AbortSignal;
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * The loop's request stage: the request for this turn's model call, from the state's context,
 * through the context transforms and your `context` operator, with the API key `getApiKey`
 * resolves. Without transforms the request is built at once, and the conversion of the context for
 * the model is kept from turn to turn (only new messages are converted), per run: one stage serves
 * every run, each with its own (runs are told apart by the state's `run`). `sessionId` left out:
 * the state's `run.sessionId`. A state whose run has ended passes through untouched.
 *
 * Contract: per input state, a HookError per failed transform or key lookup, then the state with
 * `request` set (and `sinceRequest`, when kept, emptied).
 *
 * ```
 * source:   --s--|
 * buildRequest({ model, systemPrompt, tools })
 * output:   --r--|            (r: { ...s, request: { model, systemPrompt, messages: s.messages as sent, tools } })
 * ```
 *
 * @example
 * state$.pipe(loopStages(buildRequest({ model, systemPrompt: 'Be brief.', tools }), callModel({ provider })));
 */
export function buildRequest(options: BuildRequestOptions): LoopStage {
  const {
    tools = [], convertToLlm, thinkingLevel = 'off', cacheConfig = DEFAULT_CACHE_CONFIG,
    asyncTransformContext, transformContext, context, getApiKey, signal: _signal, scheduler = asyncScheduler, apiKey: modelKey, ...rest
  } = options;
  const definitions = tools.map(definitionOf);
  const fixed = { thinkingLevel, cacheConfig, tools: definitions, messages: [] as Message[] };
  // What a run's requests share (the views of its messages and the request every turn copies), kept per run.
  const requestsOf = keptPerRun((state) => {
    const sessionId = state.run?.sessionId;
    return new RunRequests(rest.sessionId === undefined && sessionId !== undefined ? Object.assign({}, rest, { sessionId }) : rest, fixed);
  });
  const withRequest = (state: LoopState, request: StreamRequest): LoopState => {
    const next = copyState(state);
    next.request = request;
    if (state.sinceRequest) next.sinceRequest = [];
    return next;
  };
  const plain = !asyncTransformContext && !transformContext && !context && !getApiKey;
  return loopStage((state) => {
    if (state.ended) return state;
    const requests = requestsOf(state);
    if (plain) {
      const llm = convertToLlm ? convertToLlm(state.messages) : requests.views.of(state.messages);
      return withRequest(state, requests.request(llm, modelKey));
    }
    return defer(() => {
      const failures: AgentEvent[] = [];
      const safely = <T>(hook: string, call: () => HookResult<T>, fallback: T): Observable<T> =>
        callHookSafely<T>(call, fallback, (e) => failures.push(hookError(hook, state.loopId, errorMessage(e), scheduler.now())));
      let messages$: Observable<AgentMessage[]> = of(state.messages.slice());
      if (asyncTransformContext) messages$ = messages$.pipe(concatMap((m) => safely('asyncTransformContext', () => asyncTransformContext(m, signalOf(options, state)), m)));
      if (transformContext) messages$ = messages$.pipe(concatMap((m) => safely('transformContext', () => transformContext(m), m)));
      if (context) messages$ = messages$.pipe(context);
      return messages$.pipe(
        concatMap((messages) =>
          (getApiKey ? safely('getApiKey', () => getApiKey(rest.model), modelKey) : of(modelKey)).pipe(
            map((apiKey): LoopOutput[] => {
              const llm = convertToLlm ? convertToLlm(messages) : requests.views.each(messages);
              return [...failures.splice(0), withRequest(state, requests.request(llm, apiKey))];
            }),
          ),
        ),
        concatMap((outputs) => outputs),
      );
    });
  });
}

/**
 * What one run's requests share: the views of its messages (converted once each, see `LlmViews`)
 * and the request every turn's request copies (with its messages, and key). Copies of an object
 * that already has the fields they set: a spread followed by a field its source lacks gives every
 * copy a hidden class of its own in V8 (see `withTurnId`).
 */
class RunRequests {
  readonly views = new LlmViews();
  private readonly shared: StreamRequest;
  private keyed: StreamRequest | undefined;

  constructor(fields: Omit<StreamRequest, 'messages' | 'tools' | 'thinkingLevel' | 'cacheConfig'>, fixed: Pick<StreamRequest, 'thinkingLevel' | 'cacheConfig' | 'tools' | 'messages'>) {
    this.shared = Object.assign({}, fields, fixed);
  }

  request(llm: Message[], apiKey: string | undefined): StreamRequest {
    if (apiKey === undefined) return { ...this.shared, messages: llm };
    const keyed = (this.keyed ??= Object.assign({}, this.shared, { apiKey: undefined as string | undefined }));
    return { ...keyed, messages: llm, apiKey };
  }
}

/** What the model is told of each tool, made once per tool (not on every run). */
const definitions = new WeakMap<AnyTool, ToolDefinition>();

function definitionOf(tool: AnyTool): ToolDefinition {
  let definition = definitions.get(tool);
  // A tool whose fields were reassigned since is described anew.
  if (!definition || definition.name !== tool.name || definition.description !== tool.description || definition.parameters !== tool.parameters) {
    definition = { name: tool.name, description: tool.description, parameters: tool.parameters };
    definitions.set(tool, definition);
  }
  return definition;
}
