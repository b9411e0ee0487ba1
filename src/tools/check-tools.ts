import type { AnyTool } from '../types/tool.js';
import { AgentError } from '../types/errors.js';
import { TOOL_NAME_PATTERN } from './tool-name.js';
import { checkParametersSchema } from './define-tool.js';

/**
 * Checks the tools of a run when it starts (hand-made tools skip `defineTool`'s checks): each
 * needs a provider-safe unique name, an `execute` function and `parameters` that are a compilable
 * JSON Schema of an object. Throws AgentError('InvalidTool') naming the tool and its index.
 * Compiled schemas are cached per schema object, so a tool used by many runs is checked cheaply.
 *
 * @example
 * checkTools([add, { ...add }]); // throws: tools[1] "add": two tools are named "add" (tools[0] and tools[1])
 */
export function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) throw new AgentError('InvalidTool', `context.tools: expected an array of tools, got ${tools === null ? 'null' : typeof tools}`);
  const seen = new Map<string, number>();
  tools.forEach((tool: unknown, i) => {
    const at = `context.tools[${i}]`;
    if (tool === null || typeof tool !== 'object') throw new AgentError('InvalidTool', `${at}: expected a tool object, got ${tool === null ? 'null' : typeof tool}`);
    const t = tool as Partial<AnyTool>;
    const label = `${at} "${String(t.name)}"`;
    const fail = (reason: string): never => {
      throw new AgentError('InvalidTool', `${label}: ${reason}`);
    };
    if (typeof t.name !== 'string' || !TOOL_NAME_PATTERN.test(t.name)) fail('name must be 1-64 characters of [a-zA-Z0-9_-]');
    const first = seen.get(t.name!);
    if (first !== undefined) fail(`two tools are named "${t.name}" (context.tools[${first}] and context.tools[${i}]): tool names must be unique`);
    seen.set(t.name!, i);
    if (typeof t.execute !== 'function') fail('execute must be a function');
    const problem = checkParametersSchema(t.parameters);
    if (problem) fail(problem);
    const approval: unknown = t.needsApproval;
    if (approval !== undefined && typeof approval !== 'boolean' && typeof approval !== 'function') fail(`needsApproval must be a boolean or a function, got ${approval === null ? 'null' : typeof approval}`);
  });
}
