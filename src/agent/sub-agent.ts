import { Observable } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { textOf, userMessage, type AssistantMessage } from '../types/message.js';
import type { ModelConfig, Provider } from '../types/provider.js';
import type { AnyTool, Tool, ToolEmission } from '../types/tool.js';
import { toolUpdate } from '../types/tool.js';
import { defineTool } from '../tools/define-tool.js';
import { argsSchema } from '../tools/args-schema.js';
import { agentLoop } from '../loop/agent-loop.js';
import type { AgentLoopConfig } from '../loop/config.js';
import { defaultIds, loopIdFor } from '../loop/ids.js';

export interface SubAgentOptions {
  name: string;
  description?: string;
  model: ModelConfig;
  provider?: Provider;
  systemPrompt?: string;
  tools?: readonly AnyTool[];
  /** The child's turn limit (default 10). */
  maxTurns?: number;
  /** More loop options for the child (hooks, retry, ...). */
  config?: Partial<Omit<AgentLoopConfig, 'model' | 'provider' | 'signal'>>;
  /** Every event of the child run, for recorders and UIs (the parent's stream sees only tool updates). */
  onEvent?(event: AgentEvent): void;
}

const subAgentArgs = argsSchema<{ task: string }>({
  type: 'object',
  properties: { task: { type: 'string', minLength: 1, description: 'The task for the sub-agent, stated completely.' } },
  required: ['task'],
});

/**
 * A tool that delegates a task to a child agent loop with its own model, prompt, tools and turn
 * limit. The child gets a new agent id and session id; its AgentStart carries the caller's loop
 * as `parentLoopId`, the parent's ToolExecutionEnd carries the child's loop as `childLoopId`, the
 * child's text streams to the parent as tool updates, aborting the parent aborts the child, and the
 * child's final text is the result.
 *
 * @example
 * const researcher = subAgentTool({ name: 'research', model, systemPrompt: 'Research carefully.', tools: [search] });
 * new BasicAgent({ model }).withTools(researcher);
 */
export function subAgentTool(options: SubAgentOptions): Tool<{ task: string }> {
  return defineTool({
    name: options.name,
    label: options.name,
    description: options.description ?? `Delegates a task to the "${options.name}" sub-agent and returns its answer.`,
    parameters: subAgentArgs,
    execute: ({ task }, ctx) => {
      const ids = options.config?.ids ?? defaultIds;
      const sessionId = ids();
      const childLoopId = loopIdFor(sessionId, 'sub', 1);
      const run$ = agentLoop(
        [userMessage(task, ctx.scheduler.now())],
        {
          systemPrompt: options.systemPrompt ?? '',
          messages: [],
          tools: options.tools ?? [],
          agentId: ids(),
          sessionId,
          loopId: childLoopId,
          parentLoopId: ctx.loopId,
          parentToolCallId: ctx.toolCallId,
        },
        {
          scheduler: ctx.scheduler,
          ...options.config,
          model: options.model,
          ...(options.provider ? { provider: options.provider } : {}),
          limits: { maxTurns: options.maxTurns ?? 10, ...options.config?.limits },
          signal: ctx.signal,
          firstTurnTrigger: 'subAgent',
        },
      );
      return new Observable<ToolEmission>((subscriber) => {
        let streamed = '';
        return run$.subscribe({
          next(e) {
            options.onEvent?.(e);
            if (e.type === 'MessageUpdate' && e.delta.type === 'text') {
              streamed += e.delta.delta;
              subscriber.next(toolUpdate(streamed));
            } else if (e.type === 'MessageEnd' && e.message.role === 'assistant') streamed = '';
            else if (e.type === 'AgentEnd') {
              const last = [...e.messages].reverse().find((m): m is AssistantMessage => m.role === 'assistant');
              const text = last ? textOf(last) : '';
              const failed = !last || last.stopReason === 'error' || last.stopReason === 'aborted';
              subscriber.next({
                content: [{ type: 'text', text: text || (last?.errorMessage ? `Sub-agent failed: ${last.errorMessage}` : 'Sub-agent produced no answer.') }],
                childLoopId,
                isError: failed,
                details: { childSessionId: sessionId, stopReason: e.stopReason, usage: e.usage, turns: e.messages.filter((m) => m.role === 'assistant').length },
              });
            }
          },
          error: (err: unknown) => subscriber.error(err),
          complete: () => subscriber.complete(),
        });
      });
    },
  });
}

