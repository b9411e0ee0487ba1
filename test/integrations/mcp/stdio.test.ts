import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMcpStdio, McpConnectionError } from '../../../src/integrations/mcp/index.js';
import type { McpConnection, McpLogMessage } from '../../../src/integrations/mcp/index.js';
import { ToolError } from '../../../src/types/errors.js';
import type { Tool } from '../../../src/types/tool.js';
import { byName, eventually, repoRoot, resultOf, run, testServer, textOf } from './helpers.js';

const spawnTestServer = (env: Record<string, string> = {}) =>
  connectMcpStdio({ command: process.execPath, args: ['--import', 'tsx', testServer], cwd: repoRoot, env });

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('connectMcpStdio against our own SDK server', () => {
  let server: McpConnection;
  let tools: Tool[];
  const logs: McpLogMessage[] = [];

  beforeAll(async () => {
    process.env.PHI_RX_PARENT_ONLY = 'must-not-leak';
    server = await spawnTestServer({ GIVEN_TO_SERVER: 'explicit-value' });
    server.logs$.subscribe((m) => logs.push(m));
    tools = await server.tools({ prefix: 'test' });
  });
  afterAll(async () => {
    delete process.env.PHI_RX_PARENT_ONLY;
    await server.close();
  });

  it('follows tools/list pagination and prefixes and sanitizes the names', () => {
    expect(server.status).toBe('connected');
    expect(server.transport).toBe('stdio');
    expect(server.name).toBe('phi-rx-test-server');
    expect(tools.map((t) => t.name)).toEqual([
      'test__echo',
      'test__chatty',
      'test__wait_for_cancel',
      'test__stats',
      'test__crash',
      'test__fail',
      'test__mixed_content',
      'test__env',
      'test__pid',
      'test__ns_dotted_name',
    ]);
    const echo = byName(tools, 'test__echo');
    expect(echo.parameters).toEqual({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(echo.description).toBe('Echoes its text');
    expect(byName(tools, 'test__ns_dotted_name').label).toBe('Dotted');
  });

  it('calls a tool under its server name and maps the text result', async () => {
    expect(await resultOf(byName(tools, 'test__echo'), { text: 'hi there' })).toEqual({ content: [{ type: 'text', text: 'hi there' }] });
    expect(textOf(await resultOf(byName(tools, 'test__ns_dotted_name')))).toBe('dotted ok');
  });

  it('surfaces progress notifications sent in the middle of a call, and routes log notifications to logs$', async () => {
    logs.length = 0;
    const emissions = await run(byName(tools, 'test__chatty'));
    expect(emissions).toEqual([
      { kind: 'progress', text: 'step 1 (1/3)' },
      { kind: 'progress', text: 'step 2 (2/3)' },
      { kind: 'progress', text: 'step 3 (3/3)' },
      { content: [{ type: 'text', text: 'chatty done' }] },
    ]);
    expect(logs.map((l) => l.data)).toEqual(['log 1', 'log 2', 'log 3']);
    expect(logs[0]).toMatchObject({ server: 'phi-rx-test-server', level: 'info', logger: 'chatty' });
  });

  it('maps text, image, embedded resources, resource links and audio', async () => {
    const result = await resultOf(byName(tools, 'test__mixed_content'));
    expect(result.content[0]).toEqual({ type: 'text', text: 'plain' });
    expect(result.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(result.content.slice(2)).toEqual([
      { type: 'text', text: '[resource test://doc.txt (text/plain)]\nembedded text' },
      { type: 'text', text: '[binary resource test://data.bin (application/octet-stream, 4 bytes), not shown]' },
      { type: 'text', text: '[resource link: linked test://linked.md (text/markdown)] a linked doc' },
      { type: 'text', text: '[audio content: audio/wav, 3 bytes, not shown]' },
    ]);
    expect(result.details).toEqual({ structuredContent: { ok: true } });
  });

  it("keeps the server's isError", async () => {
    const result = await resultOf(byName(tools, 'test__fail'));
    expect(result).toEqual({ content: [{ type: 'text', text: 'the tool failed on purpose' }], isError: true });
  });

  it('passes the given env and only the safe defaults of ours', async () => {
    expect(textOf(await resultOf(byName(tools, 'test__env'), { key: 'GIVEN_TO_SERVER' }))).toBe('explicit-value');
    expect(textOf(await resultOf(byName(tools, 'test__env'), { key: 'PHI_RX_PARENT_ONLY' }))).toBe('<unset>');
    expect(textOf(await resultOf(byName(tools, 'test__env'), { key: 'PATH' }))).toBe(process.env.PATH);
  });

  it('sends the cancellation to the server when the call is aborted', async () => {
    const stats = byName(tools, 'test__stats');
    const before = JSON.parse(textOf(await resultOf(stats))).cancelled as number;
    const controller = new AbortController();
    const call = run(byName(tools, 'test__wait_for_cancel'), {}, controller.signal);
    setTimeout(() => controller.abort(new Error('user pressed stop')), 100);
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect(error).toMatchObject({ kind: 'cancelled' });
    await eventually(async () => {
      const n = JSON.parse(textOf(await resultOf(stats))).cancelled as number;
      return n === before + 1 ? n : undefined;
    });
  });

  it('times a call out with a clear error result and cancels it on the server', async () => {
    const [slow, stats] = await server.tools({ timeoutMs: 150 }).then((t) => [byName(t, 'wait_for_cancel'), byName(t, 'stats')]);
    const before = JSON.parse(textOf(await resultOf(stats))).cancelled as number;
    const started = Date.now();
    const result = await resultOf(slow);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('MCP tool wait_for_cancel on server phi-rx-test-server timed out after 150 ms; the call was cancelled on the server');
    await eventually(async () => (JSON.parse(textOf(await resultOf(stats))).cancelled === before + 1 ? true : undefined));
  });
});

describe('a stdio server that crashes', () => {
  it('turns the pending and later calls into "not connected" results, and can be reconnected', async () => {
    const server = await spawnTestServer();
    try {
      const tools = await server.tools();
      const pid = Number(textOf(await resultOf(byName(tools, 'pid'))));
      const expected =
        'MCP server phi-rx-test-server is not connected (exited with code 3; stderr: about to crash on purpose); call reconnect()';

      const crashed = await resultOf(byName(tools, 'crash'));
      expect(crashed).toEqual({ content: [{ type: 'text', text: expected }], isError: true });
      expect(server.status).toBe('disconnected');
      expect(server.disconnectReason).toBe('exited with code 3; stderr: about to crash on purpose');
      expect(await resultOf(byName(tools, 'echo'), { text: 'x' })).toEqual({ content: [{ type: 'text', text: expected }], isError: true });
      expect(isAlive(pid)).toBe(false);

      await server.reconnect();
      expect(server.status).toBe('connected');
      // The Tool objects made before the crash reach the new process.
      expect(textOf(await resultOf(byName(tools, 'echo'), { text: 'back' }))).toBe('back');
      expect(Number(textOf(await resultOf(byName(tools, 'pid'))))).not.toBe(pid);
    } finally {
      await server.close();
    }
  });
});

describe('closing a stdio connection', () => {
  it('ends the child process, reports closed, and refuses calls and reconnects', async () => {
    const server = await spawnTestServer();
    const statuses: string[] = [];
    server.status$.subscribe((s) => statuses.push(s));
    const tools = await server.tools();
    const pid = Number(textOf(await resultOf(byName(tools, 'pid'))));
    expect(isAlive(pid)).toBe(true);

    await server[Symbol.asyncDispose]();

    expect(isAlive(pid)).toBe(false);
    expect(statuses).toEqual(['connected', 'closed']);
    expect(await resultOf(byName(tools, 'echo'), { text: 'x' })).toEqual({
      content: [{ type: 'text', text: 'MCP server phi-rx-test-server is closed' }],
      isError: true,
    });
    await expect(server.reconnect()).rejects.toBeInstanceOf(McpConnectionError);
    await server.close(); // idempotent
  });

  it('fails to connect with an error naming the command when it cannot be spawned', async () => {
    const error = await connectMcpStdio({ command: 'phi-rx-no-such-mcp-server', args: ['--x'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toMatch(/^Could not start MCP server phi-rx-no-such-mcp-server \(phi-rx-no-such-mcp-server --x\): .*ENOENT/);
  });

  it('reports the exit code and stderr of a server that dies during the handshake', async () => {
    const error = await connectMcpStdio({
      command: process.execPath,
      args: ['-e', 'console.error("bad config: missing TOKEN"); process.exit(2)'],
      name: 'broken',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toContain('exited with code 2; stderr: bad config: missing TOKEN');
  });
});
