import { defer, map, type MonoTypeOperatorFunction, type Observable, type Observer, throwError } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import type { AgentMessage, ToolResultMessage } from '../types/message.js';
import { DEFAULT_CACHE_CONFIG, DEFAULT_CONTEXT_CONFIG, NO_RETRY } from '../types/config.js';
import { eventsOf, loopStages, type LoopStage, loopState, type LoopState, type RunInfo, repeatTurns, whenTurnDue } from './kernel/index.js';
import {
  admitPrompts, afterTurnHook, answerOpenCalls, beforeTurnHook, buildRequest, callModel, checkOutput, compactContext, decideNext, endRun, endTurn,
  injectQueued, limitTurns, onErrorHook, postTurnPolicies, preTurnPolicies, recordAssistant, recordToolResults, recoverOverflow, runToolCalls,
  settleCall, startRun, startTurn, takeSteering,
} from './stages/index.js';
import { runStage, type StageSink } from './kernel/loop-state.js';
import type { AgentContext, AgentLoopConfig } from './config.js';
import type { AnyTool } from '../types/tool.js';
import { type RunSetup, setUpRun } from './run-setup.js';
import { missingPrompts } from './check-prompts.js';
import type { RunCompositions } from './run-composition.js';
import { fallbackModels, pricingOf } from './model-chain.js';
import { responseFormatOf } from '../output/output-spec.js';
import { SteeringInbox, takeQueued } from './steering-inbox.js';
import type { QueuedMessage } from '../sources/queues.js';
import { deepFreeze, FREEZE_EVENTS } from './freeze-events.js';
import { handoffTeam, MAIN_AGENT, teamStages } from './handoff-team.js';
import { stopWhen } from './stages/stop-when.js';
import { ModelRoutes, prepareTurn, TurnTools } from './stages/prepare-turn.js';
import { inputGuardrails } from './stages/input-guardrails.js';
import { outputGuardrails } from './stages/output-guardrails.js';
import { ToolGuardrailReports, toolInputPolicy, toolOutputStage } from './guardrails.js';
import { defaultProviderRegistry } from '../providers/registry.js';

/**
 * Runs an agent from new prompts: a cold Observable of every event of the run, ending with
 * `AgentEnd` (whose `messages` are all the messages the run added). Nothing happens until you
 * subscribe; unsubscribing tears everything down (HTTP, tools, timers) without further events;
 * aborting `config.signal` ends the run gracefully with TurnEnd and AgentEnd.
 *
 * The run is a composition of the exported stage operators over one immutable `LoopState`
 * (`runStages` below, in the order of spec 000's lifecycle); `config.operators` inserts your own
 * operators at its stages, and the stages compose into a loop of your own. Each call composes its
 * run; to compose once for many runs (a server's conversations), define the agent (`defineAgent`),
 * whose runs share its compositions: what a run has of its own (ids, prompts, signal, queues) rides
 * on its state as `LoopState.run`.
 *
 * Bad input fails the Observable with an AgentError before any event and before the model is
 * called: options (`InvalidConfig`, e.g. `config.toolExecution: …`), tools (`InvalidTool`: a name,
 * a duplicate, no `execute`, parameters that are not a compilable object JSON Schema) and prompts
 * (`InvalidPrompt`, naming the index and field: `prompts[2].role: unknown role "system" …`; no
 * prompts at all too: a run with no new prompt is `agentLoopContinue`).
 * `prompts` may be one string (one user message); a message's content may be a string (one text
 * block, as in OpenAI's format), and a missing timestamp is filled in.
 *
 * @example
 * agentLoop([userMessage('What is 2+2?')], { systemPrompt: 'Be brief.', messages: [], tools: [] }, { model, provider })
 *   .subscribe((e) => console.log(e.type));
 */
export function agentLoop(prompts: readonly AgentMessage[] | string, context: AgentContext, config: AgentLoopConfig): Observable<AgentEvent> {
  // No prompts is bad input (InvalidPrompt), not a continuation: that is agentLoopContinue.
  return prompts === undefined ? throwError(missingPrompts) : run(context, config, prompts);
}

/**
 * Resumes from the existing context with no new prompt (after an error, or to let the model go on
 * after tool results). `context.agentId` and `context.sessionId` are required; the context must
 * not be empty, and may end in an assistant message only when steering or follow-ups are queued
 * or when it has tool calls without results (those run first: `answerOpenCalls`).
 * These misuses fail the Observable with an AgentError; they never crash.
 */
export function agentLoopContinue(context: AgentContext, config: AgentLoopConfig): Observable<AgentEvent> {
  return run(context, config, undefined);
}

/**
 * `agentLoop` (with `prompts`) or `agentLoopContinue` (without) whose stages come from `compositions`
 * (an agent definition's, see `RunCompositions`) instead of being composed for this run alone.
 */
export function composedLoop(
  compositions: RunCompositions | undefined, prompts: readonly AgentMessage[] | string | undefined, context: AgentContext, config: AgentLoopConfig,
): Observable<AgentEvent> {
  return run(context, config, prompts, compositions);
}

function run(
  context: AgentContext, config: AgentLoopConfig, prompts: readonly AgentMessage[] | string | undefined, compositions?: RunCompositions,
): Observable<AgentEvent> {
  const events$ = defer(() => {
    const setup = setUpRun(context, config, prompts);
    return eventsOf(stagesOf(context, config, setup, compositions), startState(context, config, setup));
  });
  const emitted$ = config.operators?.events ? events$.pipe(config.operators.events) : events$;
  // The development check (PHI_RX_FREEZE=1): what leaves the loop is frozen as it goes out.
  return FREEZE_EVENTS ? emitted$.pipe(map(deepFreeze)) : emitted$;
}

/**
 * The run `agentLoop(prompts, …)` (or, without prompts, `agentLoopContinue`) makes, handed straight
 * to `observer`: no Observable and no Subscriber between the run and it, what `BasicAgent` follows
 * its runs with. The same events, in the same order, ending the same way as a subscription; not
 * for a config with `operators.events` (those need the Observable). Bad input reaches
 * `observer.error` before any event. Returns what cancels the run. With `compositions` (an agent
 * definition's), the run takes its stages from them.
 */
export function runLoop(
  prompts: readonly AgentMessage[] | undefined, context: AgentContext, config: AgentLoopConfig, observer: Observer<AgentEvent>,
  compositions?: RunCompositions,
): () => void {
  let ended = false;
  let teardown: (() => void) | void = undefined;
  const end = (): void => {
    ended = true;
    const stop = teardown;
    teardown = undefined;
    if (stop) stop();
  };
  const sink: StageSink = {
    event: (e) => {
      if (ended) return;
      if (FREEZE_EVENTS) deepFreeze(e); // the development check, as in `run`
      observer.next(e);
    },
    state: () => undefined,
    // As a subscription's: the end is delivered, then the run torn down.
    error: (e) => {
      if (ended) return;
      ended = true;
      observer.error(e);
      end();
    },
    done: () => {
      if (ended) return;
      ended = true;
      observer.complete();
      end();
    },
  };
  try {
    const setup = setUpRun(context, config, prompts);
    const stop = runStage(stagesOf(context, config, setup, compositions), startState(context, config, setup), sink);
    // Ended while it started: what it set up is torn down now (as a subscription's would be).
    if (ended) stop?.();
    else teardown = stop;
  } catch (error) {
    sink.error(error);
  }
  return end;
}

/** The run's state as it starts: the context's messages, and what the run is and is given (`run`: ids, prompts, first trigger, signal, queues, cancellations, approval). */
function startState(context: AgentContext, config: AgentLoopConfig, setup: RunSetup): LoopState {
  const run: RunInfo = {
    agentId: setup.agentId, sessionId: setup.sessionId, parentLoopId: context.parentLoopId, parentToolCallId: context.parentToolCallId,
    continuationKind: context.continuationKind, prompts: setup.prompts, firstTrigger: setup.firstTrigger,
    signal: config.signal, steering: config.steering && new SteeringInbox(config.steering, config.steeringPolicy),
    followUp: config.followUp, cancelToolCalls: config.cancelToolCalls, approval: config.approval, agent: context.agent,
  };
  return loopState(setup.loopId, context.messages.slice(), NONE, run);
}

/** The run's stages: composed for it, or a definition's that fits it (see `RunCompositions`). */
function stagesOf(context: AgentContext, config: AgentLoopConfig, setup: RunSetup, compositions: RunCompositions | undefined): LoopStage {
  const build = (tools: readonly AnyTool[]): LoopStage => runStages(tools, context.systemPrompt, config, setup);
  return compositions ? compositions.stage(context, config, setup.provider, build) : build(context.tools);
}

/**
 * One turn of the loop, and its answer to tool calls a resumed run finds open. A function of the
 * config, the tools and system prompt, and the provider: what a run has of its own (ids, prompts,
 * signal, steering, follow-ups, call cancellations) is read from its state (`LoopState.run`), so
 * that runs share one composition.
 */
function turnStages(tools: readonly AnyTool[], systemPrompt: string, c: AgentLoopConfig, setup: Pick<RunSetup, 'scheduler' | 'provider'>): { turn: LoopStage; open: LoopStage } {
  const { scheduler } = setup;
  const hooks = c.hooks ?? {};
  const policies = c.policies ?? {};
  const filters = c.inputFilters ?? [];
  const steers = c.steering !== undefined;
  const steer = (state: LoopState): readonly AgentMessage[] => state.run?.steering?.take() ?? NONE;
  const compaction = c.contextConfig ? { ...DEFAULT_CONTEXT_CONFIG, ...c.contextConfig } : undefined;
  const request = buildRequest({
    model: c.model, systemPrompt, tools, scheduler,
    thinkingLevel: c.thinkingLevel ?? 'off', cacheConfig: c.cacheConfig ?? DEFAULT_CACHE_CONFIG,
    ...defined({ maxTokens: c.maxTokens, temperature: c.temperature, apiKey: c.model.apiKey, convertToLlm: c.convertToLlm, context: c.operators?.context }),
    ...defined({ asyncTransformContext: c.asyncTransformContext, transformContext: c.transformContext, getApiKey: c.getApiKey }),
    ...defined({ responseFormat: c.output && responseFormatOf(c.output) }),
  });
  const guards = c.guardrails ?? {};
  const onError = guards.onError ?? 'trip';
  // prepareTurn may switch models: the call asks each request's model's provider, and the dispatch runs the turn's tools.
  const routes = c.prepareTurn && new ModelRoutes(c.model, setup.provider, (m) => defaultProviderRegistry().resolve(m));
  const turnTools = c.prepareTurn && new TurnTools();
  const prepared = c.prepareTurn && prepareTurn(c.prepareTurn, {
    tools, scheduler, ...defined({ turnTools, routes, convertToLlm: c.convertToLlm, getApiKey: c.getApiKey }),
  });
  const callOptions = {
    provider: routes ? routes.provider : setup.provider, retry: c.retry === false ? NO_RETRY : (c.retry ?? {}), scheduler, tagTurn: true,
    ...defined({ random: c.random, providerStream: c.operators?.providerStream }),
  };
  const modelCall = c.models ? fallbackModels(c, callOptions) : callModel(callOptions);
  const call = some(guards.input) ? inputGuardrails(guards.input, modelCall, { model: c.model, onError, scheduler }) : modelCall;
  // Tool guardrails report their trips among the events of the call they concern.
  const reports = (some(guards.toolInput) || some(guards.toolOutput)) ? new ToolGuardrailReports(() => scheduler.now()) : undefined;
  const tooling = runToolCalls({
    tools, strategy: c.toolExecution ?? 'parallel', scheduler,
    preDispatch: some(guards.toolInput) ? [toolInputPolicy(guards.toolInput, onError, reports), ...(policies.preDispatch ?? [])] : (policies.preDispatch ?? []),
    ...defined({ timeoutMs: c.toolTimeoutMs, hooks: c.hooks, toolsOf: turnTools ? (s: LoopState) => turnTools.of(s) : undefined }),
    ...defined({ toolResults: toolResultStage(c, onError, reports), toolCalls: c.operators?.toolCalls }),
  });
  const dispatch = reports ? reports.around(tooling) : tooling;

  const turn = loopStages(
    c.limits && limitTurns(c.limits, { scheduler, ...pricingOf(c) }),
    steers && takeSteering(steer, { filters, scheduler }), //                                  checkpoint 6: loop re-entry
    whenTurnDue(loopStages(
      hooks.beforeTurn && beforeTurnHook(hooks.beforeTurn, { scheduler }),
      steers && takeSteering(steer, { filters, scheduler, oncePerTurn: true }), //            checkpoint 1: before the model call
      startTurn({ scheduler }),
      compaction && compactContext(compaction, { scheduler }),
      some(policies.preTurn) && preTurnPolicies(policies.preTurn, { model: c.model, scheduler }),
      request,
      prepared,
      call,
      compaction && recoverOverflow(loopStages(compactContext(compaction, { reason: 'overflow', scheduler }), request, prepared, call)),
      settleCall({ model: c.model, scheduler, tagTurn: true }),
      hooks.onError && onErrorHook(hooks.onError, { scheduler }),
      recordAssistant(),
      dispatch,
      recordToolResults(),
      some(policies.postTurn) && postTurnPolicies(policies.postTurn, { scheduler }),
      endTurn({ scheduler, recorded: true }),
      hooks.afterTurn && afterTurnHook(hooks.afterTurn, { scheduler }),
      c.stopWhen !== undefined && stopWhen(c.stopWhen, { scheduler, ...pricingOf(c) }), // after a turn that asks for another
    )),
    decideNext({
      scheduler, filters, postLoop: policies.postLoop ?? [],
      followUp: (state) => messagesOf(takeQueued(state.run?.followUp)),
      ...defined({ steeringPending: steers ? (state: LoopState) => state.run?.steering?.pending() === true : undefined }),
    }),
    c.output !== undefined && checkOutput(c.output, { scheduler }), // the answer when the run would end: valid, or one corrective turn
  );

  return { turn, open: answerOpenCalls(dispatch, recordToolResults()) };
}

/**
 * The run, top to bottom: open it, admit its input, turn after turn while there is work, close it.
 * With handoff tools, each turn is the active agent's (`handoffTeam`, `teamStages`).
 */
function runStages(tools: readonly AnyTool[], systemPrompt: string, c: AgentLoopConfig, setup: Pick<RunSetup, 'scheduler' | 'provider'>): LoopStage {
  const { scheduler } = setup;
  const hooks = c.hooks ?? {};
  const filters = c.inputFilters ?? [];
  const guards = c.guardrails ?? {};
  const onError = guards.onError ?? 'trip';
  const team = handoffTeam(tools, systemPrompt, c, setup.provider);
  const { turn, open, named } = team
    ? teamStages(team, c.agentName ?? MAIN_AGENT, scheduler, (m) => turnStages(m.tools, m.systemPrompt, m.config, { scheduler, provider: m.provider }))
    : { ...turnStages(tools, systemPrompt, c, setup), named: (stage: LoopStage) => stage };

  return named(loopStages(
    startRun({ fromRun: true, scheduler, ...defined({ beforeLoop: hooks.beforeLoop, metadata: c.metadata }) }),
    admitPrompts(undefined, { filters, scheduler }), // the run's prompts (none for a continuation)
    injectQueued(followUpsToContinue, { filters, scheduler }), // a continuation's queued follow-ups
    open,
    repeatTurns(turn, { more: (s) => !s.ended }),
    some(guards.output) && outputGuardrails(guards.output, { onError, scheduler }), // the final answer, before AgentEnd
    endRun({ scheduler, ...defined({ afterLoop: hooks.afterLoop }) }),
  ));
}

const NONE: readonly AgentMessage[] = [];

function messagesOf(queued: readonly QueuedMessage[]): readonly AgentMessage[] {
  return queued.length === 0 ? NONE : queued.map((q) => q.message);
}

/** A continuation of a context that ends with the model's answer picks up the queued follow-ups (when no steering waits). */
function followUpsToContinue(state: LoopState): readonly AgentMessage[] {
  const run = state.run;
  if (run === undefined || run.prompts !== undefined) return NONE; // a run with prompts is no continuation
  const last = state.messages[state.messages.length - 1];
  return last?.role === 'assistant' && (run.steering?.size() ?? 0) === 0 ? messagesOf(takeQueued(run.followUp)) : NONE;
}

function some<T>(list: readonly T[] | undefined): list is readonly T[] {
  return list !== undefined && list.length > 0;
}

/** The fields that are set (optional options are left out rather than set to `undefined`). */
function defined<T extends object>(fields: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  const out: Record<string, unknown> = {};
  for (const k in fields) if (fields[k] !== undefined) out[k] = fields[k];
  return out as { [K in keyof T]?: Exclude<T[K], undefined> };
}

/** The tool-output guardrails, then your `toolResults` operator. */
function toolResultStage(c: AgentLoopConfig, onError: 'trip' | 'pass', reports: ToolGuardrailReports | undefined): MonoTypeOperatorFunction<ToolResultMessage> | undefined {
  const guards = c.guardrails?.toolOutput;
  const yours = c.operators?.toolResults;
  if (!some(guards)) return yours;
  const guarded = toolOutputStage(guards, onError, reports);
  return yours ? (results) => yours(guarded(results)) : guarded;
}
