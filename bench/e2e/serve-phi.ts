// phi-rx in bench/e2e.mjs: one agent definition (the model endpoint as an Anthropic or OpenAI model, the
// `lookup` tool) and, per conversation, a session of it whose run is recorded by `recordSession` and served
// by EventStreamHub to its own SSE client. `POST /start` starts a conversation (its run waits in the hub
// for its client: the hub keeps its events until then), `GET /runs/<id>/events` is the hub's own route,
// `GET /stats` reports the process's CPU time and memory.
//
//   tsx bench/e2e/serve-phi.ts <upstream url> <anthropic|openai>
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { anthropic, defineAgent, defineTool, openai } from '../../src/index.js';
import { recordSession, SessionRecorder } from '../../src/session/index.js';
import { EventStreamHub } from '../../src/protocols/transport/node/index.js';

const [upstream, wire] = process.argv.slice(2) as [string, 'anthropic' | 'openai'];
const model = wire === 'anthropic' ? anthropic('claude-sonnet-4-5', { baseUrl: upstream, apiKey: 'bench' }) : openai('gpt-4o', { baseUrl: upstream, apiKey: 'bench' });
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a line up in a file.',
  parameters: z.object({ path: z.string(), line: z.number() }),
  execute: ({ path, line }) => `ok ${path}:${line}`,
});
const support = defineAgent({ model, systemPrompt: 'You are a benchmark.', tools: [lookup], retry: false });
// A keyless benchmark on loopback: a real server passes its own authorize hook.
const hub = new EventStreamHub({ authorize: 'allow-all' });

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/start') {
    const recorder = new SessionRecorder();
    const agent = support.session();
    const id = hub.start(agent.prompt('Go.').pipe(recordSession(recorder)));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
    return;
  }
  if (req.url === '/stats') {
    const cpu = process.cpuUsage();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ cpuUs: cpu.user + cpu.system, rss: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 }));
    return;
  }
  if (!hub.handle(req, res)) res.writeHead(404).end();
});

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: (server.address() as AddressInfo).port })));
