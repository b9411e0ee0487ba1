import { asyncScheduler, lastValueFrom, tap, toArray } from 'rxjs';
import { runTool, type AnyTool, type ToolResult } from 'phi-rx';

/**
 * Calls the tool named `name` once, the way the agent loop does (through `runTool`): progress
 * lines are printed as they come, then the result. Shared by the examples.
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
