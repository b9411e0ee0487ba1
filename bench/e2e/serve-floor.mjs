// The floor of bench/e2e.mjs: the least a server can do to relay a model's stream to a browser, by hand.
// `POST /start` makes a conversation; `GET /runs/<id>/events` plays it: each turn is one `fetch` to the model
// endpoint, its SSE read with eventsource-parser, each event `JSON.parse`d, each text delta written to the
// client as an SSE frame (`res.write`); the tool call's arguments are parsed, the tool answers, the next turn
// is sent. `GET /stats` reports the process's CPU time and memory.
//
//   node bench/e2e/serve-floor.mjs <upstream url> <anthropic|openai>
import { createServer } from 'node:http';
import { createParser } from 'eventsource-parser';

const [upstream, wire] = process.argv.slice(2);
const conversations = new Map();
let nextId = 0;

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/start') {
    const id = `c${++nextId}`;
    conversations.set(id, true);
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
  }
  if (req.url === '/stats') return void stats(res);
  const match = /^\/runs\/([^/]+)\/events$/.exec(req.url ?? '');
  if (!match || !conversations.delete(match[1])) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  void converse(res).catch((error) => res.destroy(error));
});

async function converse(res) {
  const messages = [{ role: 'user', content: 'Go.' }];
  for (;;) {
    const turn = await callModel(messages, res);
    messages.push({ role: 'assistant', content: turn.text, ...(turn.call ? { tool_calls: [turn.call] } : {}) });
    if (!turn.call) break;
    const args = JSON.parse(turn.call.arguments);
    const output = `ok ${args.path}:${args.line}`;
    messages.push({ role: 'tool', tool_call_id: turn.call.id, content: output });
    res.write(`event: tool\ndata: ${JSON.stringify({ id: turn.call.id, output })}\n\n`);
  }
  res.end('event: end\ndata: {}\n\n');
}

async function callModel(messages, res) {
  const url = wire === 'anthropic' ? `${upstream}/v1/messages` : `${upstream}/chat/completions`;
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'bench', stream: true, messages }) });
  let text = '';
  let call;
  const parser = createParser({
    onEvent: (event) => {
      if (event.data === '[DONE]') return;
      const data = JSON.parse(event.data);
      let delta;
      if (wire === 'anthropic') {
        if (data.type === 'content_block_delta' && data.delta.type === 'text_delta') delta = data.delta.text;
        else if (data.type === 'content_block_start' && data.content_block.type === 'tool_use') call = { id: data.content_block.id, name: data.content_block.name, arguments: '' };
        else if (data.type === 'content_block_delta' && data.delta.type === 'input_json_delta') call.arguments += data.delta.partial_json;
      } else {
        const d = data.choices?.[0]?.delta;
        if (d?.content) delta = d.content;
        const t = d?.tool_calls?.[0];
        if (t?.id) call = { id: t.id, name: t.function.name, arguments: '' };
        if (t?.function?.arguments) call.arguments += t.function.arguments;
      }
      if (delta !== undefined) {
        text += delta;
        res.write(`event: delta\ndata: ${JSON.stringify({ text: delta })}\n\n`);
      }
    },
  });
  const decoder = new TextDecoder();
  for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }));
  return { text, call };
}

function stats(res) {
  const cpu = process.cpuUsage();
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ cpuUs: cpu.user + cpu.system, rss: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 }));
}

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
