import { asyncScheduler, concatMap, map, type Observable, of, type SchedulerLike } from 'rxjs';
import { type AgentMessage, type Message, toLlmMessages } from '../../types/message.js';
import type { ModelConfig, Provider, StreamRequest, ToolChoice } from '../../types/provider.js';
import type { AnyTool, ToolDefinition } from '../../types/tool.js';
import type { HookResult } from '../../types/hooks.js';
import { AgentError, errorMessage } from '../../types/errors.js';
import { Usage } from '../../types/usage.js';
import { callHookSafely } from '../../sources/hook-result.js';
import { checkTools } from '../../tools/check-tools.js';
import { askHook, hookError } from '../kernel/ask-hook.js';
import { keptPerRun } from '../kernel/kept-per-run.js';
import { type LoopOutput, type LoopStage, loopStage, type LoopState, type StepOutputs } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

/** A model for one turn: a ModelConfig (its provider from the registry), or a model with the Provider that serves it. */
export type TurnModel = ModelConfig | { readonly model: ModelConfig; readonly provider: Provider };

/** What `prepareTurn` may change of the turn's model call; what it leaves out stays as configured. */
export interface TurnPreparation {
  /** The model this turn asks, on another provider too: the history is translated for its API, as a fallback model's is. */
  model?: TurnModel;
  /** The only tools the model sees and may call this turn (names of the context's tools). */
  activeTools?: readonly string[];
  /** The tools the model sees and may call this turn, instead of the context's. */
  tools?: readonly AnyTool[];
  /** Whether the model chooses (`auto`, the default), may call no tool (`none`: none is offered), must call one (`required`) or the one named (`{ tool }`). */
  toolChoice?: 'auto' | 'none' | ToolChoice;
  /** The system prompt of this turn's call. */
  systemPrompt?: string;
  /** The messages this turn's call sends, instead of the context (the context itself is not changed). */
  messages?: readonly AgentMessage[];
}

/** What `prepareTurn` is asked with, before each model call. */
export interface PrepareTurnContext {
  /** The index of the turn about to call the model. */
  readonly turnIndex: number;
  /** The context as it would be sent. */
  readonly messages: readonly AgentMessage[];
  /** Every message the run added so far. */
  readonly newMessages: readonly AgentMessage[];
  /** The model the call would ask. */
  readonly model: ModelConfig;
  /** The usage of the run's assistant messages so far. */
  readonly usage: Usage;
}

/** Prepares each model call: answers now, with a Promise or with an Observable (its first value); `undefined` changes nothing. */
export type PrepareTurn = (ctx: PrepareTurnContext) => HookResult<TurnPreparation | void>;

export interface PrepareTurnOptions {
  /** The tools `activeTools` names (the context's). */
  tools: readonly AnyTool[];
  /** Where the tools a turn offers are kept for its dispatch (`runToolCalls({ toolsOf })`). */
  turnTools?: TurnTools;
  /** Where a `{ model, provider }` answer's provider is kept for the call (`routes.provider`). */
  routes?: ModelRoutes;
  /** Maps `messages` to what the model receives (default `toLlmMessages`). */
  convertToLlm?(messages: readonly AgentMessage[]): Message[];
  /** The API key of a model the answer switches to (default: the model's own `apiKey`). */
  getApiKey?(model: ModelConfig): HookResult<string | undefined>;
  /** Clock for the events' timestamps (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * Asks `prepare` before each model call (put it after `buildRequest`, before the call) and applies
 * its answer to the turn's request: another model (and provider), fewer or other tools, a tool
 * choice, another system prompt, other messages to send. Nothing it answers is kept for the next
 * turn, and the context is not changed. A `prepare` that throws or fails emits a `HookError` (hook
 * `prepareTurn`) and the request goes as built; an answer that names a tool the context does not
 * have, or is not an object, fails the run (`AgentError` `InvalidConfig`). A state without a
 * request, or whose run has ended, passes through.
 *
 * Contract: per input state, a HookError if `prepare` failed, then the state with its request as
 * prepared.
 *
 * ```
 * source:   --s--|            (s: a state with a request for model a and tools [x, y])
 * prepareTurn(() => ({ model: b, activeTools: ['x'] }), { tools })
 * output:   --s'-|            (s': its request for model b, with tool x only)
 * ```
 *
 * @example
 * const turn = loopStages(startTurn(), buildRequest(request), prepareTurn(({ turnIndex }) => (turnIndex === 0 ? { activeTools: ['search'] } : { toolChoice: 'none' }), { tools }), callModel({ provider }), endTurn());
 */
export function prepareTurn(prepare: PrepareTurn, options: PrepareTurnOptions): LoopStage {
  if (typeof prepare !== 'function') throw new TypeError('prepareTurn: expected a function');
  const scheduler = options.scheduler ?? asyncScheduler;
  const byName = new Map(options.tools.map((t) => [t.name, t]));
  return loopStage((state): StepOutputs => {
    const request = state.request;
    if (state.ended || !request) return state;
    const ctx: PrepareTurnContext = {
      turnIndex: state.turnIndex, messages: state.messages, newMessages: state.newMessages ?? [], model: request.model, usage: state.usage ?? Usage.empty(),
    };
    return askHook<TurnPreparation | undefined>('prepareTurn', state.loopId, () => prepare(ctx), undefined, scheduler, (answer): StepOutputs => {
      if (answer === undefined) return state;
      const prepared = checked(answer, byName);
      if (prepared.tools !== undefined) options.turnTools?.set(state, prepared.tools);
      const model = prepared.model && modelIn(prepared.model, options.routes);
      const others = withoutModel(request, prepared, options.convertToLlm);
      if (model === undefined || sameModel(model, request.model)) return stateWith(state, { request: others });
      return keyFor(model, options.getApiKey, state.loopId, scheduler).pipe(concatMap(([events, apiKey]): LoopOutput[] => [...events, stateWith(state, { request: switched(others, model, apiKey) })]));
    });
  });
}

/**
 * The tools each turn of a run offers, when `prepareTurn` chose them: what the turn's tool
 * dispatch runs (a call of any other tool is answered `Tool not found`).
 */
export class TurnTools {
  private readonly ofRun = keptPerRun((): { turnIndex: number; tools: readonly AnyTool[] | undefined } => ({ turnIndex: -1, tools: undefined }));

  set(state: LoopState, tools: readonly AnyTool[]): void {
    const kept = this.ofRun(state);
    kept.turnIndex = state.turnIndex;
    kept.tools = tools;
  }

  /** The tools of the state's turn, when `prepareTurn` chose them (else `undefined`: the context's). */
  of(state: LoopState): readonly AnyTool[] | undefined {
    const kept = this.ofRun(state);
    return kept.turnIndex === state.turnIndex ? kept.tools : undefined;
  }
}

/**
 * The providers of the models `prepareTurn` switches to: `provider` serves each request with the
 * Provider of its model (a `{ model, provider }` answer's, the primary's for the configured model,
 * else the registry's).
 */
export class ModelRoutes {
  private readonly pairs = new WeakMap<ModelConfig, Provider>();
  readonly provider: Provider;

  constructor(primary: ModelConfig, primaryProvider: Provider, resolve: (model: ModelConfig) => Provider) {
    this.provider = (request, providerOptions) => {
      const model = request.model;
      const provider = this.pairs.get(model) ?? (sameModel(model, primary) ? primaryProvider : resolve(model));
      return provider(request, providerOptions);
    };
  }

  remember(model: ModelConfig, provider: Provider): void {
    this.pairs.set(model, provider);
  }
}

function modelIn(choice: TurnModel, routes: ModelRoutes | undefined): ModelConfig {
  if (!('model' in choice && typeof choice.model === 'object')) return choice as ModelConfig;
  routes?.remember(choice.model, choice.provider);
  return choice.model;
}

function sameModel(a: ModelConfig, b: ModelConfig): boolean {
  return a === b || (a.provider === b.provider && a.id === b.id && a.api === b.api);
}

/** The answer, checked: an object whose tools are known; `activeTools` read as the tools they name. */
function checked(answer: unknown, byName: ReadonlyMap<string, AnyTool>): TurnPreparation {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) throw invalid(`expected an object or undefined, got ${answer === null ? 'null' : typeof answer}`);
  const prep = answer as TurnPreparation;
  if (prep.activeTools !== undefined && prep.tools !== undefined) throw invalid('give tools or activeTools, not both');
  if (prep.systemPrompt !== undefined && typeof prep.systemPrompt !== 'string') throw invalid('systemPrompt: expected a string');
  if (prep.messages !== undefined && !Array.isArray(prep.messages)) throw invalid('messages: expected an array of messages');
  if (prep.tools !== undefined) checkTurnTools(prep.tools);
  if (prep.activeTools === undefined) return prep;
  if (!Array.isArray(prep.activeTools)) throw invalid('activeTools: expected an array of tool names');
  const tools = prep.activeTools.map((name, i) => {
    const tool = byName.get(name);
    if (!tool) throw invalid(`activeTools[${i}]: no tool named ${JSON.stringify(name)} (tools: ${[...byName.keys()].join(', ') || 'none'})`);
    return tool;
  });
  return { ...prep, tools };
}

/** Tools a `tools` answer brought, checked once each (a name, `execute`, an object's JSON Schema) as a run's are. */
const checkedTools = new WeakSet<object>();

function checkTurnTools(tools: unknown): void {
  if (!Array.isArray(tools)) throw invalid('tools: expected an array of tools');
  if (tools.every((t: unknown) => typeof t === 'object' && t !== null && checkedTools.has(t))) return;
  try {
    checkTools(tools);
  } catch (error) {
    throw invalid(`tools: ${errorMessage(error).replace(/context\.tools/g, 'tools')}`);
  }
  for (const t of tools as object[]) checkedTools.add(t);
}

function invalid(reason: string): AgentError {
  return new AgentError('InvalidConfig', `prepareTurn answered: ${reason}`);
}

/** The request with the answer's tools, tool choice, system prompt and messages. */
function withoutModel(request: StreamRequest, prep: TurnPreparation, convertToLlm: PrepareTurnOptions['convertToLlm']): StreamRequest {
  const next: StreamRequest = { ...request };
  if (prep.tools !== undefined) next.tools = prep.tools.map(definitionOf);
  if (prep.toolChoice === 'none') next.tools = []; // no tool offered: none can be called, on every API
  else if (prep.toolChoice !== undefined && prep.toolChoice !== 'auto') next.toolChoice = forcedChoice(prep.toolChoice, next);
  if (prep.systemPrompt !== undefined) next.systemPrompt = prep.systemPrompt;
  if (prep.messages !== undefined) next.messages = (convertToLlm ?? toLlmMessages)(prep.messages);
  return next;
}

/** A forced tool call, checked against the tools the call offers. */
function forcedChoice(choice: unknown, request: StreamRequest): ToolChoice {
  if (request.responseFormat !== undefined) throw invalid('toolChoice: a forced tool call and structured output (config.output) cannot share a call');
  if (choice === 'required') {
    if (request.tools.length === 0) throw invalid('toolChoice: "required" but no tool is offered this turn');
    return choice;
  }
  const tool = choice !== null && typeof choice === 'object' ? (choice as { tool?: unknown }).tool : undefined;
  if (typeof tool !== 'string') throw invalid(`toolChoice: expected 'auto', 'none', 'required' or { tool: name }, got ${JSON.stringify(choice)}`);
  if (!request.tools.some((t) => t.name === tool)) throw invalid(`toolChoice: no tool named ${JSON.stringify(tool)} is offered this turn`);
  return { tool };
}

/** The request for another model: one provider's key is never sent to another. */
function switched(request: StreamRequest, model: ModelConfig, apiKey: string | undefined): StreamRequest {
  const { apiKey: _configured, ...rest } = request;
  return apiKey === undefined ? { ...rest, model } : { ...rest, model, apiKey };
}

function keyFor(model: ModelConfig, getApiKey: PrepareTurnOptions['getApiKey'], loopId: string, scheduler: SchedulerLike): Observable<[ReturnType<typeof hookError>[], string | undefined]> {
  if (!getApiKey) return of([[], model.apiKey]);
  const events: ReturnType<typeof hookError>[] = [];
  return callHookSafely<string | undefined>(() => getApiKey(model), model.apiKey, (e) => events.push(hookError('getApiKey', loopId, errorMessage(e), scheduler.now()))).pipe(
    map((apiKey) => [events, apiKey]),
  );
}

function definitionOf(tool: AnyTool): ToolDefinition {
  return { name: tool.name, description: tool.description, parameters: tool.parameters };
}
