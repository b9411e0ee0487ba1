import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from 'redis';
import { lastValueFrom, map, tap, toArray } from 'rxjs';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BasicAgent, defineTool, textOf, type AgentEvent, type ToolResultMessage } from '../../../src/index.js';
import { appendToStream, applyRunControl, readRunControl, RedisEventRelay, type RedisCommander, type RedisReader } from '../../../src/integrations/redis/index.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../../src/testing/index.js';
import { EventStreamError, fromEventStream, runCommands } from '../../../src/protocols/transport/index.js';
import { missingServer, startRedis, type RunningServer } from '../../support/servers.js';
import { describeNeeding } from '../../support/skip.js';

const missing = missingServer('redis');

function agent(script: ScriptStep[]): BasicAgent {
  let n = 0;
  return new BasicAgent({ model: scriptedModel(), provider: scriptedProvider(script), systemPrompt: 'sys', ids: () => `id${++n}`, retry: false });
}

const snapshot = map((e: AgentEvent): AgentEvent => JSON.parse(JSON.stringify(e)) as AgentEvent);

interface Web {
  url: string;
  server: Server;
  requests: Array<{ url: string; lastEventId: string | undefined }>;
  /** Cuts the next event-stream response after this many event frames (the network drops it). */
  dropAfterFrames?: number;
}

describeNeeding(missing)('RedisEventRelay: web processes relaying a run over SSE, against a real redis-server', () => {
  let redis: RunningServer;
  const clients: Array<{ close(): Promise<unknown> }> = [];
  const webs: Web[] = [];
  let runs = 0;

  const connect = async (): Promise<RedisReader> => {
    const client = await createClient({ url: redis.url }).connect();
    clients.push(client);
    return client;
  };

  async function startWeb(): Promise<Web> {
    const relay = new RedisEventRelay(await connect(), () => createClient({ url: redis.url }).connect(), { authorize: 'allow-all', blockMs: 100, retryMs: 20 });
    const web: Web = { url: '', server: createServer(), requests: [] };
    web.server.on('request', (req, res) => {
      web.requests.push({ url: req.url ?? '', lastEventId: req.headers['last-event-id'] as string | undefined });
      const limit = web.dropAfterFrames;
      if (limit !== undefined) {
        web.dropAfterFrames = undefined;
        let frames = 0;
        const write = res.write.bind(res) as (chunk: string) => boolean;
        res.write = ((chunk: string) => {
          if (chunk.startsWith('id: ') && ++frames > limit) {
            res.socket?.end(); // after what was written so far is flushed: the client has exactly `limit` events
            return false;
          }
          return write(chunk);
        }) as typeof res.write;
      }
      if (!relay.handle(req, res)) res.writeHead(404).end();
    });
    web.server.on('close', () => relay.close());
    await new Promise<void>((resolve) => web.server.listen(0, '127.0.0.1', resolve));
    web.url = `http://127.0.0.1:${(web.server.address() as AddressInfo).port}`;
    webs.push(web);
    return web;
  }

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    for (const web of webs) {
      web.server.closeAllConnections();
      await new Promise((resolve) => web.server.close(resolve));
    }
    await Promise.all(clients.map((c) => c.close()));
    await redis?.stop();
  });

  it('resumes on web process B, after the connection to A is cut, with every event once', async () => {
    const [a, b] = [await startWeb(), await startWeb()];
    const run = `r${++runs}`;
    // A load balancer in front of A and B: A until it is cut off, then B.
    let target = a;
    const balanced: typeof fetch = (url, init) => fetch(String(url).replace(a.url, target.url), init);
    a.dropAfterFrames = 15;
    a.server.once('connection', (socket) => socket.once('close', () => (target = b)));
    const watching = lastValueFrom(fromEventStream(`${a.url}/runs/${run}/events`, { fetch: balanced, retryDelayMs: 20 }).pipe(toArray()));
    const worker = await connect();
    const emitted = await lastValueFrom(agent([{ text: 'Forty-two, streamed in very small deltas.', chunkSize: 1 }]).prompt('hi').pipe(appendToStream(worker, `run:${run}`), snapshot, toArray()));
    const seen = await watching;
    expect(emitted.length).toBeGreaterThan(30);
    expect(seen).toEqual(emitted);
    const onB = b.requests.filter((r) => r.url.endsWith('/events'));
    expect(onB).toHaveLength(1);
    // B was asked to resume after the stream entry A sent last
    const entries = (await worker.sendCommand(['XRANGE', `run:${run}`, '-', '+'])) as Array<[string, string[]]>;
    expect(onB[0]!.lastEventId).toBe(entries[14]![0]);
  });

  it('serves a reload with Last-Event-ID from any web process: exactly the events after it', async () => {
    const [a, b] = [await startWeb(), await startWeb()];
    const run = `r${++runs}`;
    const worker = await connect();
    const emitted = await lastValueFrom(agent([{ text: 'abc def ghi', chunkSize: 2 }]).prompt('hi').pipe(appendToStream(worker, `run:${run}`), snapshot, toArray()));
    const firstFrames = await lastValueFrom(fromEventStream(`${a.url}/runs/${run}/events`).pipe(toArray()));
    expect(firstFrames).toEqual(emitted);
    const entries = (await worker.sendCommand(['XRANGE', `run:${run}`, '-', '+'])) as Array<[string, string[]]>;
    // A client that saw all but the last event reloads against B: it gets exactly the last one, with A's id.
    const response = await fetch(`${b.url}/runs/${run}/events`, { headers: { 'last-event-id': entries[emitted.length - 2]![0] } });
    const text = await response.text();
    expect(text.match(/^id: .*$/gm)).toEqual([`id: ${entries[emitted.length - 1]![0]}`]);
    expect(text).toContain('event: AgentEnd');
    expect(text).toMatch(/event: phi-rx:end\n/);
  });

  it('refuses a Last-Event-ID that is not a stream id, naming the header', async () => {
    const a = await startWeb();
    const response = await fetch(`${a.url}/runs/x/events`, { headers: { 'last-event-id': 'seven' } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/header Last-Event-ID: .*"seven" is not a Redis stream id/);
  });

  it('tells a client whose events were trimmed away that it cannot resume (ResumeGap), instead of skipping', async () => {
    const a = await startWeb();
    const run = `r${++runs}`;
    const worker = await connect();
    await lastValueFrom(agent([{ text: 'z'.repeat(400), chunkSize: 1 }]).prompt('hi').pipe(appendToStream(worker, `run:${run}`, { maxLen: 20 }), toArray()));
    const err = await lastValueFrom(fromEventStream(`${a.url}/runs/${run}/events`)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EventStreamError);
    expect((err as EventStreamError).code).toBe('ResumeGap');
  });

  it('carries steer and abort POSTed to a web process to the worker; refuses them once the run is over', async () => {
    const [a, b] = [await startWeb(), await startWeb()];
    const run = `r${++runs}`;
    const [worker, workerReader] = [await connect(), await connect()];
    const slow = agent([{ text: 'slow', delay: 20_000 }]);
    const steered: string[] = [];
    const controls = readRunControl(workerReader as RedisCommander, `run:${run}`, { blockMs: 100 }).subscribe(({ control }) => {
      steered.push(control.kind);
      applyRunControl(slow, control);
    });
    const events = lastValueFrom(fromEventStream(`${b.url}/runs/${run}/events`).pipe(toArray()));
    const commands = runCommands(`${a.url}/runs/${run}/commands`);
    // before the worker wrote the run's stream, there is no run to command: 404, and nothing is written
    await expect(commands.steer('too early')).rejects.toThrow(/HTTP 404: no run "r\d+": its stream run:r\d+ does not exist/);
    expect(await worker.sendCommand(['EXISTS', `run:${run}:control`])).toBe(0);
    const end = lastValueFrom(slow.prompt('hi').pipe(appendToStream(worker, `run:${run}`)));
    while ((await worker.sendCommand(['EXISTS', `run:${run}`])) === 0) await new Promise((r) => setTimeout(r, 5));
    await commands.steer('Use metric units.');
    await commands.abort();
    const last = await end;
    controls.unsubscribe();
    expect(steered).toEqual(['steer', 'abort']);
    expect(last.type === 'AgentEnd' && last.stopReason).toBe('aborted');
    expect((await events).at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'aborted' });
    await expect(commands.abort()).rejects.toThrow(/HTTP 409: run "r\d+" is over; abort has nothing to act on/);
    await expect(runCommands(`${a.url}/runs/${run}/commands`).send({ type: 'steer' } as never)).rejects.toThrow(/HTTP 400: .*"text"/);
  });

  it('carries approve and cancelToolCall POSTed to a web process to the worker: the waiting call runs, the slow one ends cancelled', async () => {
    const [a, b] = [await startWeb(), await startWeb()];
    const run = `r${++runs}`;
    const [worker, workerReader] = [await connect(), await connect()];
    const transfer = defineTool({
      name: 'transfer', description: 'Moves money', parameters: z.object({ amount: z.number() }), needsApproval: true, allowEdits: true,
      execute: ({ amount }) => `moved ${amount}`,
    });
    const wait = defineTool({
      name: 'wait', description: 'Waits a long time', parameters: z.object({}),
      execute: (_args, ctx) => new Promise<string>((resolve) => {
        const timer = setTimeout(() => resolve('waited'), 20_000);
        ctx.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve('stopped');
        });
      }),
    });
    let n = 0;
    const agentWithTools = new BasicAgent({
      model: scriptedModel(), systemPrompt: 'sys', ids: () => `id${++n}`, retry: false, tools: [transfer, wait],
      provider: scriptedProvider([
        { toolCalls: [{ name: 'transfer', arguments: { amount: 50 }, id: 't1' }, { name: 'wait', arguments: {}, id: 'w1' }] },
        { text: 'Done.' },
      ]),
    });
    const applied: string[] = [];
    const controls = readRunControl(workerReader as RedisCommander, `run:${run}`, { blockMs: 100 }).subscribe(({ control }) => {
      applied.push(control.kind);
      applyRunControl(agentWithTools, control);
    });
    // The page: watches the run on web process b, answers on web process a what it sees.
    const commands = runCommands(`${a.url}/runs/${run}/commands`);
    const posted: Array<Promise<void>> = [];
    const seen = lastValueFrom(fromEventStream(`${b.url}/runs/${run}/events`).pipe(
      tap((e) => {
        if (e.type === 'ToolApprovalRequested') posted.push(commands.approve(e.toolCallId, { approved: true, args: { amount: 20 } }));
        if (e.type === 'ToolExecutionStart' && e.toolName === 'wait') posted.push(commands.cancelToolCall(e.toolCallId, 'too slow'));
      }),
      toArray(),
    ));
    const last = await lastValueFrom(agentWithTools.prompt('pay').pipe(appendToStream(worker, `run:${run}`)));
    await Promise.all(posted);
    controls.unsubscribe();
    expect(applied.sort()).toEqual(['approve', 'cancelToolCall']);
    expect(last.type).toBe('AgentEnd');
    const ended = last as Extract<AgentEvent, { type: 'AgentEnd' }>;
    const results = ended.messages.filter((m): m is ToolResultMessage => m.role === 'toolResult').map((m) => [m.toolCallId, textOf(m), m.isError]);
    expect(results).toEqual([['t1', 'moved 20', false], ['w1', 'Tool call cancelled: too slow', true]]);
    expect(ended.stopReason).toBe('stop');
    const page = await seen;
    expect(page.filter((e) => e.type === 'ToolApprovalResolved')).toMatchObject([{ toolCallId: 't1', approved: true }]);
    expect(page.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'stop' });
  });
});
