/**
 * MCP servers as tools: spawn the MCP reference server ("everything") over stdio, turn its tools
 * into phi-rx Tools, and call two of them the way the agent loop would (one of them streams
 * progress notifications while it runs).
 *
 * Run: npx tsx examples/mcp.ts
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { asyncScheduler, from, isObservable, lastValueFrom, tap } from 'rxjs';
import { connectMcpStdio } from '../src/mcp/index.js';
import type { Tool, ToolEmission, ToolResult } from '../src/types/tool.js';

export async function main(): Promise<{ tools: string[]; echo: string; progress: string[] }> {
  const serverScript = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
  // The server gets only the SDK's safe defaults (PATH, HOME, ...) plus what is listed in `env`.
  const everything = await connectMcpStdio({ command: process.execPath, args: [serverScript, 'stdio'], env: { DEMO: '1' } });
  try {
    // `{prefix}__{name}` keeps several servers apart; hand these to an agent as its tools.
    const tools = await everything.tools({ prefix: 'everything', timeoutMs: 10_000 });
    console.log(`${everything.name}: ${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);

    const echo = await callOnce(find(tools, 'everything__echo'), { message: 'hello from phi-rx' });
    console.log('echo ->', textOf(echo.result));

    const run = await callOnce(find(tools, 'everything__trigger-long-running-operation'), { duration: 0.3, steps: 3 });
    console.log('long-running ->', textOf(run.result));
    return { tools: tools.map((t) => t.name), echo: textOf(echo.result), progress: run.progress };
  } finally {
    await everything.close(); // ends the child process
  }
}

/** Runs a tool once, as the loop does: progress lines as they come, then the result. */
async function callOnce(tool: Tool, args: Record<string, unknown>): Promise<{ result: ToolResult; progress: string[] }> {
  const progress: string[] = [];
  const controller = new AbortController();
  const out = tool.execute(args, {
    toolCallId: 'example',
    toolName: tool.name,
    loopId: 'example',
    signal: controller.signal,
    scheduler: asyncScheduler,
    onUpdate: () => undefined,
    onProgress: (text) => progress.push(text),
  });
  const emissions = isObservable(out) ? out : from(Promise.resolve(out));
  let result: ToolResult = { content: [] };
  await lastValueFrom(
    emissions.pipe(
      tap((e: ToolEmission | string) => {
        if (typeof e === 'string') result = { content: [{ type: 'text', text: e }] };
        else if ('kind' in e && e.kind === 'progress') {
          progress.push(e.text);
          console.log('  progress:', e.text);
        } else if (!('kind' in e)) result = e;
      }),
    ),
  );
  return { result, progress };
}

function find(tools: Tool[], name: string): Tool {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

const textOf = (result: ToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
