/**
 * The built-in tools on a scratch workspace, called directly (no model needed):
 * write, edit, read, list, search and bash, confined to a temp directory.
 *
 *   npm run example examples/tools.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { asyncScheduler, defer, filter, from, isObservable, lastValueFrom, map, tap } from 'rxjs';
import type { Observable } from 'rxjs';
import { defaultTools } from 'phi-rx/tools';
import type { AnyTool, ToolContext, ToolEmission, ToolResult } from 'phi-rx';

export interface Step {
  tool: string;
  text: string;
  isError: boolean;
}

/** Runs the tools on a temp workspace and returns what each call answered. */
export async function main(log: (line: string) => void = console.log): Promise<Step[]> {
  const workspace = await mkdtemp(path.join(tmpdir(), 'phi-rx-example-'));
  try {
    const tools = new Map(defaultTools({ cwd: workspace, root: workspace, bash: { timeoutMs: 10_000 } }).map((t) => [t.name, t]));
    const steps: Step[] = [];
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await runTool(tools.get(name) as AnyTool, args, (update) => log(`  ...${update}`));
      const step = { tool: name, text: textOf(result), isError: result.isError === true };
      log(`> ${name} ${JSON.stringify(args)}\n${step.text}\n`);
      steps.push(step);
    };

    await call('write_file', { path: 'src/greet.ts', content: 'export const greet = (who: string) => `Hello, ${who}`;\n' });
    await call('edit_file', { path: 'src/greet.ts', oldText: 'Hello', newText: 'Hi' });
    await call('read_file', { path: 'src/greet.ts' });
    await call('write_file', { path: '.gitignore', content: 'build/\n' });
    await call('write_file', { path: 'build/out.js', content: 'greet()' });
    await call('list_files', {});
    await call('search', { pattern: 'greet', literal: true });
    await call('bash', { command: 'ls src && echo done >&2 && exit 2' });
    await call('read_file', { path: '../escape.txt' });
    return steps;
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

/**
 * Validates the arguments and runs one tool call to its final result, whatever `execute`
 * returned. A thrown or emitted error becomes an error result, as the agent loop does it.
 */
async function runTool(tool: AnyTool, args: Record<string, unknown>, onUpdate: (text: string) => void): Promise<ToolResult> {
  const checked = tool.validate?.(args) ?? { ok: true as const, value: args };
  if (!checked.ok) return errorResult(checked.error);
  const ctx: ToolContext = {
    toolCallId: 'example',
    toolName: tool.name,
    signal: new AbortController().signal,
    loopId: 'example.loop.1',
    scheduler: asyncScheduler,
    onUpdate: (partial) => onUpdate(typeof partial === 'string' ? partial : textOf(partial)),
    onProgress: () => undefined,
  };
  const emissions$: Observable<ToolEmission | string> = defer(() => {
    const execution = tool.execute(checked.value, ctx);
    return isObservable(execution) ? execution : from(Promise.resolve(execution));
  });
  return lastValueFrom(
    emissions$.pipe(
      tap((e) => typeof e !== 'string' && 'kind' in e && e.kind === 'update' && onUpdate(textOf(e.partial))),
      filter((e) => typeof e === 'string' || !('kind' in e)),
      map((e) => (typeof e === 'string' ? { content: [{ type: 'text' as const, text: e }] } : (e as ToolResult))),
    ),
  ).catch((e: unknown) => errorResult(e instanceof Error ? e.message : String(e)));
}

const errorResult = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], isError: true });

function textOf(result: ToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
