/**
 * MCP servers as tools: spawn the MCP reference server ("everything") over stdio, turn its tools
 * into phi-rx Tools, and call two of them the way the agent loop would (one of them streams
 * progress notifications while it runs).
 *
 * Run: npm run example examples/mcp.ts
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { asyncScheduler, lastValueFrom, tap, toArray } from 'rxjs';
import { runTool, type AnyTool, type ToolResult } from 'phi-rx';
import { connectMcpStdio } from 'phi-rx/mcp';

export async function main(): Promise<{ tools: string[]; echo: string; progress: string[] }> {
  const serverScript = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
  // The server gets only the SDK's safe defaults (PATH, HOME, ...) plus what is listed in `env`.
  const everything = await connectMcpStdio({ command: process.execPath, args: [serverScript, 'stdio'], env: { DEMO: '1' } });
  try {
    // `{prefix}__{name}` keeps several servers apart; hand these to an agent as its tools.
    const tools = await everything.tools({ prefix: 'everything', timeoutMs: 10_000 });
    console.log(`${everything.name}: ${tools.length} tools: ${tools.map((t) => t.name).join(', ')}`);

    const echo = await callTool(tools, 'everything__echo', { message: 'hello from phi-rx' });
    console.log('echo ->', resultText(echo.result));

    // This one streams progress notifications while it runs.
    const run = await callTool(tools, 'everything__trigger-long-running-operation', { duration: 0.3, steps: 3 });
    console.log('long-running ->', resultText(run.result));
    return { tools: tools.map((t) => t.name), echo: resultText(echo.result), progress: run.progress };
  } finally {
    await everything.close(); // ends the child process
  }
}

// ---- a helper, here so that this file runs on its own when copied into a project

/**
 * Calls the tool named `name` once, the way the agent loop does (through `runTool`), printing its
 * progress as it comes; resolves with the result and the progress lines (examples/call-tool.ts).
 */
async function callTool(tools: readonly AnyTool[], name: string, args: Record<string, unknown>): Promise<{ result: ToolResult; progress: string[] }> {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  const run$ = runTool(tool, args, { toolCallId: 'example', loopId: 'example', scheduler: asyncScheduler });
  const emissions = await lastValueFrom(run$.pipe(tap((e) => e.kind === 'progress' && console.log('  progress:', e.text)), toArray()));
  const progress = emissions.flatMap((e) => (e.kind === 'progress' ? [e.text] : []));
  const result = emissions.flatMap((e) => (e.kind === 'result' ? [e.result] : []))[0]!;
  return { result, progress };
}

/** A tool result as text, other content as `[type]`. */
const resultText = (result: ToolResult): string => result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
