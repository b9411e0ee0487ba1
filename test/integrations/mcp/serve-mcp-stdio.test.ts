import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { repoRoot } from './helpers.js';

/*
 * serveMcp over stdio, proven with the SDK's own Client against a child process running
 * fixtures/served-agents.ts (which reports each run's end on its stderr).
 */

const script = path.join(repoRoot, 'test/integrations/mcp/fixtures/served-agents.ts');

let client: Client;
let stderr = '';

beforeAll(async () => {
  const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', script], cwd: repoRoot, stderr: 'pipe' });
  (transport.stderr as Readable).on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  client = new Client({ name: 'sdk-test-client', version: '1.0.0' });
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await client?.close();
});

/** Waits until the child's stderr has a line matching `pattern`. */
async function stderrLine(pattern: RegExp, ms = 20_000): Promise<string> {
  const until = Date.now() + ms;
  for (;;) {
    const match = stderr.split('\n').find((line) => pattern.test(line));
    if (match !== undefined) return match;
    if (Date.now() > until) throw new Error(`no stderr line matching ${pattern} in: ${stderr}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('serveMcp over stdio (the SDK client, a child process)', () => {
  it('lists the agents as ask_<name> tools with a task input, and the phi-rx tools with their schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['ask_helper', 'ask_wordcount', 'slow_count']);
    const helper = tools[0]!;
    expect(helper.description).toBe('A helper that counts, deploys and echoes.');
    expect(helper.inputSchema).toMatchObject({ type: 'object', properties: { task: { type: 'string' } }, required: ['task'] });
    expect(tools[1]!.outputSchema).toMatchObject({ type: 'object', properties: { words: { type: 'number' } } });
    expect(tools[2]!.inputSchema).toMatchObject({ type: 'object', properties: { to: { type: 'integer' } } });
  });

  it('calls the agent tool: its progress arrives as progress notifications, its answer as the result', async () => {
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'ask_helper', arguments: { task: 'count to 3' } }, undefined, { onprogress: (p) => progress.push(p) });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Result: counted to 3' }]);
    const lines = progress.map((p) => p.message);
    // The SDK's client handles a notification a microtask late and forgets the token when the response arrives: on a
    // loaded machine the last lines can reach it in one read with the response and be dropped there. The server waits
    // a macrotask after its last line before answering, so on a quiet machine every line arrives.
    expect(lines).toEqual(expect.arrayContaining(['turn 1', 'running slow_count', 'slow_count: counted 1']));
    const all = ['turn 1', 'running slow_count', 'slow_count: counted 1', 'slow_count: counted 2', 'slow_count: counted 3', 'slow_count done', 'turn 2', 'Result: counted to 3'];
    const known = lines.filter((l) => all.includes(l!));
    expect(known).toEqual(all.slice(0, known.length));
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    await stderrLine(/^AgentEnd ask_helper stop$/);
  });

  it('a client cancel mid-run aborts the child’s run (it ends aborted, the tool stopped)', async () => {
    const controller = new AbortController();
    let counted = 0;
    const call = client.callTool({ name: 'ask_helper', arguments: { task: 'wait' } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => {
        if (p.message?.startsWith('slow_count: counted') && ++counted === 2) controller.abort('enough');
      },
    });
    await expect(call).rejects.toThrow();
    await stderrLine(/^AgentEnd ask_helper aborted$/);
  });

  it('answers with structured output when the agent has an output schema', async () => {
    const result = await client.callTool({ name: 'ask_wordcount', arguments: { task: 'one two three four' } });
    expect(result.structuredContent).toEqual({ words: 4 });
    expect(result.content).toEqual([{ type: 'text', text: '{"words":4}' }]);
  });

  it('a bad task is an error result saying what is wrong', async () => {
    const result = await client.callTool({ name: 'ask_helper', arguments: { task: '' } });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'ask_helper: arguments.task must be a non-empty string, got ""' }]);
  });
});
