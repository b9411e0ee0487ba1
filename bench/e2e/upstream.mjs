// The model endpoint of bench/e2e.mjs, in a process of its own: answers Anthropic's `POST /v1/messages` and
// OpenAI's `POST /chat/completions` with a streamed answer in each API's own SSE wire format. The turn a
// request is at is its number of assistant messages: every turn but the last streams `deltas` text deltas then
// one `lookup` tool call (arguments in 3 pieces); the last streams the deltas and stops. Each text delta is the
// time it is written (`<epoch ms with µs>|`), so that the client can tell how long it took to arrive.
//
//   node bench/e2e/upstream.mjs <turns> <deltas> <rate: deltas per second per stream, 0 = as fast as possible>
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

const [turns, deltas, rate] = process.argv.slice(2).map(Number);
const now = () => (performance.timeOrigin + performance.now()).toFixed(3);
const ARGS = ['{"path":"src/a', '.ts","lin', 'e":12}'];

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const request = JSON.parse(body);
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    const wire = req.url.endsWith('/v1/messages') ? ANTHROPIC : OPENAI;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    void stream(res, wire, turn < turns - 1, turn).catch(() => res.destroy());
  });
});

async function stream(res, wire, toolCall, turn) {
  res.write(wire.start());
  for (let i = 0; i < deltas; i++) {
    if (rate > 0) await sleep(1000 / rate);
    else await new Promise((resolve) => setImmediate(resolve));
    if (res.destroyed) return;
    res.write(wire.text(`${now()}|`));
  }
  res.write(wire.endText());
  if (toolCall) {
    const id = `call_${turn}_${Math.random().toString(36).slice(2, 10)}`;
    res.write(wire.toolStart(id));
    for (const piece of ARGS) res.write(wire.toolArgs(piece));
  }
  res.end(wire.end(toolCall));
}

const sse = (event, data) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const ANTHROPIC = {
  start: () =>
    sse('message_start', { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } }) +
    sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  text: (text) => sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
  endText: () => sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
  toolStart: (id) => sse('content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id, name: 'lookup', input: {} } }),
  toolArgs: (piece) => sse('content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: piece } }),
  end: (toolCall) =>
    (toolCall ? sse('content_block_stop', { type: 'content_block_stop', index: 1 }) : '') +
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: toolCall ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: deltas } }) +
    sse('message_stop', { type: 'message_stop' }),
};
const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const OPENAI = {
  start: () => chunk({ role: 'assistant', content: '' }),
  text: (content) => chunk({ content }),
  endText: () => '',
  toolStart: (id) => chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name: 'lookup', arguments: '' } }] }),
  toolArgs: (piece) => chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }),
  end: (toolCall) =>
    chunk({}, toolCall ? 'tool_calls' : 'stop') +
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 20, completion_tokens: deltas, total_tokens: 20 + deltas } })}\n\n` +
    'data: [DONE]\n\n',
};

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
