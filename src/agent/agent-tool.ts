import { Observable } from 'rxjs';
import type { AgentEndEvent, AgentEvent } from '../types/events.js';
import { textOf, userMessage, type AssistantMessage } from '../types/message.js';
import type { JsonSchema, Tool, ToolContext, ToolEmission, ToolResult } from '../types/tool.js';
import { toolUpdate } from '../types/tool.js';
import { defineTool, type ArgsOf } from '../tools/define-tool.js';
import { argsSchema, type ArgsSchema } from '../tools/args-schema.js';
import type { StandardSchemaV1 } from '../tools/standard-schema.js';
import { agentLoop } from '../loop/agent-loop.js';
import type { AgentLoopConfig } from '../loop/config.js';
import type { AgentSpec } from '../loop/handoff-team.js';
import { defaultIds, loopIdFor } from '../loop/ids.js';
import type { OutputSchema } from '../output/output-spec.js';

export interface AgentToolOptions<S extends StandardSchemaV1 | JsonSchema = ArgsSchema<{ task: string }>> {
  /** The tool's name (default the agent's name, non-name characters as `_`). */
  name?: string;
  /** What the model reads about it (default the agent's description, else "Delegates a task to …"). */
  description?: string;
  /** The arguments the model gives (default `{ task: string }`, the child's prompt); other arguments reach the child as JSON. */
  input?: S;
  /** The child's answer as structured output (see `config.output`): the tool result is the validated value, as JSON. */
  output?: OutputSchema;
  /** The child's turn limit (default 10). */
  maxTurns?: number;
  /** More loop options for the child (hooks, retry, …). */
  config?: Partial<Omit<AgentLoopConfig, 'model' | 'provider' | 'signal'>>;
  /** Every event of the child run (they also reach the parent's stream, when the parent's dispatch forwards them). */
  onEvent?(event: AgentEvent): void;
  /** `false`: the child's events stay out of the parent's stream, which sees its text as tool updates only (what `subAgentTool` does). Default `true`. */
  stream?: boolean;
}

const taskArgs = argsSchema<{ task: string }>({
  type: 'object',
  properties: { task: { type: 'string', minLength: 1, description: 'The task for the agent, stated completely.' } },
  required: ['task'],
});

/**
 * An agent as a tool: each call runs the agent (a child loop with its own model, prompt, tools and
 * turn limit, new agent and session ids) on the call's task. The child's events reach the parent's
 * stream as they happen (`ctx.emit`): its AgentStart names the calling loop (`parentLoopId`) and the
 * call (`parentToolCallId`), so a UI or `transcript()` shows the child's work under the call. A
 * child tool that needs approval asks through the parent's approval channel (`agent.approve(id)`
 * answers it), aborting the parent or cancelling the call (`cancelToolCall`) ends the child and
 * only it, and the result is the child's final text, or with `output` its validated structured
 * output (as JSON; the value on `details.output`).
 *
 * @example
 * const researcher = agentTool({ name: 'researcher', model, systemPrompt: 'Research carefully.', tools: [search] });
 * new BasicAgent({ model }).withTools(researcher);
 */
export function agentTool<S extends StandardSchemaV1 | JsonSchema = ArgsSchema<{ task: string }>>(agent: AgentSpec, options: AgentToolOptions<S> = {}): Tool<ArgsOf<S>> & { readonly agent: AgentSpec } {
  if (agent === null || typeof agent !== 'object' || typeof agent.name !== 'string' || agent.name === '') throw new TypeError('agentTool: the agent needs a name (a non-empty string)');
  if (!agent.model) throw new TypeError(`agentTool "${agent.name}": the agent needs a model (agent.model)`);
  const model = agent.model;
  const tool = defineTool({
    name: options.name ?? agent.name.replace(/[^a-zA-Z0-9_-]+/g, '_').slice(0, 64),
    label: agent.name,
    description: options.description ?? agent.description ?? `Delegates a task to the "${agent.name}" agent and returns its answer.`,
    parameters: (options.input ?? taskArgs) as S,
    execute: (args, ctx) => {
      const ids = options.config?.ids ?? defaultIds;
      const sessionId = ids();
      const childLoopId = loopIdFor(sessionId, 'sub', 1);
      const run$ = agentLoop(
        [userMessage(promptOf(args), ctx.scheduler.now())],
        {
          systemPrompt: agent.systemPrompt ?? '', messages: [], tools: agent.tools ?? [], agentId: ids(), sessionId, loopId: childLoopId,
          parentLoopId: ctx.loopId, parentToolCallId: ctx.toolCallId,
        },
        {
          scheduler: ctx.scheduler,
          ...(ctx.approval ? { approval: ctx.approval } : {}),
          ...options.config,
          model,
          ...(agent.provider ? { provider: agent.provider } : {}),
          ...(agent.thinkingLevel !== undefined ? { thinkingLevel: agent.thinkingLevel } : {}),
          ...(agent.maxTokens !== undefined ? { maxTokens: agent.maxTokens } : {}),
          ...(agent.temperature !== undefined ? { temperature: agent.temperature } : {}),
          ...(options.output !== undefined ? { output: options.output } : {}),
          limits: { maxTurns: options.maxTurns ?? 10, ...options.config?.limits },
          signal: ctx.signal,
          firstTurnTrigger: 'subAgent',
        },
      );
      return childRun(run$, options.stream === false ? undefined : ctx.emit, childLoopId, sessionId, options.onEvent);
    },
  });
  return Object.assign(tool, { agent }); // what the run reaches through it (its approval channel is wired for the agent's tools too)
}

/** The child's prompt: the task, or the arguments as JSON. */
function promptOf(args: unknown): string {
  const task = (args as { task?: unknown }).task;
  const keys = Object.keys(args as object);
  return typeof task === 'string' && keys.length === 1 ? task : JSON.stringify(args, null, 2);
}

/** The child run as the tool's emissions: its events forwarded, its text as updates, its answer as the result. */
function childRun(
  run$: Observable<AgentEvent>, emit: ToolContext['emit'], childLoopId: string, sessionId: string, onEvent: ((e: AgentEvent) => void) | undefined,
): Observable<ToolEmission> {
  return new Observable<ToolEmission>((subscriber) => {
    let streamed = '';
    return run$.subscribe({
      next(e) {
        onEvent?.(e);
        emit?.(e);
        if (e.type === 'MessageUpdate' && e.delta.type === 'text' && e.loopId === childLoopId) {
          streamed += e.delta.delta;
          subscriber.next(toolUpdate(streamed));
        } else if (e.type === 'MessageEnd' && e.message.role === 'assistant') streamed = '';
        else if (e.type === 'AgentEnd' && e.loopId === childLoopId) subscriber.next(resultOf(e, childLoopId, sessionId));
      },
      error: (err: unknown) => subscriber.error(err),
      complete: () => subscriber.complete(),
    });
  });
}

function resultOf(e: AgentEndEvent, childLoopId: string, childSessionId: string): ToolResult {
  const last = [...e.messages].reverse().find((m): m is AssistantMessage => m.role === 'assistant');
  const failed = !last || last.stopReason === 'error' || last.stopReason === 'aborted';
  const details = { childSessionId, stopReason: e.stopReason, usage: e.usage, turns: e.messages.filter((m) => m.role === 'assistant').length };
  if (!failed && e.output !== undefined) return { content: [{ type: 'text', text: JSON.stringify(e.output) }], childLoopId, isError: false, details: { ...details, output: e.output } };
  if (!failed && e.outputError) return { content: [{ type: 'text', text: `The agent's answer did not match its output schema: ${e.outputError.message}` }], childLoopId, isError: true, details };
  const text = last ? textOf(last) : '';
  return {
    content: [{ type: 'text', text: text || (last?.errorMessage ? `Sub-agent failed: ${last.errorMessage}` : 'Sub-agent produced no answer.') }],
    childLoopId, isError: failed, details,
  };
}
