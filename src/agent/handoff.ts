import type { AgentMessage } from '../types/message.js';
import type { JsonSchema, ToolContext } from '../types/tool.js';
import { defineTool, type ArgsOf } from '../tools/define-tool.js';
import { argsSchema, type ArgsSchema } from '../tools/args-schema.js';
import type { StandardSchemaV1 } from '../tools/standard-schema.js';
import type { AgentSpec, HandoffInputFilter, HandoffTool } from '../loop/handoff-team.js';

export interface HandoffOptions<S extends StandardSchemaV1 | JsonSchema = ArgsSchema<{ reason?: string }>> {
  /** The tool's name (default `transfer_to_<agent name>`, non-name characters as `_`). */
  toolName?: string;
  /** What the model reads about it (default: hand the conversation to <name>, and the agent's description). */
  description?: string;
  /** The arguments the model gives with the handoff (default `{ reason?: string }`): a Standard Schema or JSON Schema, as a tool's `parameters`. */
  inputSchema?: S;
  /** Which messages the next agent sees (default all; {@link withoutToolCalls} drops the tool calls). */
  inputFilter?: HandoffInputFilter;
  /** Called when the model asks for the handoff, before it happens; one that throws or rejects turns it down (the model reads the error). */
  onHandoff?(args: ArgsOf<S>, ctx: ToolContext): void | Promise<void>;
}

const reasonArgs = argsSchema<{ reason?: string }>({
  type: 'object',
  properties: { reason: { type: 'string', description: 'Why the conversation goes to this agent.' } },
});

/**
 * A handoff: a tool that, when the model calls it, passes the conversation to `agent`. The run
 * goes on (no second loop) with the agent's system prompt, tools, model and settings, keeping the
 * conversation (or what `inputFilter` keeps); a `Handoff` event says who handed to whom, and
 * `AgentEnd.agent` names the agent that answered last. Handoffs chain (the agent's own tools may hand
 * on) and a cycle is bounded by the run's limits (`limits.maxTurns`).
 *
 * @example
 * const refunds = { name: 'refunds', systemPrompt: 'You issue refunds.', tools: [refund] };
 * const billing = { name: 'billing', systemPrompt: 'You answer billing questions.', tools: [handoff(refunds)] };
 * const agent = new BasicAgent({ model, agentName: 'triage', systemPrompt: 'Route the customer.', tools: [handoff(billing)] });
 */
export function handoff<S extends StandardSchemaV1 | JsonSchema = ArgsSchema<{ reason?: string }>>(agent: AgentSpec, options: HandoffOptions<S> = {}): HandoffTool {
  if (agent === null || typeof agent !== 'object' || typeof agent.name !== 'string' || agent.name === '') {
    throw new TypeError('handoff: the agent needs a name (a non-empty string)');
  }
  const name = options.toolName ?? defaultToolName(agent.name);
  const onHandoff = options.onHandoff;
  const done = { content: [{ type: 'text' as const, text: `Handed off to ${agent.name}.` }], details: { handoff: agent.name } };
  const tool = defineTool({
    name,
    description: options.description ?? `Hands the conversation to the ${agent.name} agent${agent.description ? `: ${agent.description}` : '.'}`,
    parameters: (options.inputSchema ?? reasonArgs) as S,
    execute: (args, ctx) => (onHandoff ? Promise.resolve(onHandoff(args, ctx)).then(() => done) : done),
  });
  return Object.assign(tool, { handoff: { agent, ...(options.inputFilter ? { inputFilter: options.inputFilter } : {}) } }) as HandoffTool;
}

/** `transfer_to_<name>`, as a tool name allows (`[a-zA-Z0-9_-]`, at most 64 characters). */
function defaultToolName(agentName: string): string {
  return `transfer_to_${agentName.replace(/[^a-zA-Z0-9_-]+/g, '_')}`.slice(0, 64);
}

/**
 * A handoff `inputFilter` that keeps the conversation without tool calls and their results (the
 * handoff's own among them): the next agent reads what was said, not what the previous one did.
 * What the previous agent said after the last user message goes too: the next agent answers that
 * message itself.
 *
 * @example
 * handoff(refunds, { inputFilter: withoutToolCalls });
 */
export const withoutToolCalls: HandoffInputFilter = ({ messages }) => {
  const kept: AgentMessage[] = [];
  for (const m of messages) {
    if (m.role === 'toolResult') continue;
    if (m.role !== 'assistant') {
      kept.push(m);
      continue;
    }
    const content = m.content.filter((c) => c.type !== 'toolCall');
    if (content.length === m.content.length) kept.push(m);
    else if (content.some((c) => c.type === 'text' && c.text.trim() !== '')) kept.push({ ...m, content, stopReason: 'stop' });
  }
  while (kept.length > 0 && kept[kept.length - 1]!.role === 'assistant') kept.pop();
  return kept;
};
