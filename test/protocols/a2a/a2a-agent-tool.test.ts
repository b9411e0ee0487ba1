import { afterEach, describe, expect, it, vi } from 'vitest';
import { lastValueFrom, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { BasicAgent, defineTool, textOf, type AgentEvent, type ToolResultMessage } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { a2aAgentTool, a2aServer, TASK_STATE, type A2aServer } from '../../../src/protocols/a2a/index.js';
import { clientFor } from './helpers.js';

const model = scriptedModel();
const add = defineTool({ name: 'add', description: 'Adds two numbers', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => String(a + b) });
const TOKEN = 'sk-secret-token-1234';

let server: A2aServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const resultOf = (events: AgentEvent[], id: string) => events.find((e): e is Extract<AgentEvent, { type: 'ToolExecutionEnd' }> => e.type === 'ToolExecutionEnd' && e.toolCallId === id);

describe('a2aAgentTool: one phi-rx agent calls another over A2A', () => {
  it('streams the remote agent\'s text as tool updates and returns its answer; the remote context is kept across calls', async () => {
    const remote = scriptedProvider([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 }, id: 'r1' }] }, { text: 'The sum is 5.' }, { text: 'You asked about 2 and 3.' }], { chunkSize: 4 });
    server = await a2aServer(() => new BasicAgent({ model, provider: remote, retry: false, tools: [add] }), {
      card: { name: 'Calculator', description: 'Adds numbers', securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { scheme: 'Bearer', description: '', bearerFormat: '' } } } }, securityRequirements: [{ schemes: { bearer: { list: [] } } }] },
      authorize: (req, { route }) => route === 'card' || req.headers.authorization === `Bearer ${TOKEN}`,
      textChunkMs: 0,
    });
    const url = await server.listen();
    const calculator = await a2aAgentTool(url, { bearerToken: TOKEN });
    expect(calculator.name).toBe('ask_calculator');
    expect(calculator.description).toContain('Adds numbers');

    const local = scriptedProvider([
      { toolCalls: [{ name: 'ask_calculator', arguments: { task: 'What is 2+3?' }, id: 'c1' }] },
      { toolCalls: [{ name: 'ask_calculator', arguments: { task: 'What did I ask?' }, id: 'c2' }] },
      { text: 'Done.' },
    ]);
    const agent = new BasicAgent({ model, provider: local, retry: false, tools: [calculator] });
    const events = await lastValueFrom(agent.prompt('add 2 and 3').pipe(toArray()));
    const updates = events.filter((e): e is Extract<AgentEvent, { type: 'ToolExecutionUpdate' }> => e.type === 'ToolExecutionUpdate' && e.toolCallId === 'c1');
    expect(updates.map((u) => textOf(u.partialResult as never))).toContain('The sum is 5.');
    expect(updates.length).toBeGreaterThan(2);
    expect(events.some((e) => e.type === 'ProgressMessage' && e.text === 'Calling add')).toBe(true);
    expect(textOf(resultOf(events, 'c1')!.result as never)).toBe('The sum is 5.');
    expect(resultOf(events, 'c1')!.result.details).toMatchObject({ state: 'completed' });
    // The second call continued the same remote context: the remote model saw the first exchange.
    expect(remote.requests[2]!.messages.filter((m) => m.role === 'user').map((m) => textOf(m as never))).toEqual(['What is 2+3?', 'What did I ask?']);
    expect((resultOf(events, 'c2')!.result.details as { contextId: string }).contextId).toBe((resultOf(events, 'c1')!.result.details as { contextId: string }).contextId);
  });

  it('a dropped connection: the tool subscribes to the task again and goes on from its snapshot, nothing lost or repeated', async () => {
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const gate = defineTool({ name: 'gate', description: 'Waits', parameters: z.object({}), execute: async () => (await opened, 'open') });
    const remote = scriptedProvider([{ text: 'Working. ', toolCalls: [{ name: 'gate', arguments: {}, id: 'g1' }] }, { text: 'Done: all good.' }], { chunkSize: 2 });
    server = await a2aServer(() => new BasicAgent({ model, provider: remote, retry: false, tools: [gate] }), { card: { name: 'Worker', description: 'Works' }, authorize: 'allow-all', textChunkMs: 0 });
    const url = await server.listen();
    let dropped = 0;
    let resubscribed = 0;
    // The first stream's connection breaks once the tool call went out; the subscription after it opens the gate.
    const breaking: typeof fetch = async (input, init) => {
      const body = typeof init?.body === 'string' ? init.body : '';
      const response = await fetch(input, init);
      if (body.includes('SubscribeToTask') && response.body) {
        resubscribed++;
        // The gate opens once the snapshot arrived: the run goes on after it was taken.
        const reader = response.body.getReader();
        const relay = new ReadableStream<Uint8Array>({
          async pull(controller) {
            const { done, value } = await reader.read();
            if (done) return controller.close();
            controller.enqueue(value);
            open();
          },
        });
        return new Response(relay, { status: response.status, headers: response.headers });
      }
      if (!body.includes('SendStreamingMessage') || dropped > 0 || !response.body) return response;
      dropped++;
      // The client gets the first event (the task); what follows is lost until the tool call went out, then the connection fails.
      const reader = response.body.getReader();
      let seen = '';
      let forwarded = false;
      const cut = new ReadableStream<Uint8Array>({
        async pull(controller) {
          for (;;) {
            const end = seen.indexOf('\n\n');
            if (!forwarded && end !== -1) {
              forwarded = true;
              return controller.enqueue(new TextEncoder().encode(seen.slice(0, end + 2)));
            }
            if (forwarded && seen.includes('Calling gate')) {
              await reader.cancel();
              return controller.error(new TypeError('terminated: the connection dropped'));
            }
            const { done, value } = await reader.read();
            if (done) return controller.close();
            seen += new TextDecoder().decode(value);
          }
        },
      });
      return new Response(cut, { status: response.status, headers: response.headers });
    };
    const worker = await a2aAgentTool(url, { fetch: breaking });
    const local = scriptedProvider([{ toolCalls: [{ name: 'ask_worker', arguments: { task: 'work' }, id: 'c1' }] }, { text: 'ok' }]);
    const agent = new BasicAgent({ model, provider: local, retry: false, tools: [worker] });
    const events = await lastValueFrom(agent.prompt('go').pipe(toArray()));
    expect([dropped, resubscribed]).toEqual([1, 1]);
    expect(textOf(resultOf(events, 'c1')!.result as never)).toBe('Done: all good.');
    const updates = events.filter((e): e is Extract<AgentEvent, { type: 'ToolExecutionUpdate' }> => e.type === 'ToolExecutionUpdate').map((u) => textOf(u.partialResult as never));
    expect(updates.at(-1)).toBe('Working. Done: all good.');
    expect(updates.every((u) => 'Working. Done: all good.'.startsWith(u))).toBe(true);
  });

  it('a connection dropped and the task ended meanwhile: the tool reads the ended task (GetTask) instead of failing', async () => {
    const remote = scriptedProvider([{ text: 'All done quickly.' }]);
    server = await a2aServer(() => new BasicAgent({ model, provider: remote, retry: false }), { card: { name: 'Quick', description: 'Quick' }, authorize: 'allow-all' });
    const url = await server.listen();
    let getTask = 0;
    const breaking: typeof fetch = async (input, init) => {
      const body = typeof init?.body === 'string' ? init.body : '';
      if (body.includes('GetTask')) getTask++;
      const response = await fetch(input, init);
      if (!body.includes('SendStreamingMessage') || !response.body) return response;
      // The client gets the task event; the connection fails once the server has sent everything (the task ended).
      const text = await response.text();
      const first = text.slice(0, text.indexOf('\n\n') + 2);
      let sent = false;
      const cut = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent) return controller.error(new TypeError('terminated: the connection dropped'));
          sent = true;
          controller.enqueue(new TextEncoder().encode(first));
        },
      });
      return new Response(cut, { status: response.status, headers: response.headers });
    };
    const quick = await a2aAgentTool(url, { fetch: breaking });
    const agent = new BasicAgent({ model, provider: scriptedProvider([{ toolCalls: [{ name: 'ask_quick', arguments: { task: 'go' }, id: 'q1' }] }, { text: 'ok' }]), retry: false, tools: [quick] });
    const events = await lastValueFrom(agent.prompt('go').pipe(toArray()));
    expect(getTask).toBe(1);
    const end = resultOf(events, 'q1')!;
    expect([end.isError, textOf(end.result as never), (end.result.details as { state: string }).state]).toEqual([false, 'All done quickly.', 'completed']);
  });

  it('cancelling the call cancels the remote task: the remote tool sees its signal, the task ends canceled', async () => {
    let remoteAborted: () => void = () => undefined;
    const aborted = new Promise<void>((resolve) => (remoteAborted = resolve));
    const wait = defineTool({
      name: 'wait', description: 'Waits', parameters: z.object({}),
      execute: (_a, { signal }) => new Promise<string>((resolve) => signal.addEventListener('abort', () => (remoteAborted(), resolve('stopped')))),
    });
    const remote = scriptedProvider([{ toolCalls: [{ name: 'wait', arguments: {}, id: 'w1' }] }, { text: 'never' }]);
    server = await a2aServer(() => new BasicAgent({ model, provider: remote, retry: false, tools: [wait] }), { card: { name: 'Waiter', description: 'Waits' }, authorize: 'allow-all' });
    const url = await server.listen();
    const waiter = await a2aAgentTool(url);
    const local = scriptedProvider([{ toolCalls: [{ name: 'ask_waiter', arguments: { task: 'wait' }, id: 'c1' }] }, { text: 'Cancelled it.' }]);
    const agent = new BasicAgent({ model, provider: local, retry: false, tools: [waiter] });
    const events = await lastValueFrom(agent.prompt('go').pipe(
      tap((e) => e.type === 'ProgressMessage' && e.text === 'Calling wait' && queueMicrotask(() => agent.cancelToolCall('c1', 'changed my mind'))),
      toArray(),
    ));
    await aborted;
    expect(textOf(resultOf(events, 'c1')!.result as never)).toMatch(/cancelled/i);
    const client = await clientFor(url, 'JSONRPC');
    const tasks = await client.listTasks({ tenant: '', contextId: '', pageSize: 10, pageToken: '', historyLength: 0, includeArtifacts: false, status: 0 } as never);
    await vi.waitFor(async () => expect((await client.getTask({ tenant: '', id: tasks.tasks[0]!.id } as never)).status?.state).toBe(TASK_STATE.canceled), { timeout: 10_000 });
    expect(textOf(events.filter((e) => e.type === 'AgentEnd').at(-1)!.messages.at(-1) as ToolResultMessage)).toBe('Cancelled it.');
  });

  it('the card\'s security scheme is honoured: without credentials a clear error; a wrong token fails the call without the token in any text', async () => {
    server = await a2aServer({ model, provider: scriptedProvider([]) }, {
      card: { name: 'Vault', description: 'Keeps secrets', securitySchemes: { key: { scheme: { $case: 'apiKeySecurityScheme', value: { description: '', location: 'header', name: 'X-Vault-Key' } } } }, securityRequirements: [{ schemes: { key: { list: [] } } }] },
      authorize: (req, { route }) => route === 'card' || req.headers['x-vault-key'] === 'right',
    });
    const url = await server.listen();
    await expect(a2aAgentTool(url)).rejects.toThrow(/the agent Vault requires credentials \(security scheme key\): pass options.bearerToken or options.apiKey/);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const warned = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const vault = await a2aAgentTool(url, { apiKey: TOKEN });
    const agent = new BasicAgent({ model, provider: scriptedProvider([{ toolCalls: [{ name: 'ask_vault', arguments: { task: 'open' }, id: 'v1' }] }, { text: 'It refused.' }]), retry: false, tools: [vault] });
    const events = await lastValueFrom(agent.prompt('open the vault').pipe(toArray()));
    const end = resultOf(events, 'v1')!;
    expect(end.isError).toBe(true);
    expect(textOf(end.result as never)).toMatch(/The A2A agent Vault failed: .*the agent refused the request \(HTTP 403\): not allowed to call this agent \(jsonrpc\)/);
    const everything = JSON.stringify(events) + JSON.stringify([...logged.mock.calls, ...warned.mock.calls]);
    expect(everything).not.toContain(TOKEN);
    logged.mockRestore();
    warned.mockRestore();
  });
});
