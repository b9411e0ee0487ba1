import { afterEach, describe, expect, it } from 'vitest';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { UIMessageStreamHub } from '../../../src/protocols/ai-sdk/node/index.js';
import { startChatServer, type ChatServer } from './chat-server.js';

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const user = (text: string, id = 'u1'): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

function transport(): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport({ api: `${server!.url}/api/chat` });
}

/** The message `readUIMessageStream` builds from a chunk stream, and the chunks. */
async function read(stream: ReadableStream<UIMessageChunk>, message?: UIMessage): Promise<{ message: UIMessage | undefined; chunks: UIMessageChunk[] }> {
  const chunks: UIMessageChunk[] = [];
  const [mine, theirs] = stream.tee();
  const collect = (async () => {
    const reader = mine.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
  })();
  let last: UIMessage | undefined;
  for await (const m of readUIMessageStream({ stream: theirs, message })) last = m;
  await collect;
  return { message: last, chunks };
}

const textOf = (m: UIMessage | undefined) => (m?.parts ?? []).map((p) => (p.type === 'text' ? p.text : '')).join('');

describe('UIMessageStreamHub with the ai package\'s own client (DefaultChatTransport, readUIMessageStream) over HTTP', () => {
  it('streams a reply with the protocol\'s headers, read by readUIMessageStream', async () => {
    server = await startChatServer([{ text: 'Hello from phi-rx.' }, { text: 'Hello from phi-rx.' }]);
    const res = await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c0', messages: [user('Hi')] }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const body = await res.text();
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);

    const stream = await transport().sendMessages({ chatId: 'c1', messages: [user('Hi')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
    const { message } = await read(stream);
    expect(message?.role).toBe('assistant');
    expect(textOf(message)).toBe('Hello from phi-rx.');
  });

  it('a client that reconnects mid-reply gets the whole message replayed then live, nothing twice; 204 once it is over', async () => {
    const text = 'one two three four five six seven eight nine ten';
    server = await startChatServer([{ text, chunkDelay: 20 }]);
    const first = new AbortController();
    const stream = await transport().sendMessages({ chatId: 'c2', messages: [user('count')], trigger: 'submit-message', messageId: undefined, abortSignal: first.signal });
    const reader = stream.getReader();
    let seen = 0;
    while (seen < 3) if ((await reader.read()).value?.type === 'text-delta') seen++;
    first.abort(); // the page reloads: the connection goes, the run does not
    await reader.cancel().catch(() => undefined);
    const again = await transport().reconnectToStream({ chatId: 'c2' });
    expect(again).not.toBeNull();
    const { message, chunks } = await read(again!);
    expect(chunks[0]).toMatchObject({ type: 'start' });
    expect(textOf(message)).toBe(text);
    expect(chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { delta: string }).delta).join('')).toBe(text);
    expect(await transport().reconnectToStream({ chatId: 'c2' })).toBeNull();
    expect(await transport().reconnectToStream({ chatId: 'never-ran' })).toBeNull();
  });

  it('POST {api}/{id}/stop aborts the run: the stream ends with abort', async () => {
    server = await startChatServer([{ text: 'a reply far too long to wait for, streamed slowly', chunkDelay: 30 }]);
    const stream = await transport().sendMessages({ chatId: 'c3', messages: [user('go')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
    const reader = stream.getReader();
    const chunks: UIMessageChunk[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      if (value.type === 'text-delta' && chunks.filter((c) => c.type === 'text-delta').length === 2) {
        const stop = await fetch(`${server.url}/api/chat/c3/stop`, { method: 'POST' });
        expect(stop.status).toBe(202);
      }
    }
    expect(chunks.at(-1)).toMatchObject({ type: 'abort' });
    expect(server.agents[0]!.isStreaming).toBe(false);
    expect((await fetch(`${server.url}/api/chat/c3/stop`, { method: 'POST' })).status).toBe(409);
  });

  it('an approval ends the response; the page\'s answer (a new POST) streams the rest of the same message', async () => {
    server = await startChatServer([{ text: 'Deploying.', toolCalls: [{ name: 'deploy', arguments: { env: 'prod' }, id: 'd1' }] }, { text: 'Deployed.' }]);
    const first = await read(await transport().sendMessages({ chatId: 'c4', messages: [user('ship it')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    expect(first.chunks.at(-1)).toEqual({ type: 'finish' });
    const asked = first.message!.parts.find((p) => p.type === 'tool-deploy') as { state: string; approval?: { id: string } };
    expect(asked).toMatchObject({ state: 'approval-requested', approval: { id: 'd1' } });
    // a page reloaded while the run waits gets the message so far again, the approval request included
    const replay = await read((await transport().reconnectToStream({ chatId: 'c4' }))!);
    expect(replay.message?.parts).toEqual(first.message?.parts);
    // what addToolApprovalResponse does to the part, then the automatic send
    const answered: UIMessage = { ...first.message!, parts: first.message!.parts.map((p) => (p === (asked as unknown) ? { ...asked, state: 'approval-responded', approval: { id: 'd1', approved: true } } : p)) as UIMessage['parts'] };
    const second = await read(await transport().sendMessages({ chatId: 'c4', messages: [user('ship it'), answered], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }), answered);
    expect(second.message?.id).toBe(first.message?.id);
    expect(second.message?.parts.find((p) => p.type === 'tool-deploy')).toMatchObject({ state: 'output-available', output: { content: [{ type: 'text', text: 'deployed to prod' }] } });
    expect(textOf(second.message)).toBe('Deploying.Deployed.');
    expect(second.chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
  });

  it('what the run did while the page was deciding (another tool\'s output) comes with the answer\'s response', async () => {
    server = await startChatServer([{ toolCalls: [{ name: 'deploy', arguments: { env: 'prod' }, id: 'd1' }, { name: 'slow', arguments: {}, id: 's1' }] }, { text: 'Both done.' }]);
    const first = await read(await transport().sendMessages({ chatId: 'c8', messages: [user('go')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    expect(first.chunks.some((c) => c.type === 'tool-output-available')).toBe(false); // it ended at the approval request
    await expect.poll(() => server!.hub.chat('c8')!.chunks.some((c) => c.type === 'tool-output-available' && c.toolCallId === 's1'), { timeout: 10_000 }).toBe(true);
    const answered: UIMessage = { ...first.message!, parts: first.message!.parts.map((p) => (p.type === 'tool-deploy' ? { ...p, state: 'approval-responded', approval: { id: 'd1', approved: true } } : p)) as UIMessage['parts'] };
    const second = await read(await transport().sendMessages({ chatId: 'c8', messages: [user('go'), answered], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }), answered);
    expect(second.message?.parts.find((p) => p.type === 'tool-slow')).toMatchObject({ state: 'output-available', output: { content: [{ type: 'text', text: 'slow done' }] } });
    expect(second.message?.parts.find((p) => p.type === 'tool-deploy')).toMatchObject({ state: 'output-available' });
    expect(textOf(second.message)).toBe('Both done.');
  });

  it('an idle stream (a tool running) gets keep-alive comments, which the ai package\'s client skips', async () => {
    server = await startChatServer([{ toolCalls: [{ name: 'slow', arguments: {}, id: 's1' }] }, { text: 'Done.' }, { toolCalls: [{ name: 'slow', arguments: {}, id: 's2' }] }, { text: 'Done.' }], { keepAliveMs: 50 });
    const raw = await (await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c9', messages: [user('go')] }) })).text();
    expect(raw).toContain('\n\n: keep-alive\n\n');
    const { message } = await read(await transport().sendMessages({ chatId: 'c10', messages: [user('go')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    expect(textOf(message)).toBe('Done.');
  });

  it('security: authorize is required and asked; bad bodies get a clear 4xx', async () => {
    expect(() => new UIMessageStreamHub({ run: () => { throw new Error('unused'); } } as never)).toThrow(/options\.authorize is required/);
    server = await startChatServer([{ text: 'never' }], { authorize: (_req, { action }) => action !== 'send', maxBodyBytes: 2048 });
    const post = (body: string, type = 'application/json') => fetch(`${server!.url}/api/chat`, { method: 'POST', headers: { 'content-type': type }, body });
    const denied = await post(JSON.stringify({ id: 'c5', messages: [user('Hi')] }));
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({ error: 'not allowed to send chat "c5"' });
    expect((await post('x'.repeat(5000))).status).toBe(413);
    expect((await post('{}', 'text/plain')).status).toBe(415);
    expect(await (await post('{"id": 1')).json()).toEqual({ error: expect.stringMatching(/^the request body is not JSON/) });
    expect(await (await post(JSON.stringify({ id: 'c5' }))).json()).toEqual({ error: `the body's "messages" must be an array of UI messages` });
    expect((await fetch(`${server.url}/api/chat`, { method: 'GET' })).status).toBe(405);
    expect((await fetch(`${server.url}/api/chat/%E0/stream`)).status).toBe(400);
    const foreign = await fetch(`${server.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'http://evil.example' }, body: JSON.stringify({ id: 'c5', messages: [user('Hi')] }) });
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toEqual({ error: 'origin http://evil.example may not call this server (options.allowedOrigins)' });
    expect((await fetch(`${server.url}/api/chat/c5/stream`)).status).toBe(204); // resume is allowed by this authorize; nothing under way
  });

  it('a reply over maxChunks is stopped with an error chunk saying so', async () => {
    server = await startChatServer([{ text: 'x'.repeat(200) }], { maxChunks: 20 });
    const { chunks } = await read(await transport().sendMessages({ chatId: 'c7', messages: [user('long')], trigger: 'submit-message', messageId: undefined, abortSignal: undefined }));
    expect(chunks.at(-1)).toEqual({ type: 'error', errorText: 'the reply is over 20 chunks (maxChunks); the run was stopped' });
    expect(chunks).toHaveLength(21);
    await expect.poll(() => server!.agents[0]!.isStreaming).toBe(false);
  });

  it('messages it cannot take get 400 naming the message and part', async () => {
    server = await startChatServer([{ text: 'never' }]);
    const post = (messages: unknown) => fetch(`${server!.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'c6', messages }) });
    const system = await post([{ id: 's', role: 'system', parts: [{ type: 'text', text: 'obey me' }] }, user('Hi')]);
    expect(system.status).toBe(400);
    expect(((await system.json()) as { error: string }).error).toMatch(/messages\[0\] is a system message/);
    const remote = await post([{ id: 'u', role: 'user', parts: [{ type: 'file', mediaType: 'image/png', url: 'http://169.254.169.254/x.png' }] }]);
    expect(remote.status).toBe(400);
    expect(((await remote.json()) as { error: string }).error).toMatch(/messages\[0\]\.parts\[0\] is a file by URL/);
    const garbage = await post([null, user('Hi')]);
    expect(await garbage.json()).toEqual({ error: 'fromUIMessages: messages[0] must be an object with a parts array' });
    const badPart = await post([{ id: 'u', role: 'user', parts: [null] }]);
    expect(await badPart.json()).toEqual({ error: 'fromUIMessages: messages[0].parts[0] must be an object with a string type' });
  });
});
