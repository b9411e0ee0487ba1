import { asyncScheduler, from, isObservable, lastValueFrom, map, toArray } from 'rxjs';
import type { Observable } from 'rxjs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Tool, ToolContext, ToolEmission } from '../../../src/types/tool.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const everythingServer = path.join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const testServer = path.join(repoRoot, 'test/integrations/mcp/fixtures/test-server.ts');

export function toolContext(tool: Tool, signal: AbortSignal = new AbortController().signal): ToolContext {
  return {
    toolCallId: 'call-1',
    toolName: tool.name,
    signal,
    loopId: 'loop-1',
    scheduler: asyncScheduler,
    onUpdate: () => undefined,
    onProgress: () => undefined,
  };
}

/** Everything a tool emits for one call, in order (the last element is the result). */
export function run(tool: Tool, args: Record<string, unknown> = {}, signal?: AbortSignal): Promise<ToolEmission[]> {
  const out = tool.execute(args, toolContext(tool, signal));
  const emissions: Observable<ToolEmission | string> = isObservable(out) ? out : from(Promise.resolve(out));
  return lastValueFrom(
    emissions.pipe(
      map((e): ToolEmission => (typeof e === 'string' ? { content: [{ type: 'text', text: e }] } : e)),
      toArray(),
    ),
  );
}

export async function resultOf(tool: Tool, args: Record<string, unknown> = {}, signal?: AbortSignal) {
  const emissions = await run(tool, args, signal);
  const last = emissions.at(-1);
  if (!last || 'kind' in last) throw new Error(`no final result: ${JSON.stringify(emissions)}`);
  return last;
}

export function textOf(result: { content: { type: string; text?: string }[] }): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `<${c.type}>`)).join('\n');
}

export function byName(tools: Tool[], name: string): Tool {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name} among ${tools.map((t) => t.name).join(', ')}`);
  return tool;
}

/** Polls until `check` returns a value (not undefined), or fails after `ms`. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
