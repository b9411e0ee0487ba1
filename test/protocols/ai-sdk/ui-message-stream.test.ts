import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { finalize, tap } from 'rxjs';
import { BasicAgent } from '../../../src/index.js';
import { scriptedProvider } from '../../../src/testing/index.js';
import { fromUIMessages, pipeUIMessageStreamToResponse, toUIMessageStreamResponse } from '../../../src/protocols/ai-sdk/index.js';
import { model } from '../../agent/helpers.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const readJson = async (req: AsyncIterable<Buffer>): Promise<{ messages: UIMessage[] }> => {
  let text = '';
  for await (const chunk of req) text += chunk.toString();
  return JSON.parse(text);
};

describe('pipeUIMessageStreamToResponse / toUIMessageStreamResponse', () => {
  it('pipe: DefaultChatTransport reads the reply; the client\'s stop (its fetch aborted) aborts the run', async () => {
    const calls: Array<{ deltas: number; done: boolean }> = [];
    const url = await listen(async (req, res) => {
      const { messages } = await readJson(req);
      const text = messages.at(-1)!.parts[0]!.type === 'text' ? (messages.at(-1)!.parts[0] as { text: string }).text : '';
      const scripted = scriptedProvider([{ text: text === 'slow' ? 'x'.repeat(400) : 'Quick answer.', chunkDelay: text === 'slow' ? 20 : 0 }]);
      const call = { deltas: 0, done: false };
      calls.push(call);
      // the model call, watched: how many deltas it sent, and whether it was torn down
      const provider: typeof scripted = Object.assign((request: never, options: never) => scripted(request, options).pipe(tap(() => call.deltas++), finalize(() => (call.done = true))), scripted);
      const agent = new BasicAgent({ model, retry: false, provider });
      pipeUIMessageStreamToResponse(agent.prompt(fromUIMessages(messages).at(-1)!), res);
    });
    const transport = new DefaultChatTransport({ api: url });
    const send = (text: string, abortSignal?: AbortSignal) => transport.sendMessages({ chatId: 'c', messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text }] }], trigger: 'submit-message', messageId: undefined, abortSignal });
    let last: UIMessage | undefined;
    for await (const m of readUIMessageStream({ stream: await send('quick') })) last = m;
    expect(last?.parts.filter((p) => p.type === 'text')).toMatchObject([{ text: 'Quick answer.' }]);

    const stop = new AbortController();
    const reader = (await send('slow', stop.signal)).getReader();
    while ((await reader.read()).value?.type !== 'text-delta');
    stop.abort();
    await expect.poll(() => calls[1]?.done, { timeout: 10_000 }).toBe(true);
    expect(calls[1]!.deltas).toBeLessThan(50); // of 100: the model call was cut, not played out
  });

  it('toUIMessageStreamResponse: a fetch Response with the protocol\'s headers and SSE frames ending [DONE]', async () => {
    const agent = new BasicAgent({ model, retry: false, provider: scriptedProvider([{ text: 'Hi there.' }]) });
    const response = toUIMessageStreamResponse(agent.prompt('Hi'), { messageId: 'm1', headers: { 'x-extra': '1' } });
    const headers = ['content-type', 'x-vercel-ai-ui-message-stream', 'cache-control', 'x-extra'].map((name) => response.headers.get(name));
    expect(headers).toEqual(['text/event-stream', 'v1', 'no-cache', '1']);
    const frames = (await response.text()).split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    expect(JSON.parse(frames[0]!.slice(6))).toEqual({ type: 'start', messageId: 'm1' });
    expect(frames.every((f) => f.startsWith('data: '))).toBe(true);
  });
});
