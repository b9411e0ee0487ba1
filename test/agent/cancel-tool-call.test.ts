import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, lastValueFrom, Subject, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { agentLoop, AgentError, BasicAgent, defineTool, textOf, userMessage, type ToolCallCancel, type ToolResultMessage } from '../../src/index.js';
import { bashTool } from '../../src/tools/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import { addTool, agentEnd, config, context, model } from './helpers.js';

const resultsOf = (messages: readonly { role: string }[]): Record<string, { text: string; isError: boolean }> =>
  Object.fromEntries(messages.filter((m): m is ToolResultMessage => m.role === 'toolResult').map((m) => [m.toolCallId, { text: textOf(m), isError: m.isError }]));

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const slowAdd = defineTool({
  name: 'slow_add',
  description: 'Adds, slowly',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => new Promise<string>((resolve) => setTimeout(() => resolve(String(a + b)), 150)),
});

const dirs: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('cancelling one tool call', () => {
  it('bash running `sleep 30` as a real child process: the process is gone, the other call and the turn go on', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'phi-rx-cancel-'));
    dirs.push(dir);
    const provider = scriptedProvider([
      { toolCalls: [{ name: 'bash', arguments: { command: 'echo $$ > pid; exec sleep 30' }, id: 'b1' }, { name: 'slow_add', arguments: { a: 2, b: 3 }, id: 's1' }] },
      (request) => ({ text: `seen: ${request.messages.filter((m) => m.role === 'toolResult').map((m) => textOf(m as ToolResultMessage)).join(' | ')}` }),
    ]);
    const agent = new BasicAgent({ model, provider, retry: false, tools: [bashTool({ cwd: dir }), slowAdd] });
    const started = firstValueFrom(agent.events$.pipe(filter((e) => e.type === 'ToolExecutionStart' && e.toolCallId === 'b1')));
    const done = lastValueFrom(agent.prompt('run it'));
    await started;
    let pid = 0;
    await until(async () => {
      pid = Number((await readFile(join(dir, 'pid'), 'utf8').catch(() => '')).trim());
      return pid > 0;
    });
    expect(alive(pid)).toBe(true);
    const t0 = Date.now();
    expect(agent.cancelToolCall('b1', 'user pressed stop')).toBe(true);
    const end = await done;
    expect(Date.now() - t0).toBeLessThan(10_000);
    await until(() => !alive(pid));
    expect(end).toMatchObject({ type: 'AgentEnd', stopReason: 'stop' });
    expect(resultsOf(agent.messages)).toEqual({
      b1: { text: 'Tool call cancelled: user pressed stop', isError: true },
      s1: { text: '5', isError: false },
    });
    expect(textOf(agent.messages.at(-1) as ToolResultMessage)).toBe('seen: Tool call cancelled: user pressed stop | 5');
    // A finished call: a no-op that says so. An id the run never had, or no run: a clear error.
    expect(() => agent.cancelToolCall('b1')).toThrow(/cancelToolCall\("b1"\): no run is active/);
  }, 30_000);

  it('an HTTP tool against a loopback server: the server sees the request closed', async () => {
    let closed!: () => void;
    const requestClosed = new Promise<void>((resolve) => (closed = resolve));
    const arrived = new Subject<void>();
    const server = createServer((req, res) => {
      arrived.next();
      res.on('close', () => closed()); // never answered: only the client going away closes it
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
    const http = defineTool({
      name: 'fetch_page',
      description: 'GETs a URL',
      parameters: z.object({}),
      execute: async (_args, ctx) => `status ${(await fetch(url, { signal: ctx.signal })).status}`,
    });
    const agent = new BasicAgent({
      model,
      provider: scriptedProvider([{ toolCalls: [{ name: 'fetch_page', arguments: {}, id: 'h1' }, { name: 'add', arguments: { a: 1, b: 1 }, id: 'a1' }] }, { text: 'ok' }]),
      retry: false,
      tools: [http, addTool],
    });
    const reached = firstValueFrom(arrived);
    const done = lastValueFrom(agent.prompt('fetch'));
    await reached;
    expect(agent.cancelToolCall('a1')).toBe(false); // already finished: nothing to do
    expect(() => agent.cancelToolCall('zzz')).toThrow(/cancelToolCall\("zzz"\): the active run has no tool call with this id/);
    expect(agent.cancelToolCall('h1', 'too slow')).toBe(true);
    await requestClosed;
    await done;
    expect(resultsOf(agent.messages)).toEqual({ h1: { text: 'Tool call cancelled: too slow', isError: true }, a1: { text: '2', isError: false } });
  });

  it('agentLoop with cancelToolCalls: a call waiting for approval, or one not reached yet (sequential), ends at once', async () => {
    const cancels = new Subject<string | ToolCallCancel>();
    const gated = defineTool({ name: 'gated', description: 'g', parameters: z.object({}), needsApproval: true, execute: () => 'ran' });
    const script = [
      { toolCalls: [{ name: 'gated', arguments: {}, id: 'g1' }, { name: 'add', arguments: { a: 1, b: 1 }, id: 'a1' }, { name: 'add', arguments: { a: 2, b: 2 }, id: 'a2' }] },
      { text: 'ok' },
    ];
    const run$ = agentLoop([userMessage('go', 0)], context([gated, addTool]), config(script, {
      toolExecution: 'sequential',
      cancelToolCalls: cancels,
      approval: { answers: new Subject() },
    })).pipe(
      tap((e) => {
        if (e.type === 'ToolApprovalRequested') {
          cancels.next('a2'); // not reached yet: ends when reached
          queueMicrotask(() => cancels.next({ toolCallId: 'g1', reason: 'changed my mind' }));
        }
      }),
    );
    const all = await lastValueFrom(run$.pipe(toArray()));
    expect(resultsOf(agentEnd(all).messages)).toEqual({
      g1: { text: 'Tool call cancelled: changed my mind', isError: true },
      a1: { text: '2', isError: false },
      a2: { text: 'Tool call cancelled.', isError: true },
    });
    expect(all.find((e) => e.type === 'ToolApprovalResolved')).toMatchObject({ approved: false, reason: 'cancelled: changed my mind' });
    expect(agentEnd(all).stopReason).toBe('stop');
  });

  it('no run active: a clear AgentError', () => {
    const agent = new BasicAgent({ model, provider: scriptedProvider([]), tools: [addTool] });
    const err = (() => { try { agent.cancelToolCall('x'); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(AgentError);
    expect((err as AgentError).code).toBe('UnknownToolCall');
  });
});
