/**
 * A loopback fake LLM speaking OpenAI's chat-completions SSE wire. Stateless: each answer follows
 * from the request alone. While the conversation holds fewer than `steps` tool results it calls
 * the tool `step` with `{ n: <results so far + 1> }`; then it answers "done". Every answer waits
 * `delayMs` first, so runs take long enough to be interrupted.
 */
import { createServer, type IncomingMessage } from 'node:http';

export interface CountingLlm {
  readonly baseUrl: string;
  /** Requests served, by the run id the system prompt names. */
  readonly requests: Map<string, number>;
  close(): Promise<void>;
}

export async function startCountingLlm(steps: number, delayMs: number): Promise<CountingLlm> {
  const requests = new Map<string, number>();
  const server = createServer((req, res) => {
    void body(req).then(async (raw) => {
      const request = JSON.parse(raw) as { messages: Array<{ role: string; content?: unknown }> };
      const system = String(request.messages.find((m) => m.role === 'system')?.content ?? '');
      requests.set(system, (requests.get(system) ?? 0) + 1);
      const done = request.messages.filter((m) => m.role === 'tool').length;
      await new Promise((r) => setTimeout(r, delayMs));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: object, finish: string | null = null): string =>
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'counting', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      if (done < steps) {
        res.write(chunk({ role: 'assistant', content: `Step ${done + 1}.` }));
        res.write(chunk({ tool_calls: [{ index: 0, id: `call_${done + 1}`, type: 'function', function: { name: 'step', arguments: '' } }] }));
        res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ n: done + 1 }) } }] }));
        res.write(chunk({}, 'tool_calls'));
      } else {
        res.write(chunk({ role: 'assistant', content: `done after ${done} steps` }));
        res.write(chunk({}, 'stop'));
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
