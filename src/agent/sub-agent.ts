import type { AgentEvent } from '../types/events.js';
import type { ModelConfig, Provider } from '../types/provider.js';
import type { AnyTool, Tool } from '../types/tool.js';
import { argsSchema } from '../tools/args-schema.js';
import type { AgentLoopConfig } from '../loop/config.js';
import type { AgentSpec } from '../loop/handoff-team.js';
import { agentTool } from './agent-tool.js';

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
 * child's final text is the result. `agentTool` with `stream: false` (its child's events stay out
 * of the parent's stream); `agentTool` itself forwards them.
 *
 * @example
 * const researcher = subAgentTool({ name: 'research', model, systemPrompt: 'Research carefully.', tools: [search] });
 * new BasicAgent({ model }).withTools(researcher);
 */
export function subAgentTool(options: SubAgentOptions): Tool<{ task: string }> {
  const agent: AgentSpec = {
    name: options.name, model: options.model, tools: options.tools ?? [],
    ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}), ...(options.provider ? { provider: options.provider } : {}),
  };
  return agentTool(agent, {
    name: options.name,
    description: options.description ?? `Delegates a task to the "${options.name}" sub-agent and returns its answer.`,
    input: subAgentArgs,
    maxTurns: options.maxTurns ?? 10,
    stream: false,
    ...(options.config ? { config: options.config } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
}
