/**
 * An agent others can call: this file serves a (scripted, keyless) agent over MCP on stdio, as the
 * tool `ask_assistant`. Its `publish` tool needs approval, which the server asks of the MCP client's
 * user (elicitation). Run without arguments, it plays the client too: it starts itself as an MCP
 * server, lists the tools, asks the agent twice (progress printed as it comes) and approves the
 * publication when asked.
 *
 * Run: npm run example examples/mcp-server.ts
 * Serve only (for any MCP client, e.g. the inspector):
 *   npx @modelcontextprotocol/inspector npx tsx examples/mcp-server.ts --serve
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { asyncScheduler, lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, runTool, textOf, type AnyTool, type ToolResult } from 'phi-rx';
import { connectMcpStdio, serveMcp } from 'phi-rx/mcp';
import { scriptedModel, scriptedProvider, type ScriptStep } from 'phi-rx/testing';

const publish = defineTool({
  name: 'publish',
  description: 'Publishes a post',
  parameters: z.object({ title: z.string() }),
  needsApproval: true,
  execute: ({ title }) => `published "${title}"`,
});

/** The scripted model: "publish X" calls the tool, then reports its result; anything else gets a short answer. */
const step: ScriptStep = (request) => {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'toolResult') return { text: `Done: ${textOf(last)}.` };
  const task = last?.role === 'user' ? textOf(last) : '';
  const title = /^publish (.+)$/.exec(task)?.[1];
  if (title) return { toolCalls: [{ name: 'publish', arguments: { title } }] };
  return { text: `You asked: "${task}". The answer is 42.` };
};

async function serve(): Promise<void> {
  const agent = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider(Array.from({ length: 100 }, () => step)), tools: [publish] });
  // stdout carries the protocol: log to stderr only.
  await serveMcp({ agent, name: 'assistant', description: 'A writing assistant that can publish posts.' }, { transport: 'stdio', name: 'example-server' });
}

/** Starts this file as an MCP server and calls its agent; resolves with what came back. */
export async function main(server: readonly string[] = [process.execPath, ...process.execArgv, fileURLToPath(import.meta.url), '--serve']): Promise<{ tools: string[]; answers: string[]; asked: string[] }> {
  const asked: string[] = [];
  const connection = await connectMcpStdio({
    command: server[0]!,
    args: server.slice(1),
    // The server's approval requests, answered as an approval UI would (here: always yes).
    onElicitation: (request) => {
      asked.push(request.message);
      console.log(`approval asked: ${request.message}`);
      return { approved: true };
    },
  });
  try {
    const tools = await connection.tools();
    console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);
    const answers: string[] = [];
    for (const task of ['What is six times seven?', 'publish Hello MCP']) {
      const result = await callTool(tools, 'ask_assistant', { task });
      console.log(`ask_assistant(${JSON.stringify(task)}) → ${resultText(result)}`);
      answers.push(resultText(result));
    }
    return { tools: tools.map((t) => t.name), answers, asked };
  } finally {
    await connection.close();
  }
}

/** Calls a tool once as the agent loop would (through `runTool`), printing its progress. */
async function callTool(tools: readonly AnyTool[], name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  const run$ = runTool(tool, args, { toolCallId: 'example', loopId: 'example', scheduler: asyncScheduler });
  const emissions = await lastValueFrom(run$.pipe(tap((e) => e.kind === 'progress' && console.log(`  progress: ${e.text}`)), toArray()));
  return emissions.flatMap((e) => (e.kind === 'result' ? [e.result] : []))[0]!;
}

const resultText = (result: ToolResult): string => result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const run = process.argv.includes('--serve') ? serve() : main().then(() => undefined);
  run.catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
