/**
 * The AG-UI endpoint against AG-UI's own client: `HttpAgent` of `@ag-ui/client` posting to
 * `agUiNodeHandler` on a loopback server, each run checked through the client's state (its
 * messages, pending interrupts) and the server's run.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpAgent, type Message, type RunAgentInput } from '@ag-ui/client';
import { AGUI_MEDIA_TYPE } from '@ag-ui/encoder';
import { filter, type Observable, scan, tap } from 'rxjs';
import { type AgentEvent, type AgentLoopConfig, type AnyTool } from '../../../../src/index.js';
import { ProviderError } from '../../../../src/types/errors.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../../../src/testing/index.js';
import { agUiNodeHandler } from '../../../../src/protocols/ag-ui/node/index.js';
import type { AgUiHandlerOptions } from '../../../../src/protocols/ag-ui/index.js';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => (s.close(done), s.closeAllConnections()))));
});

/** A loopback server with the handler; its URL. */
async function serve(options: AgUiHandlerOptions<IncomingMessage>): Promise<string> {
  const handle = agUiNodeHandler(options);
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
}

const tool = (name: string, execute: AnyTool['execute'] = (args) => `${name}(${JSON.stringify(args)})`, extra: Partial<AnyTool> = {}): AnyTool =>
  ({ name, label: name, description: name, parameters: { type: 'object', properties: {} }, execute, ...extra });

/** The config of a scripted run; `seen` gets the server run's events. */
function scripted(script: ScriptStep[], seen: AgentEvent[] = [], extra: Partial<AgentLoopConfig> = {}) {
  const provider = scriptedProvider(script);
  const config: AgentLoopConfig = { model: scriptedModel(), provider, retry: false, operators: { events: tap((e) => seen.push(e)) }, ...extra };
  return { provider, config };
}

const user = (id: string, content: string): Message => ({ id, role: 'user', content });
const texts = (messages: Message[]) => messages.filter((m) => m.role === 'assistant').map((m) => m.content ?? '');

describe('agUiNodeHandler with HttpAgent', () => {
  it('text: the client ends with the answer as an assistant message', async () => {
    const { config } = scripted([{ text: 'Hello from phi-rx' }]);
    const agent = new HttpAgent({ url: await serve({ config, authorize: 'allow-all' }), threadId: 't1', initialMessages: [user('u1', 'hi')] });
    const { newMessages } = await agent.runAgent({ runId: 'r1' });
    expect(texts(newMessages)).toEqual(['Hello from phi-rx']);
    expect(agent.messages.map((m) => m.id)).toEqual(['u1', 'r1.0']);
    expect(agent.messages[1]!.metadata).toMatchObject({ 'phi-rx': { stopReason: 'stop', model: 'scripted-model' } });
  });

  it('parallel tool calls: both results reach the client, after the assistant message that called them', async () => {
    const { config } = scripted([{ toolCalls: [{ name: 'a', id: 'c1', arguments: { x: 1 } }, { name: 'b', id: 'c2' }] }, { text: 'Both done.' }], [], { toolExecution: 'parallel' });
    const agent = new HttpAgent({ url: await serve({ config, tools: [tool('a'), tool('b')], authorize: 'allow-all' }), initialMessages: [user('u1', 'go')] });
    await agent.runAgent();
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(agent.messages[1]!.role === 'assistant' && agent.messages[1]!.toolCalls!.map((c) => [c.id, c.function.arguments])).toEqual([['c1', '{"x":1}'], ['c2', '{}']]);
    expect(agent.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['a({"x":1})', 'b({})']);
    expect(texts(agent.messages).at(-1)).toBe('Both done.');
  });

  it('a frontend tool: offered to the model, its call ends the run pending, and the client\'s result goes on next input', async () => {
    const { provider, config } = scripted([{ toolCalls: [{ name: 'askColor', id: 'f1', arguments: { prompt: 'Pick one' } }] }, { text: 'You picked blue.' }]);
    const agent = new HttpAgent({ url: await serve({ config, authorize: 'allow-all' }), initialMessages: [user('u1', 'choose a color')] });
    const frontendTool = { name: 'askColor', description: 'Asks the user for a color', parameters: { type: 'object', properties: { prompt: { type: 'string' } } } };
    let pending: string[] = [];
    await agent.runAgent({ tools: [frontendTool] }, { onRunFinishedEvent: (p) => void (pending = p.outcome === 'success' ? p.pendingToolCallIds : []) });
    expect(provider.requests[0]!.tools?.map((t) => t.name)).toEqual(['askColor']);
    expect(pending).toEqual(['f1']);
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'f1', function: { name: 'askColor' } }] });
    agent.addMessage({ id: 'res1', role: 'tool', toolCallId: 'f1', content: 'blue' });
    await agent.runAgent({ tools: [frontendTool] });
    const sent = provider.requests[1]!.messages.at(-1)!;
    expect(sent).toMatchObject({ role: 'toolResult', toolCallId: 'f1', toolName: 'askColor', content: [{ type: 'text', text: 'blue' }] });
    expect(texts(agent.messages).at(-1)).toBe('You picked blue.');
  });

  it('approval: the run ends in an interrupt, and resume with an approval runs the call and goes on', async () => {
    let ran = 0;
    const rm = tool('rm', () => `removed (${++ran})`, { needsApproval: true });
    const { config } = scripted([{ toolCalls: [{ name: 'rm', id: 'call-1', arguments: { path: '/tmp/x' } }] }, { text: 'Removed.' }]);
    const agent = new HttpAgent({ url: await serve({ config, tools: [rm], authorize: 'allow-all' }), initialMessages: [user('u1', 'delete it')] });
    await agent.runAgent();
    expect(ran).toBe(0);
    expect(agent.pendingInterrupts).toMatchObject([{ id: 'call-1', reason: 'tool_approval', toolCallId: 'call-1', metadata: { 'phi-rx': { toolName: 'rm', args: { path: '/tmp/x' } } } }]);
    await agent.runAgent({ resume: [{ interruptId: 'call-1', status: 'resolved', payload: { approved: true } }] });
    expect(ran).toBe(1);
    expect(agent.pendingInterrupts).toEqual([]);
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(agent.messages[2]).toMatchObject({ toolCallId: 'call-1', content: 'removed (1)' });
  });

  it('approval denied on resume: the call is not run and the model reads the denial', async () => {
    let ran = 0;
    const rm = tool('rm', () => `removed (${++ran})`, { needsApproval: true });
    const { provider, config } = scripted([{ toolCalls: [{ name: 'rm', id: 'call-1' }] }, { text: 'Not removed.' }]);
    const agent = new HttpAgent({ url: await serve({ config, tools: [rm], authorize: 'allow-all' }), initialMessages: [user('u1', 'delete it')] });
    await agent.runAgent();
    await agent.runAgent({ resume: [{ interruptId: 'call-1', status: 'resolved', payload: { approved: false, reason: 'too risky' } }] });
    expect(ran).toBe(0);
    const denial = provider.requests[1]!.messages.at(-1)!;
    expect(denial).toMatchObject({ role: 'toolResult', isError: true });
    expect(JSON.stringify(denial.content)).toContain('too risky');
  });

  it('abort mid-stream: the client keeps the text it got and the server run ends aborted', async () => {
    const seen: AgentEvent[] = [];
    const { config } = scripted([{ text: 'x'.repeat(400), chunkDelay: 20 }], seen);
    const agent = new HttpAgent({ url: await serve({ config, authorize: 'allow-all' }), initialMessages: [user('u1', 'talk')] });
    let deltas = 0;
    await agent.runAgent({}, { onTextMessageContentEvent: () => void (++deltas === 3 && agent.abortRun()) }).catch(() => undefined);
    const partial = texts(agent.messages).at(-1) ?? '';
    expect(partial.length).toBeGreaterThanOrEqual(12);
    expect(partial.length).toBeLessThan(400);
    await expect.poll(() => seen.at(-1)?.type, { timeout: 10_000 }).toBe('AgentEnd');
    expect(seen.at(-1)).toMatchObject({ stopReason: 'aborted' });
  });

  it('a provider error: the client\'s run fails with RUN_ERROR\'s message', async () => {
    const { config } = scripted([{ error: ProviderError.auth('invalid api key') }]);
    const agent = new HttpAgent({ url: await serve({ config, authorize: 'allow-all' }), initialMessages: [user('u1', 'hi')] });
    let failure: string | undefined;
    await agent.runAgent({}, { onRunErrorEvent: ({ event }) => void (failure = event.message) }).catch(() => undefined);
    expect(failure).toContain('invalid api key');
  });

  it('protobuf when the client asks for it: the same messages', async () => {
    class ProtoAgent extends HttpAgent {
      protected override requestInit(input: RunAgentInput): RequestInit {
        const init = super.requestInit(input);
        return { ...init, headers: { ...(init.headers as Record<string, string>), Accept: AGUI_MEDIA_TYPE } };
      }
    }
    const { config } = scripted([{ thinking: { text: 'hm', signature: 's' }, text: 'Binary hello', toolCalls: [{ name: 'a', id: 'c1', arguments: { q: 1 } }] }, { text: 'ok' }]);
    const url = await serve({ config, tools: [tool('a')], authorize: 'allow-all' });
    const contentType = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: AGUI_MEDIA_TYPE }, body: JSON.stringify({ threadId: 't', runId: 'probe', messages: [], tools: [], context: [] }) })
      .then(async (r) => (await r.arrayBuffer(), r.headers.get('content-type')));
    expect(contentType).toBe(AGUI_MEDIA_TYPE);
    const agent = new ProtoAgent({ url, initialMessages: [user('u1', 'hi')] });
    await agent.runAgent();
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'reasoning', 'assistant', 'tool', 'assistant']);
    expect(texts(agent.messages)).toEqual(['Binary hello', 'ok']);
  });
});

describe('agUiNodeHandler: state', () => {
  it('the client\'s state follows a state derived from the run (STATE_SNAPSHOT of its input state, then STATE_DELTA)', async () => {
    const { config } = scripted([{ toolCalls: [{ name: 'a', id: 'c1' }] }, { text: 'done' }]);
    const stateFrom = (events$: Observable<AgentEvent>, input: RunAgentInput) =>
      events$.pipe(
        filter((e) => e.type === 'TurnEnd'),
        scan((s: { turns: number; user: string }) => ({ ...s, turns: s.turns + 1 }), input.state as { turns: number; user: string }),
      );
    const agent = new HttpAgent({ url: await serve({ config, tools: [tool('a')], stateFrom, authorize: 'allow-all' }), initialMessages: [user('u1', 'go')], initialState: { turns: 0, user: 'ada' } });
    const deltas: unknown[] = [];
    await agent.runAgent({}, { onStateDeltaEvent: ({ event }) => void deltas.push(event.delta) });
    expect(deltas).toEqual([[{ op: 'replace', path: '/turns', value: 1 }], [{ op: 'replace', path: '/turns', value: 2 }]]);
    expect(agent.state).toEqual({ turns: 2, user: 'ada' });
  });
});

describe('agUiNodeHandler: who may call, and bad input', () => {
  const input = { threadId: 't', runId: 'r', messages: [{ id: 'u', role: 'user', content: 'hi' }], tools: [], context: [] };
  const post = (url: string, body: string, headers: Record<string, string> = {}) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body }).then(async (r) => ({ status: r.status, body: await r.text() }));

  it('requires authorize: a function or \'allow-all\'', () => {
    expect(() => agUiNodeHandler({ config: scripted([]).config } as never)).toThrow(/options.authorize is required/);
  });

  it('asks authorize with the thread and run: false answers 403, a throw 401 with its message', async () => {
    const asked: string[] = [];
    const url = await serve({ config: scripted([{ text: 'x' }]).config, authorize: (req, { threadId, runId }) => (asked.push(`${threadId}/${runId}`), req.headers.authorization === 'Bearer ok') });
    expect((await post(url, JSON.stringify(input))).status).toBe(403);
    expect(asked).toEqual(['t/r']);
    const throwing = await serve({ config: scripted([]).config, authorize: () => { throw new Error('token expired'); } });
    expect(await post(throwing, JSON.stringify(input))).toEqual({ status: 401, body: JSON.stringify({ error: 'token expired' }) });
    const ok = await post(url, JSON.stringify(input), { authorization: 'Bearer ok' });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('RUN_FINISHED');
  });

  it('answers 413 past maxBodyBytes, 415 for another content type, 400 for bad input, 405 for GET, 403 for another origin', async () => {
    const url = await serve({ config: scripted([]).config, authorize: 'allow-all', maxBodyBytes: 2048 });
    expect((await post(url, JSON.stringify({ ...input, context: [{ description: 'big', value: 'x'.repeat(4096) }] }))).status).toBe(413);
    expect((await post(url, JSON.stringify(input), { 'content-type': 'text/plain' })).status).toBe(415);
    expect(await post(url, '{"threadId": "t"')).toMatchObject({ status: 400, body: expect.stringContaining('the body is not JSON') });
    expect(await post(url, JSON.stringify({ ...input, messages: 'hi' }))).toMatchObject({ status: 400, body: expect.stringContaining('messages: expected an array') });
    expect(await post(url, JSON.stringify({ ...input, messages: [{ id: 'u', role: 'user', content: [{ type: 'audio', source: { type: 'data', value: 'AA', mimeType: 'audio/wav' } }] }] })))
      .toMatchObject({ status: 400, body: expect.stringContaining('messages[0].content[0]') });
    expect((await fetch(url)).status).toBe(405);
    expect((await post(url, JSON.stringify(input), { origin: 'https://evil.example' })).status).toBe(403);
  });

  it('a client that stops reading: past maxBufferedBytes the run is aborted, not held whole', async () => {
    const seen: AgentEvent[] = [];
    const { config } = scripted([{ text: 'x'.repeat(16 * 1024 * 1024), chunkSize: 64 * 1024 }], seen);
    const url = new URL(await serve({ config, authorize: 'allow-all', maxBufferedBytes: 256 * 1024 }));
    const body = JSON.stringify(input);
    const socket = connect(Number(url.port), url.hostname);
    socket.write(`POST /agent HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    socket.pause(); // never reads
    await expect.poll(() => seen.at(-1)?.type, { timeout: 20_000 }).toBe('AgentEnd');
    expect(seen.at(-1)).toMatchObject({ stopReason: 'aborted' });
    expect(seen.filter((e) => e.type === 'MessageUpdate').length).toBeLessThan(256);
    socket.destroy();
  });
});
