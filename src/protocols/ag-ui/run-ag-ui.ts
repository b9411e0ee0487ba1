import { catchError, defer, from, NEVER, type Observable, of, type SchedulerLike, switchMap } from 'rxjs';
import { errorMessage } from '../../types/errors.js';
import type { AgentLoopConfig } from '../../loop/config.js';
import { agentLoopContinue } from '../../loop/agent-loop.js';
import type { AnyTool } from '../../types/tool.js';
import type { AgentEvent } from '../../types/events.js';
import type { ApprovalDecision } from '../../operators/request-approval.js';
import type { AgUiEvent, AgUiResumeEntry, AgUiRunAgentInput, AgUiTool } from './ag-ui-event.js';
import { AgUiInputError, fromAgUiMessages, instructionsOf } from './from-ag-ui-messages.js';
import { agUiEvents } from './to-ag-ui.js';

/** What runs an AG-UI input: the loop's config (model, provider, limits ...), the server's tools and instructions. */
export interface AgUiAgentOptions {
  /** The loop config, or a function of the input that makes it (`forwardedProps`, `state` ...). Its `signal` is combined with the client's. */
  config: AgentLoopConfig | ((input: AgUiRunAgentInput) => AgentLoopConfig | Promise<AgentLoopConfig>);
  /** Instructions; the input's `system` / `developer` messages and `context` entries follow them. */
  systemPrompt?: string;
  /** Tools that run on the server. The input's tools (frontend tools) are offered to the model besides them. */
  tools?: readonly AnyTool[];
  /** Timestamps of input messages that carry none (default `Date.now`). */
  now?: () => number;
  /**
   * A state shown to the client, derived from the run's events and the input (its `state` is what the
   * client has): each change goes out as STATE_DELTA (see `agUiEvents`' `stateFrom`).
   */
  stateFrom?: (events$: Observable<AgentEvent>, input: AgUiRunAgentInput) => Observable<unknown>;
  /** Where `agUiEvents` checks whether the run only waits for the client (default `asapScheduler`). */
  scheduler?: SchedulerLike;
}

/**
 * Runs a phi-rx agent loop for one AG-UI `RunAgentInput` and gives its AG-UI events: the input's
 * messages converted ({@link fromAgUiMessages}) and continued with `agentLoopContinue` (the last
 * user message, or the tool results the client sent, go on). The input's tools are frontend tools:
 * offered to the model, and a call of one ends the run (RUN_FINISHED, `outcome.pendingToolCallIds`)
 * for the client to run it and send the result next time. A call waiting for approval ends the run
 * as an interrupt; the next input's `resume` entry for it (`interruptId` = the call's id;
 * `status: 'resolved'` with `payload: { approved, reason?, args? }`, `approved` defaulting to
 * true, or `'cancelled'` = denied) decides it when the run goes on. Aborting `signal` (the client
 * went away) aborts the run gracefully.
 *
 * @example
 * runAgUi(input, { config: { model, provider }, tools: [weather] }, signal).subscribe((e) => send(e));
 */
export function runAgUi(input: AgUiRunAgentInput, options: AgUiAgentOptions, signal?: AbortSignal): Observable<AgUiEvent> {
  return defer(() => {
    const checked = checkRunAgentInput(input, options.tools);
    const config = typeof options.config === 'function' ? options.config(checked) : options.config;
    return from(Promise.resolve(config)).pipe(switchMap((c) => runWith(checked, c, options, signal)));
  }).pipe(catchError((e: unknown) => of<AgUiEvent>({ type: 'RUN_ERROR', message: errorMessage(e), code: e instanceof AgUiInputError ? 'BAD_INPUT' : 'RUN_FAILED' })));
}

function runWith(input: AgUiRunAgentInput, config: AgentLoopConfig, options: AgUiAgentOptions, signal: AbortSignal | undefined): Observable<AgUiEvent> {
  const messages = fromAgUiMessages(input.messages, { now: options.now });
  const serverTools = options.tools ?? [];
  const clientTools = input.tools.map((t, i) => clientTool(t, `tools[${i}]`, serverTools));
  const systemPrompt = [options.systemPrompt ?? '', ...instructionsOf(messages), ...input.context.map((c) => `${c.description}: ${c.value}`)].filter((s) => s !== '').join('\n\n');
  const decisions = decisionsOf(input.resume ?? []);
  const signals = [config.signal, signal].filter((s): s is AbortSignal => s !== undefined);
  const loopConfig: AgentLoopConfig = {
    ...config,
    ...(signals.length > 0 && { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) }),
    approval: {
      ...config.approval,
      decide: (request) => decisions.get(request.toolCallId) ?? config.approval?.decide?.(request),
    },
  };
  const context = { systemPrompt, messages, tools: [...serverTools, ...clientTools], sessionId: input.threadId, agentId: config.configId ?? 'ag-ui', loopId: input.runId };
  return agentLoopContinue(context, loopConfig).pipe(
    agUiEvents({
      threadId: input.threadId,
      runId: input.runId,
      messages: input.messages,
      state: input.state,
      stateFrom: options.stateFrom && ((events$) => options.stateFrom!(events$, input)),
      clientTools: clientTools.map((t) => t.name),
      interruptApprovals: true,
      scheduler: options.scheduler,
    }),
  );
}

/** A frontend tool as a phi-rx tool: its call never ends on the server (the run ends and the client answers it). */
function clientTool(tool: AgUiTool, at: string, serverTools: readonly AnyTool[]): AnyTool {
  if (tool === null || typeof tool !== 'object' || typeof tool.name !== 'string' || tool.name === '') throw new AgUiInputError(`${at}.name`, 'a tool needs a name');
  if (serverTools.some((t) => t.name === tool.name)) throw new AgUiInputError(`${at}.name`, `the server has a tool named ${JSON.stringify(tool.name)} already`);
  const parameters = tool.parameters !== null && typeof tool.parameters === 'object' ? (tool.parameters as Record<string, unknown>) : { type: 'object', properties: {} };
  return { name: tool.name, label: tool.name, description: typeof tool.description === 'string' ? tool.description : '', parameters, execute: () => NEVER };
}

/** The approvals the client gave for the previous run's interrupts, by call id. */
function decisionsOf(resume: readonly AgUiResumeEntry[]): Map<string, ApprovalDecision> {
  const decisions = new Map<string, ApprovalDecision>();
  resume.forEach((entry, i) => {
    if (entry === null || typeof entry !== 'object' || typeof entry.interruptId !== 'string') throw new AgUiInputError(`resume[${i}].interruptId`, 'expected a string');
    if (entry.status === 'cancelled') return void decisions.set(entry.interruptId, { approved: false, reason: 'cancelled by the user' });
    if (entry.status !== 'resolved') throw new AgUiInputError(`resume[${i}].status`, `expected "resolved" or "cancelled", got ${JSON.stringify(entry.status)}`);
    const payload = (entry.payload ?? {}) as { approved?: unknown; reason?: unknown; args?: unknown };
    decisions.set(entry.interruptId, {
      approved: payload.approved !== false,
      ...(typeof payload.reason === 'string' && { reason: payload.reason }),
      ...(payload.args !== null && typeof payload.args === 'object' && !Array.isArray(payload.args) && { args: payload.args as Record<string, unknown> }),
    });
  });
  return decisions;
}

/**
 * Checks that a value is a `RunAgentInput` phi-rx can run (ids, messages, tools, context and
 * resume as the protocol says, messages phi-rx can hold, no frontend tool named like one of
 * `serverTools`); throws an {@link AgUiInputError} naming the first field that is not.
 */
export function checkRunAgentInput(value: unknown, serverTools: readonly AnyTool[] = []): AgUiRunAgentInput {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AgUiInputError('input', 'expected a RunAgentInput object');
  const v = value as Record<string, unknown>;
  for (const key of ['threadId', 'runId'] as const) {
    if (typeof v[key] !== 'string' || v[key] === '') throw new AgUiInputError(key, 'expected a non-empty string');
  }
  for (const key of ['messages', 'tools', 'context'] as const) {
    if (!Array.isArray(v[key])) throw new AgUiInputError(key, `expected an array, got ${v[key] === undefined ? 'nothing' : typeof v[key]}`);
  }
  (v.context as unknown[]).forEach((c, i) => {
    const entry = c as { description?: unknown; value?: unknown } | null;
    if (typeof entry?.description !== 'string' || typeof entry.value !== 'string') throw new AgUiInputError(`context[${i}]`, 'expected { description: string, value: string }');
  });
  if (v.resume !== undefined && !Array.isArray(v.resume)) throw new AgUiInputError('resume', 'expected an array');
  const input = value as AgUiRunAgentInput;
  fromAgUiMessages(input.messages, { now: () => 0 });
  input.tools.forEach((t, i) => clientTool(t, `tools[${i}]`, serverTools));
  decisionsOf(input.resume ?? []);
  return input;
}
