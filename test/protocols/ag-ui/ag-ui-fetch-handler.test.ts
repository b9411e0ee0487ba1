/**
 * The fetch-style endpoint (`Request → Response`, as Hono, Next.js and Workers call it) read by
 * AG-UI's `HttpAgent` through its `fetch` option: no socket, the same requests and responses.
 */
import { describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { tap } from 'rxjs';
import type { AgentEvent, AnyTool } from '../../../src/index.js';
import { scriptedModel, scriptedProvider } from '../../../src/testing/index.js';
import { agUiFetchHandler, type AgUiHandlerOptions } from '../../../src/protocols/ag-ui/index.js';

const agentOn = (options: AgUiHandlerOptions<Request>, init: ConstructorParameters<typeof HttpAgent>[0] = { url: 'http://agent.test/run' }) => {
  const handle = agUiFetchHandler(options);
  return new HttpAgent({ ...init, fetch: (url, request) => handle(new Request(url, request)) });
};
const add: AnyTool = { name: 'add', label: 'add', description: 'adds', parameters: { type: 'object' }, execute: (a) => String((a as { a: number; b: number }).a + (a as { a: number; b: number }).b) };

describe('agUiFetchHandler with HttpAgent', () => {
  it('runs a tool call and answers; the client ends with the whole conversation', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'add', id: 'c1', arguments: { a: 2, b: 3 } }] }, { text: 'It is 5.' }]);
    const agent = agentOn({ config: { model: scriptedModel(), provider }, tools: [add], authorize: 'allow-all' }, { url: 'http://agent.test/run', initialMessages: [{ id: 'u1', role: 'user', content: '2+3?' }] });
    await agent.runAgent({ runId: 'r1' });
    expect(agent.messages.map((m) => [m.id, m.role])).toEqual([['u1', 'user'], ['r1.0', 'assistant'], ['r1.1', 'tool'], ['r1.2', 'assistant']]);
    expect(agent.messages[2]).toMatchObject({ content: '5', metadata: { 'phi-rx': { toolName: 'add', isError: false } } });
  });

  it('asks authorize with the Request: false is 403, and the run never starts', async () => {
    const provider = scriptedProvider([{ text: 'never' }]);
    const handle = agUiFetchHandler({ config: { model: scriptedModel(), provider }, authorize: (req) => req.headers.get('authorization') === 'Bearer ok' });
    const body = JSON.stringify({ threadId: 't', runId: 'r', messages: [{ id: 'u', role: 'user', content: 'hi' }], tools: [], context: [] });
    const refused = await handle(new Request('http://agent.test/run', { method: 'POST', headers: { 'content-type': 'application/json' }, body }));
    expect(refused.status).toBe(403);
    expect(provider.requests).toHaveLength(0);
    const allowed = await handle(new Request('http://agent.test/run', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ok' }, body }));
    expect(allowed.headers.get('content-type')).toBe('text/event-stream');
    expect(await allowed.text()).toContain('"type":"RUN_FINISHED"');
  });

  it('stops reading a body past maxBodyBytes: 413', async () => {
    const handle = agUiFetchHandler({ config: { model: scriptedModel(), provider: scriptedProvider([]) }, authorize: 'allow-all', maxBodyBytes: 100 });
    const stream = new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new Uint8Array(64).fill(32)) }); // endless
    const res = await handle(new Request('http://agent.test/run', { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit));
    expect(res.status).toBe(413);
  });

  it('the client aborting (the Request\'s signal) aborts the run gracefully', async () => {
    const seen: string[] = [];
    const provider = scriptedProvider([{ text: 'z'.repeat(400), chunkDelay: 10 }]);
    const config = { model: scriptedModel(), provider, operators: { events: tap((e: AgentEvent) => void seen.push(e.type === 'AgentEnd' ? `AgentEnd:${e.stopReason}` : e.type)) } };
    const agent = agentOn({ config, authorize: 'allow-all' }, { url: 'http://agent.test/run', initialMessages: [{ id: 'u1', role: 'user', content: 'talk' }] });
    let deltas = 0;
    await agent.runAgent({}, { onTextMessageContentEvent: () => void (++deltas === 3 && agent.abortRun()) }).catch(() => undefined);
    await expect.poll(() => seen.at(-1), { timeout: 10_000 }).toBe('AgentEnd:aborted');
    expect(seen.filter((t) => t === 'MessageUpdate').length).toBeLessThan(100);
  });

  it('a client that does not read the response: past maxBufferedBytes the run is aborted and the body errors', async () => {
    const seen: string[] = [];
    const provider = scriptedProvider([{ text: 'y'.repeat(4 * 1024 * 1024), chunkSize: 64 * 1024 }]);
    const config = { model: scriptedModel(), provider, operators: { events: tap((e: AgentEvent) => void seen.push(e.type === 'AgentEnd' ? `AgentEnd:${e.stopReason}` : e.type)) } };
    const handle = agUiFetchHandler({ config, authorize: 'allow-all', maxBufferedBytes: 256 * 1024 });
    const body = JSON.stringify({ threadId: 't', runId: 'r', messages: [{ id: 'u', role: 'user', content: 'hi' }], tools: [], context: [] });
    const response = await handle(new Request('http://agent.test/run', { method: 'POST', headers: { 'content-type': 'application/json' }, body }));
    expect(response.status).toBe(200);
    await expect.poll(() => seen.at(-1), { timeout: 20_000 }).toBe('AgentEnd:aborted');
    expect(seen.filter((t) => t === 'MessageUpdate').length).toBeLessThan(64);
    await expect(response.text()).rejects.toThrow(/read none of the last 262144 bytes/);
  });
});
