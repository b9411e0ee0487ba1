import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { lastValueFrom, Subject, toArray } from 'rxjs';
import { type AgentEvent, agentLoop, type AssistantMessage, emptyAssistant, transcript, userMessage } from '../../src/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import { fromEventStream } from '../../src/protocols/transport/index.js';
import { EventStreamHub } from '../../src/protocols/transport/node/index.js';
import { context, model } from '../agent/helpers.js';
import { startHubServer, type HubServer } from '../protocols/transport/hub-server.js';

let server: HubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const start: AgentEvent = { type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: 'l', timestamp: 0 };

/** A run that waits (only its AgentStart), so commands have something to act on. */
function waitingRun(hub: EventStreamHub, controls = {}): string {
  const events = new Subject<AgentEvent>();
  const id = hub.start(events, controls);
  events.next(start);
  return id;
}

/** A raw HTTP request (node:http, no URL normalisation): its status and body. */
function raw(url: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      if (res.headers['content-type']?.startsWith('text/event-stream')) {
        resolve({ status: res.statusCode!, body: '', headers: res.headers });
        res.destroy();
      }
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const json = { 'content-type': 'application/json' };

describe('EventStreamHub: authorization', () => {
  it('cannot be constructed without authorize; the error names the option', () => {
    expect(() => new EventStreamHub({} as never)).toThrow(/options\.authorize is required.*'allow-all'/);
    expect(() => new (EventStreamHub as unknown as new () => EventStreamHub)()).toThrow(/options\.authorize is required/);
  });

  it('asks authorize before events and before each command, with the run id, the action and the command', async () => {
    const asked: unknown[] = [];
    server = await startHubServer({
      authorize: async (req, context) => {
        asked.push(context);
        if (req.headers.authorization === 'Bearer no') throw Object.assign(new Error('token revoked'), { status: 403 });
        return req.headers.authorization === 'Bearer good';
      },
    });
    let steered = '';
    const id = waitingRun(server.hub, { steer: (t: string) => (steered = t) });
    expect((await raw(server.url, `/runs/${id}/events`)).status).toBe(403);
    expect((await raw(server.url, `/runs/${id}/events`, { headers: { authorization: 'Bearer good' } })).status).toBe(200);
    const steer = JSON.stringify({ type: 'steer', text: 'rm -rf' });
    const refused = await raw(server.url, `/runs/${id}/commands`, { method: 'POST', headers: json, body: steer });
    expect([refused.status, steered]).toEqual([403, '']);
    const revoked = await raw(server.url, `/runs/${id}/commands`, { method: 'POST', headers: { ...json, authorization: 'Bearer no' }, body: steer });
    expect([revoked.status, JSON.parse(revoked.body).error]).toEqual([403, 'token revoked']);
    const ok = await raw(server.url, `/runs/${id}/commands`, { method: 'POST', headers: { ...json, authorization: 'Bearer good' }, body: steer });
    expect([ok.status, steered]).toEqual([202, 'rm -rf']);
    expect(asked).toContainEqual({ runId: id, action: 'events' });
    expect(asked).toContainEqual({ runId: id, action: 'command', command: { type: 'steer', text: 'rm -rf' } });
  });

  it('a throw without a status answers 401', async () => {
    server = await startHubServer({ authorize: () => { throw new Error('who are you?'); } });
    const id = waitingRun(server.hub);
    const answer = await raw(server.url, `/runs/${id}/events`);
    expect([answer.status, JSON.parse(answer.body).error]).toEqual([401, 'who are you?']);
  });
});

describe('EventStreamHub: commands resist cross-site use', () => {
  it('takes only application/json bodies (a text/plain form post gets 415)', async () => {
    let aborted = false;
    server = await startHubServer();
    const id = waitingRun(server.hub, { abort: () => (aborted = true) });
    const plain = await raw(server.url, `/runs/${id}/commands`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"type":"abort"}' });
    expect([plain.status, aborted]).toEqual([415, false]);
    const none = await raw(server.url, `/runs/${id}/commands`, { method: 'POST', body: '{"type":"abort"}' });
    expect(none.status).toBe(415);
    const ok = await raw(server.url, `/runs/${id}/commands`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"type":"abort"}' });
    expect([ok.status, aborted]).toEqual([202, true]);
  });

  it('refuses another origin (403), takes the same origin, and sends CORS headers only to allowed origins', async () => {
    server = await startHubServer({ allowedOrigins: ['https://app.example'] });
    const id = waitingRun(server.hub, { abort: () => undefined });
    const host = new URL(server.url).host;
    const body = '{"type":"abort"}';
    const evil = await raw(server.url, `/runs/${id}/commands`, { method: 'POST', headers: { ...json, origin: 'https://evil.example' }, body });
    expect([evil.status, evil.headers['access-control-allow-origin']]).toEqual([403, undefined]);
    expect((await raw(server.url, `/runs/${id}/events`, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    const same = await raw(server.url, `/runs/${id}/commands`, { method: 'POST', headers: { ...json, origin: `http://${host}` }, body });
    expect([same.status, same.headers['access-control-allow-origin']]).toEqual([202, undefined]);
    const preflight = await raw(server.url, `/runs/${id}/commands`, { method: 'OPTIONS', headers: { origin: 'https://app.example' } });
    expect([preflight.status, preflight.headers['access-control-allow-origin'], preflight.headers['access-control-allow-methods']]).toEqual([204, 'https://app.example', 'POST']);
    expect((await raw(server.url, `/runs/${id}/commands`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } })).status).toBe(403);
    const allowed = await raw(server.url, `/runs/${id}/events`, { headers: { origin: 'https://app.example' } });
    expect([allowed.status, allowed.headers['access-control-allow-origin']]).toEqual([200, 'https://app.example']);
  });
});

describe('EventStreamHub: hostile requests get answers, not crashes', () => {
  it('an undecodable run id gets 400 and the server goes on', async () => {
    server = await startHubServer();
    const answer = await raw(server.url, '/runs/%E0%A4%A/events');
    expect([answer.status, JSON.parse(answer.body).error]).toEqual([400, expect.stringMatching(/not valid percent-encoding/)]);
    expect((await raw(server.url, '/runs/nope/events')).status).toBe(404);
  });

  it('a command body of 64 KiB + 1 gets a 413 the client receives', async () => {
    server = await startHubServer();
    const id = waitingRun(server.hub, { abort: () => undefined });
    const body = JSON.stringify({ type: 'steer', text: 'x'.repeat(64 * 1024) }).padEnd(64 * 1024 + 1, ' ').slice(0, 64 * 1024 + 1);
    const response = await fetch(`${server.url}/runs/${id}/commands`, { method: 'POST', headers: json, body });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'the command body is over 65536 bytes' });
    // and a far larger one (past what is read and dropped) still gets its 413
    const huge = await raw(server.url, `/runs/${id}/commands`, { method: 'POST', headers: json, body: Buffer.alloc(300 * 1024, 32) }).catch((e: Error) => e);
    expect(huge).toMatchObject({ status: 413 });
  });

  it('Last-Event-ID is decimal digits only: 0x10, 1e3, -1 get 400', async () => {
    server = await startHubServer();
    const id = waitingRun(server.hub);
    for (const bad of ['0x10', '1e3', '-1', '1.0', '1 2']) {
      expect((await raw(server.url, `/runs/${id}/events`, { headers: { 'last-event-id': bad } })).status, bad).toBe(400);
    }
    expect((await raw(server.url, `/runs/${id}/events`, { headers: { 'last-event-id': '1' } })).status).toBe(200);
  });
});

describe('EventStreamHub: bounded per client and per run', () => {
  it('caps event streams per run and in total (503 past them)', async () => {
    server = await startHubServer({ maxConnectionsPerRun: 2, maxConnections: 3 });
    const a = waitingRun(server.hub);
    const b = waitingRun(server.hub);
    const held: { destroy(): void }[] = [];
    const open = (id: string) =>
      new Promise<number>((resolve) => {
        const { hostname, port } = new URL(server!.url);
        const req = request({ hostname, port, path: `/runs/${id}/events` }, (res) => {
          held.push(res);
          resolve(res.statusCode!);
        });
        req.end();
      });
    expect([await open(a), await open(a), await open(a)]).toEqual([200, 200, 503]);
    expect([await open(b), await open(b)]).toEqual([200, 503]);
    for (const res of held) res.destroy();
  });

  it('a fresh client after the replay buffer rolled over gets the run from a snapshot, not a ResumeGap', async () => {
    server = await startHubServer({ bufferSize: 5, coalesceDeltasMs: false });
    const reply = 'abcdefghijklmnopqrstuvwxyz'.repeat(4);
    const run$ = agentLoop([userMessage('Say it', 0)], context([]), { model, provider: scriptedProvider([{ text: reply, chunkSize: 3 }]), retry: false });
    const id = server.hub.start(run$);
    await lastValueFrom(server.hub.run(id)!.framesAfter(0), { defaultValue: undefined }); // the run is over
    expect(server.hub.run(id)!.isOver).toBe(true);
    const events = await lastValueFrom(fromEventStream(`${server.url}/runs/${id}/events`).pipe(toArray()));
    const view = await lastValueFrom(fromEventStream(`${server.url}/runs/${id}/events`).pipe(transcript()));
    expect(events.at(-1)!.type).toBe('AgentEnd');
    expect(view.status).toBe('ended');
    expect(view.messages.map((m) => ('role' in m ? m.role : ''))).toEqual(['user', 'assistant']);
    expect(JSON.stringify(view.messages[1])).toContain(reply);
  });

  it('a fresh client mid-run, after the buffer rolled over, gets the partial so far and then the live deltas', async () => {
    server = await startHubServer({ bufferSize: 3, coalesceDeltasMs: false });
    const events = new Subject<AgentEvent>();
    const id = server.hub.start(events);
    const partial = (text: string): AssistantMessage => ({ ...emptyAssistant('m', 'p', 0), content: text ? [{ type: 'text', text }] : [] });
    events.next(start);
    events.next({ type: 'MessageStart', loopId: 'l', message: partial(''), timestamp: 0 });
    let text = '';
    for (const piece of ['one ', 'two ', 'three ', 'four ', 'five ']) {
      text += piece;
      events.next({ type: 'MessageUpdate', loopId: 'l', message: partial(text), delta: { type: 'text', contentIndex: 0, delta: piece }, timestamp: 0 });
    }
    const seen: string[] = [];
    const done = lastValueFrom(fromEventStream(`${server.url}/runs/${id}/events`).pipe(transcript(), toArray()));
    await new Promise((r) => setTimeout(r, 100));
    events.next({ type: 'MessageUpdate', loopId: 'l', message: partial(`${text}six`), delta: { type: 'text', contentIndex: 0, delta: 'six' }, timestamp: 0 });
    events.next({ type: 'MessageEnd', loopId: 'l', message: partial(`${text}six`), timestamp: 0 });
    events.next({ type: 'AgentEnd', loopId: 'l', messages: [partial(`${text}six`)], timestamp: 0 } as AgentEvent);
    events.complete();
    const views = await done;
    for (const v of views) if (v.streaming) seen.push(JSON.stringify(v.streaming.content));
    expect(seen.some((s) => s.includes('one two three four five '))).toBe(true);
    expect(JSON.stringify(views.at(-1)!.messages.at(-1))).toContain('one two three four five six');
  });
});
