/**
 * A model call retried after partial output, over loopback: a real node:http server speaks the
 * OpenAI chat-completions SSE wire and drops the connection mid-reply on the first attempt.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { agentLoop, textOf, userMessage, type AgentEvent, type AssistantMessage } from '../../src/index.js';
import { createOpenAiCompletionsProvider, openai } from '../../src/providers/index.js';
import { agentEnd, context, events } from '../agent/helpers.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** Each attempt: the text pieces it streams, and whether the connection is dropped after them. */
interface Attempt {
  pieces: string[];
  drop: boolean;
}

async function startServer(attempts: Attempt[]): Promise<{ url: string; requests: number; close(): Promise<void> }> {
  const state = { requests: 0 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const attempt = attempts[Math.min(state.requests++, attempts.length - 1)]!;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const body = [chunk({ role: 'assistant', content: '' }), ...attempt.pieces.map((p) => chunk({ content: p }))].join('');
      if (attempt.drop) {
        // Flushed, then the socket is destroyed: the client has the partial reply, then a broken stream.
        res.write(body, () => res.socket?.destroy());
        return;
      }
      res.end(`${body}${chunk({}, 'stop')}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** What a UI shows: deltas appended, a MessageReset starting over from its message. */
function rendered(all: AgentEvent[]): string {
  let shown = '';
  for (const e of all) {
    if (e.type === 'MessageReset') shown = textOf(e.message);
    if (e.type === 'MessageUpdate' && e.delta.type === 'text') shown += e.delta.delta;
  }
  return shown;
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function runAgainst(attempts: Attempt[]) {
  const server = await startServer(attempts);
  close = server.close;
  const model = openai('gpt-test', { baseUrl: `${server.url}/v1`, apiKey: 'test-key' });
  const provider = createOpenAiCompletionsProvider();
  const all = await events(agentLoop([userMessage('hi', 0)], context([]), { model, provider, retry: { maxRetries: 2, initialDelayMs: 1, jitter: 0 } }));
  return { all, requests: server.requests };
}

describe('a model call retried after partial output (issue 12)', () => {
  it('resumes: the repeated prefix is swallowed, the concatenated deltas equal the final text exactly', async () => {
    const { all, requests } = await runAgainst([
      { pieces: ['Hello', ' wo'], drop: true },
      { pieces: ['Hel', 'lo world', ', how are', ' you?'], drop: false },
    ]);
    expect(requests).toBe(2);
    expect(all.filter((e) => e.type === 'RetryScheduled')).toHaveLength(1);
    const final = agentEnd(all).messages.at(-1) as AssistantMessage;
    expect(final.stopReason).toBe('stop');
    expect(textOf(final)).toBe('Hello world, how are you?');
    const deltas = all.flatMap((e) => (e.type === 'MessageUpdate' && e.delta.type === 'text' ? [e.delta.delta] : []));
    expect(deltas.join('')).toBe('Hello world, how are you?');
    expect(all.some((e) => e.type === 'MessageReset')).toBe(false);
    expect(all.filter((e) => e.type === 'MessageStart' && e.message.role === 'assistant')).toHaveLength(1);
  });

  it('a retry that diverges emits MessageReset; what a UI renders honouring it equals the final text', async () => {
    const { all } = await runAgainst([
      { pieces: ['Hello', ' wo'], drop: true },
      { pieces: ['Hi', ' there'], drop: false },
    ]);
    const final = agentEnd(all).messages.at(-1) as AssistantMessage;
    expect(textOf(final)).toBe('Hi there');
    const resets = all.filter((e) => e.type === 'MessageReset');
    expect(resets).toHaveLength(1);
    expect(resets[0]).toMatchObject({ reason: 'retryDiverged', message: { role: 'assistant', content: [{ type: 'text', text: 'H' }] } });
    const types = all.map((e) => e.type);
    expect(types.indexOf('MessageReset')).toBeGreaterThan(types.indexOf('RetryScheduled'));
    expect(types.indexOf('MessageReset')).toBeLessThan(types.lastIndexOf('MessageEnd'));
    expect(rendered(all)).toBe('Hi there');
  });
});
