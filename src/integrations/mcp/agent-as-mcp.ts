import { EMPTY, merge, Observable, Subject } from 'rxjs';
import type { BasicAgent } from '../../agent/basic-agent.js';
import { agentLoop } from '../../loop/agent-loop.js';
import type { AgentLoopConfig } from '../../loop/config.js';
import { defaultIds, loopIdFor } from '../../loop/ids.js';
import type { ApprovalAnswer, ApprovalDecision } from '../../operators/request-approval.js';
import { outputSpecOf, type OutputSchema } from '../../output/output-spec.js';
import { onAbort } from '../../sources/cancellation.js';
import { errorMessage } from '../../types/errors.js';
import type { AgentEndEvent, AgentEvent } from '../../types/events.js';
import { userMessage, type AssistantMessage } from '../../types/message.js';
import type { McpToolInfo } from './types.js';
import { errorToolResult, type McpToolResult, type ServedCall, type ServedEmission, type ServedTool } from './served-tool.js';

/** An agent served as the MCP tool `ask_<name>`. */
export interface McpServedAgent {
  /** Each call runs this agent's definition (model, system prompt, tools, hooks, limits) on a new conversation. */
  agent: BasicAgent;
  /** The tool is `ask_<name>`: letters, digits, `_`, `-` and `.`. */
  name: string;
  /** What the calling model reads about the agent. Default: "Asks the agent <name> to do a task …". */
  description?: string;
  /** Structured output: the tool declares it as its output schema and answers with it. Default: the agent's own `output`. */
  output?: OutputSchema;
}

/** Every event of one served run, with the call it serves. */
export type McpRunEventListener = (event: AgentEvent, call: { readonly tool: string; readonly requestId: string }) => void;

const TASK_SCHEMA: McpToolInfo['inputSchema'] = {
  type: 'object',
  properties: { task: { type: 'string', minLength: 1, description: 'The task, stated completely.' } },
  required: ['task'],
};

/** The longest progress line sent for an answer's text. */
const MAX_PROGRESS_TEXT = 500;

/**
 * An agent as a served MCP tool `ask_<name>` with the input `{ task }`: each call runs the agent's
 * definition on a new conversation, its run's progress as progress lines, tool approvals asked of
 * the client's user, the client's cancel aborting the run (tools included). The result is the final
 * answer's text, or with an output schema the structured output (`structuredContent`).
 *
 * ```
 * client:  call(task)------------------------
 * run:     S-T--x--a--E|                      (T: turn, x: tool start / end, a: answer text, E: AgentEnd)
 * served:  --P--P--P--R|                      (P: progress lines, R: the result)
 * ```
 *
 * @example
 * const served = agentAsMcp({ agent: new BasicAgent({ model }), name: 'helper' });
 */
export function agentAsMcp(served: McpServedAgent, onEvent?: McpRunEventListener): ServedTool {
  if (!/^[A-Za-z0-9_.-]{1,120}$/.test(served.name)) {
    throw new TypeError(`serveMcp: agent name ${JSON.stringify(served.name)}: use 1-120 letters, digits, "_", "-" or "." (the tool is ask_<name>)`);
  }
  const name = `ask_${served.name}`;
  const output = served.output ?? served.agent.loopConfig().output;
  const outputSchema = output === undefined ? undefined : objectSchema(outputSpecOf(output).jsonSchema);
  const info = {
    name,
    title: served.name,
    description: served.description ?? `Asks the agent "${served.name}" to do a task and returns its answer.`,
    inputSchema: TASK_SCHEMA,
    ...(outputSchema ? { outputSchema: outputSchema.schema } : {}),
  };
  return {
    info,
    call: (args, call) => {
      const task = args['task'];
      if (typeof task !== 'string' || task.trim() === '') {
        return new Observable<ServedEmission>((s) => {
          s.next({ result: errorToolResult(`${name}: arguments.task must be a non-empty string, got ${describe(task)}`) });
          s.complete();
        });
      }
      return runAgent(served.agent, task, call, output, listener(onEvent, { tool: name, requestId: call.requestId }), outputSchema?.wrapped === true);
    },
  };
}

/** One run of the agent for one call, as progress lines then its result. The run's events go to `onEvent`. */
function runAgent(agent: BasicAgent, task: string, call: ServedCall, output: OutputSchema | undefined, onEvent: (e: AgentEvent) => void, wrapped: boolean): Observable<ServedEmission> {
  return new Observable<ServedEmission>((subscriber) => {
    const controller = new AbortController();
    const stopAbort = onAbort(call.signal, () => controller.abort(call.signal.reason));
    const answers = new Subject<ApprovalAnswer>();
    const sessionId = defaultIds();
    const loopId = loopIdFor(sessionId, 'mcp', 1);
    const context = { systemPrompt: agent.systemPrompt, messages: [], tools: agent.toolList, agentId: agent.agentId, sessionId, loopId };
    // Questions still open, by call: one decided otherwise (the approval config's `decide`, an abort) is withdrawn.
    const open = new Map<string, AbortController>();
    const ask = (e: Extract<AgentEvent, { type: 'ToolApprovalRequested' }>): void => {
      const withdraw = new AbortController();
      open.set(e.toolCallId, withdraw);
      // Answered: no longer open (withdrawing an answered question would tell the client to cancel it).
      const answer = (decision: ApprovalDecision): void => {
        if (open.get(e.toolCallId) === withdraw) open.delete(e.toolCallId);
        answers.next({ toolCallId: e.toolCallId, ...decision });
      };
      call.approve({ loopId: e.loopId, toolCallId: e.toolCallId, toolName: e.toolName, args: e.args }, withdraw.signal).then(
        answer,
        (error: unknown) => answer({ approved: false, reason: errorMessage(error) }),
      );
    };
    const settled = (toolCallId: string): void => {
      open.get(toolCallId)?.abort(new Error('decided otherwise'));
      open.delete(toolCallId);
    };
    const run = agentLoop([userMessage(task)], context, callConfig(agent, controller.signal, answers, output)).subscribe({
      next: (e) => {
        onEvent(e);
        const line = progressLine(e);
        if (line !== undefined) subscriber.next({ progress: line });
        if (e.type === 'ToolApprovalRequested') ask(e);
        else if (e.type === 'ToolApprovalResolved') settled(e.toolCallId);
        if (e.type === 'AgentEnd' && e.loopId === loopId) subscriber.next({ result: endResult(e, output !== undefined, wrapped) });
      },
      error: (error: unknown) => {
        subscriber.next({ result: errorToolResult(`The agent run failed: ${errorMessage(error)}`) });
        subscriber.complete();
      },
      complete: () => subscriber.complete(),
    });
    return () => {
      stopAbort();
      for (const id of [...open.keys()]) settled(id);
      run.unsubscribe();
      answers.complete();
    };
  });
}

/**
 * The agent's loop config for a served run: its own options, without its steering and follow-up
 * queues (those are for its own runs), with the client's approval answers and the call's signal.
 */
function callConfig(agent: BasicAgent, signal: AbortSignal, answers: Subject<ApprovalAnswer>, output: OutputSchema | undefined): AgentLoopConfig {
  const { steering: _s, followUp: _f, ...config } = agent.loopConfig(signal);
  const approval = config.approval ? { ...config.approval, answers: merge(config.approval.answers ?? EMPTY, answers) } : undefined;
  return { ...config, ...(approval ? { approval } : {}), ...(output !== undefined ? { output } : {}) };
}

/** `onEvent` for one call; a listener that throws is ignored: it must not end the run it watches. */
function listener(onEvent: McpRunEventListener | undefined, call: { tool: string; requestId: string }): (e: AgentEvent) => void {
  if (!onEvent) return () => undefined;
  return (e) => {
    try {
      onEvent(e, call);
    } catch {
      // a listener's failure is its own
    }
  };
}

/** What a client shows while the run goes on; undefined for events that say nothing new (deltas, starts). */
function progressLine(e: AgentEvent): string | undefined {
  switch (e.type) {
    case 'TurnStart':
      return `turn ${e.turnIndex + 1}`;
    case 'MessageEnd': {
      if (e.message.role !== 'assistant') return undefined;
      const text = e.message.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      return text === '' ? undefined : clip(text);
    }
    case 'ToolExecutionStart':
      return `running ${e.toolName}`;
    case 'ToolExecutionEnd':
      return `${e.toolName} ${e.isError ? 'failed' : 'done'}`;
    case 'ProgressMessage':
      return `${e.toolName}: ${clip(e.text)}`;
    case 'ToolApprovalRequested':
      return `waiting for approval of ${e.toolName}`;
    case 'RetryScheduled':
      return `retrying in ${e.delayMs} ms (${e.errorKind})`;
    default:
      return undefined;
  }
}

/** The call's result from the run's end: the answer's text, or the structured output; a failed run is an error result. */
function endResult(end: AgentEndEvent, structured: boolean, wrapped: boolean): McpToolResult {
  const last = end.messages.findLast((m): m is AssistantMessage => m.role === 'assistant');
  const failure = failureOf(end, last);
  if (failure !== undefined) return errorToolResult(failure);
  if (!structured) return { content: [{ type: 'text', text: last ? textOf(last) : '' }] };
  if (end.output === undefined) {
    return errorToolResult(`The agent's answer did not match its output schema${end.outputError ? `: ${end.outputError.message}` : ''}`);
  }
  const value = end.output;
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: wrapped ? { value } : (value as Record<string, unknown>),
  };
}

/**
 * Why a run gave no answer (AgentRunError's words), or undefined. Written here rather than imported
 * from output/run-text: that module would then be shared by one more bundle entry, one more chunk for `phi-rx`.
 */
function failureOf(end: AgentEndEvent, last: AssistantMessage | undefined): string | undefined {
  if (end.rejection !== undefined) return `The prompt was rejected: ${end.rejection}`;
  if (end.stopReason === 'aborted') return 'The agent run was aborted';
  if (end.stopReason === 'error') return `The agent run failed: ${last?.errorMessage ?? 'it stopped with reason "error"'}`;
  return undefined;
}

const textOf = (message: AssistantMessage): string => message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');

/** An MCP output schema must describe an object: another schema is wrapped as `{ value }`. */
function objectSchema(schema: Record<string, unknown>): { schema: McpToolInfo['inputSchema']; wrapped: boolean } {
  if (schema['type'] === 'object') return { schema: schema as McpToolInfo['inputSchema'], wrapped: false };
  return { schema: { type: 'object', properties: { value: schema }, required: ['value'] }, wrapped: true };
}

function clip(text: string): string {
  return text.length <= MAX_PROGRESS_TEXT ? text : `${text.slice(0, MAX_PROGRESS_TEXT)}…`;
}

function describe(value: unknown): string {
  return value === undefined ? 'nothing' : typeof value === 'string' ? JSON.stringify(value) : typeof value;
}
