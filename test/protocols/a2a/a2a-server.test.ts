import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BasicAgent, defineTool, type AnyTool } from '../../../src/index.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../../src/testing/index.js';
import { a2aServer, TASK_STATE, type A2aServer } from '../../../src/protocols/a2a/index.js';
import { clientFor, collect, send, stateOf, statusText, taskOf, textOf, type Binding } from './helpers.js';

const model = scriptedModel();
const add = defineTool({ name: 'add', label: 'Add', description: 'Adds two numbers', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => String(a + b) });

let server: A2aServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(script: ScriptStep[], tools: AnyTool[] = [add], extra: Partial<ConstructorParameters<typeof BasicAgent>[0]> = {}, textChunkMs = 0): Promise<string> {
  const provider = scriptedProvider(script, { chunkSize: 3 });
  server = await a2aServer(() => new BasicAgent({ model, provider, retry: false, tools, ...extra }), {
    card: { name: 'Calculator', description: 'Adds numbers for you' },
    authorize: 'allow-all',
    textChunkMs,
  });
  return server.listen();
}

describe.each<Binding>(['JSONRPC', 'HTTP+JSON'])('a2aServer with the SDK client over %s', (binding) => {
  it('serves the agent card: the main skill and one per tool, both interfaces speaking A2A 1.0', async () => {
    const url = await serve([]);
    const client = await clientFor(url, binding);
    const card = await client.getAgentCard();
    expect(card.name).toBe('Calculator');
    expect(card.skills.map((s) => [s.id, s.name, s.description])).toEqual([['calculator', 'Calculator', 'Adds numbers for you'], ['tool-add', 'Add', 'Adds two numbers']]);
    expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion])).toEqual([['JSONRPC', '1.0'], ['HTTP+JSON', '1.0']]);
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.capabilities?.pushNotifications).toBe(false); // off unless options.pushNotifications
  });

  it('SendMessage: the task completes with the answer as an artifact and the tool call in its history', async () => {
    const url = await serve([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 }, id: 'c1' }] }, { text: 'It is 5.' }]);
    const client = await clientFor(url, binding);
    const result = await client.sendMessage(send('What is 2+3?'));
    expect('status' in result).toBe(true);
    const task = result as Extract<typeof result, { status: unknown }>;
    expect(task.status?.state).toBe(TASK_STATE.completed);
    expect(task.artifacts.map((a) => [a.name, textOf({ parts: a.parts } as never)])).toEqual([['answer', 'It is 5.']]);
    const data = task.history.flatMap((m) => m.parts.flatMap((p) => (p.content?.$case === 'data' ? [p.content.value] : [])));
    expect(data).toContainEqual({ toolCallId: 'c1', toolName: 'add', args: { a: 2, b: 3 } });
    expect(data).toContainEqual({ toolCallId: 'c1', toolName: 'add', isError: false, result: '5' });
  });

  it('SendStreamingMessage: the task, text as it streams, tool calls as status messages, the answer artifact, completed', async () => {
    const url = await serve([{ text: 'Let me add.', toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 }, id: 'c1' }] }, { text: 'Two, of course.' }]);
    const client = await clientFor(url, binding);
    const rs = await collect(client.sendMessageStream(send('1+1?')));
    expect(taskOf(rs).status?.state).toBe(TASK_STATE.working);
    expect(statusText(rs)).toBe('Let me add.Two, of course.');
    const deltas = rs.filter((r) => r.payload?.$case === 'statusUpdate' && r.payload.value.metadata?.['phi-rx']?.type === 'MessageUpdate');
    expect(deltas.length).toBeGreaterThan(5); // streamed in pieces of 3 characters, not at the end
    const lines = rs.flatMap((r) => (r.payload?.$case === 'statusUpdate' ? [textOf(r.payload.value.status?.message)] : []));
    expect(lines).toContain('Calling add');
    expect(lines).toContain('add done');
    const artifacts = rs.flatMap((r) => (r.payload?.$case === 'artifactUpdate' ? [r.payload.value.artifact!] : []));
    expect(artifacts.map((a) => [a.name, textOf({ parts: a.parts } as never)])).toEqual([['answer', 'Two, of course.']]);
    expect(stateOf(rs.at(-1)!)).toBe(TASK_STATE.completed);
    const ids = rs.slice(1).map((r) => (r.payload?.value as { metadata?: Record<string, { eventId?: number }> }).metadata?.['phi-rx']?.eventId);
    expect(ids.every((id, i) => typeof id === 'number' && (i === 0 || id >= ids[i - 1]!))).toBe(true);
  });

  it('text deltas within textChunkMs go out as one update, carrying the id of the last delta', async () => {
    const answer = 'A long answer streamed in many small pieces, one every few milliseconds.';
    const url = await serve([{ text: answer, chunkDelay: 2 }], [], {}, 60_000);
    const client = await clientFor(url, binding);
    const rs = await collect(client.sendMessageStream(send('talk')));
    const chunks = rs.filter((r) => r.payload?.$case === 'statusUpdate' && r.payload.value.metadata?.['phi-rx']?.type === 'MessageUpdate');
    expect(chunks).toHaveLength(1); // 24 deltas, one window: flushed by the end of the message
    expect(statusText(rs)).toBe(answer);
    const ids = rs.slice(1).map((r) => (r.payload?.value as { metadata?: Record<string, { eventId?: number }> }).metadata?.['phi-rx']?.eventId ?? 0);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('structured output: an `output` artifact with the validated value as a data part', async () => {
    const url = await serve([{ text: '{"sum":4}' }], [], { output: z.object({ sum: z.number() }) });
    const client = await clientFor(url, binding);
    const rs = await collect(client.sendMessageStream(send('2+2 as JSON')));
    const output = rs.flatMap((r) => (r.payload?.$case === 'artifactUpdate' && r.payload.value.artifact?.name === 'output' ? r.payload.value.artifact.parts : []));
    expect(output.map((p) => p.content)).toEqual([{ $case: 'data', value: { sum: 4 } }]);
    expect(stateOf(rs.at(-1)!)).toBe(TASK_STATE.completed);
  });

  it('CancelTask mid-run aborts the run (the running tool sees its signal) and the task ends canceled', async () => {
    let toolAborted: (reason: unknown) => void = () => undefined;
    const aborted = new Promise<unknown>((resolve) => (toolAborted = resolve));
    const wait = defineTool({
      name: 'wait', description: 'Waits until cancelled', parameters: z.object({}),
      execute: (_args, { signal }) => new Promise<string>((resolve) => signal.addEventListener('abort', () => {
        toolAborted(signal.reason);
        resolve('stopped');
      })),
    });
    const url = await serve([{ toolCalls: [{ name: 'wait', arguments: {}, id: 'w1' }] }, { text: 'never' }], [wait]);
    const client = await clientFor(url, binding);
    let cancelled: Promise<unknown> | undefined;
    const rs = await collect(client.sendMessageStream(send('wait')), (r) => {
      if (r.payload?.$case === 'statusUpdate' && textOf(r.payload.value.status?.message) === 'Calling wait') {
        cancelled = client.cancelTask({ tenant: '', id: r.payload.value.taskId, metadata: {} } as never);
      }
    });
    expect(await aborted).toBeDefined();
    expect(stateOf(rs.at(-1)!)).toBe(TASK_STATE.canceled);
    const task = (await cancelled) as { status?: { state: number } };
    expect(task.status?.state).toBe(TASK_STATE.canceled);
    expect((await client.getTask({ tenant: '', id: taskOf(rs).id } as never)).status?.state).toBe(TASK_STATE.canceled);
  });
});

describe('a2aServer security and bad input', () => {
  it('refuses to start without authorize, and answers 403 / 401 as authorize says', async () => {
    await expect(a2aServer({ model }, { card: { name: 'x', description: 'y' } } as never)).rejects.toThrow(/options.authorize is required/);
    server = await a2aServer({ model, provider: scriptedProvider([]) }, {
      card: { name: 'x', description: 'y' },
      authorize: (req, { route }) => {
        if (route === 'card') return true;
        if (req.headers.authorization === undefined) throw Object.assign(new Error('a bearer token is required'), { status: 401 });
        return req.headers.authorization === 'Bearer good';
      },
    });
    const url = await server.listen();
    expect((await fetch(`${url}/.well-known/agent-card.json`)).status).toBe(200);
    const rpc = (auth?: string) => fetch(`${url}/jsonrpc`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(auth ? { authorization: auth } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'nope' } }),
    });
    const none = await rpc();
    expect([none.status, await none.json()]).toEqual([401, { error: 'a bearer token is required' }]);
    expect((await rpc('Bearer bad')).status).toBe(403);
    const good = await rpc('Bearer good');
    expect(good.status).toBe(200);
    expect(JSON.stringify(await good.json())).toMatch(/not found/i);
  });

  it('a body over the limit gets 413; a 0.3 client gets a clear version error', async () => {
    server = await a2aServer({ model, provider: scriptedProvider([]) }, { card: { name: 'x', description: 'y' }, authorize: 'allow-all', maxBodyBytes: 1000 });
    const url = await server.listen();
    const big = await fetch(`${url}/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(5000) }) });
    expect(big.status).toBe(413);
    const old = await fetch(`${url}/jsonrpc`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } } }),
    });
    expect(JSON.stringify(await old.json())).toMatch(/version '0.3' is not supported/);
  });

  it('the agent must be options or a factory, not one BasicAgent', async () => {
    const agent = new BasicAgent({ model, provider: scriptedProvider([]) });
    await expect(a2aServer(agent as never, { card: { name: 'x', description: 'y' }, authorize: 'allow-all' })).rejects.toThrow(/not one BasicAgent/);
  });
});
