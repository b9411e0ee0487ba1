/**
 * Calling one tool by hand, outside any agent loop: `npm run example examples/call-tool.ts`.
 * The MCP and OpenAPI examples carry a copy of its `callTool` helper.
 */
import { pathToFileURL } from 'node:url';
import { asyncScheduler, lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { defineTool, runTool, type AnyTool, type ToolResult } from 'phi-rx';

/**
 * Calls the tool named `name` once, the way the agent loop does (through `runTool`): progress
 * lines are printed as they come, then the result. The MCP and OpenAPI examples carry a copy.
 */
export async function callTool(
  tools: readonly AnyTool[],
  name: string,
  args: Record<string, unknown>,
): Promise<{ result: ToolResult; progress: string[] }> {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  const emissions = await lastValueFrom(
    runTool(tool, args, { toolCallId: 'example', loopId: 'example', scheduler: asyncScheduler }).pipe(
      tap((e) => e.kind === 'progress' && console.log('  progress:', e.text)),
      toArray(),
    ),
  );
  const progress = emissions.flatMap((e) => (e.kind === 'progress' ? [e.text] : []));
  const result = emissions.flatMap((e) => (e.kind === 'result' ? [e.result] : []))[0]!;
  return { result, progress };
}

/** A tool result as text, other content as `[type]`. */
export const resultText = (result: ToolResult): string =>
  result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const add = defineTool({
    name: 'add',
    description: 'Adds two numbers',
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => String(a + b),
  });
  const ok = await callTool([add], 'add', { a: 2, b: 40 });
  console.log(`add({ a: 2, b: 40 }) → ${resultText(ok.result)}`);
  // runTool runs the tool as given; the loop validates arguments first (dispatchTools), as here:
  const checked = add.validate?.({ a: 'two' });
  console.log(`add.validate({ a: 'two' }) → ${checked?.ok ? 'ok' : `rejected: ${checked?.error}`}`);
}
