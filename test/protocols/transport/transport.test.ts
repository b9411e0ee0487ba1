import { afterEach, describe, expect, it } from 'vitest';
import { lastValueFrom, Subject, take, tap, toArray } from 'rxjs';
import { type AgentEvent, agentLoop, userMessage } from '../../../src/index.js';
import { scriptedProvider, type ScriptStep } from '../../../src/testing/index.js';
import { EventStreamError, fromEventStream, runCommands } from '../../../src/protocols/transport/index.js';
import { addTool, context, model } from '../../agent/helpers.js';
import { startHubServer, type HubServer } from './hub-server.js';

let server: HubServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const reply = 'The quick brown fox jumps over the lazy dog. '.repeat(6);

/** A run whose events are recorded as JSON when they happen (the live partial is mutated later). */
function recordedRun(script: ScriptStep[] = [{ text: reply, chunkDelay: 1 }]) {
  const seen: string[] = [];
  const run$ = agentLoop([userMessage('Say it', 0)], context([addTool]), { model, provider: scriptedProvider(script), retry: false }).pipe(
    tap((e) => seen.push(JSON.stringify(e))),
  );
  return { run$, seen };
}

const text = (events: AgentEvent[]) =>
  events.filter((e) => e.type === 'MessageUpdate' && e.delta.type === 'text').map((e) => (e.type === 'MessageUpdate' ? e.delta.delta : '')).join('');

describe('event transport over loopback HTTP', () => {
  it('a client gets every event, partial messages rebuilt from deltas, and completes on AgentEnd', async () => {
    server = await startHubServer({ coalesceDeltasMs: false });
    const { run$, seen } = recordedRun();
    const id = server.hub.start(run$);
    const events = await lastValueFrom(fromEventStream(`${server.url}/runs/${id}/events`).pipe(toArray()));
    expect(events).toEqual(seen.map((json) => JSON.parse(json)));
    expect(events.at(-1)!.type).toBe('AgentEnd');
    expect(text(events)).toBe(reply);
  });

  it('reads a Response already fetched (and reconnects to its url)', async () => {
    server = await startHubServer({ coalesceDeltasMs: false });
    const { run$, seen } = recordedRun([{ text: reply, chunkDelay: 2, delay: 50 }]);
    const id = server.hub.start(run$);
    server.dropNextAfterFrames(5); // the 4 frames before the model answers arrive, then the connection drops
    const response = await fetch(`${server.url}/runs/${id}/events`);
    const events = await lastValueFrom(fromEventStream(response, { retryDelayMs: 5 }).pipe(toArray()));
    expect(events).toEqual(seen.map((json) => JSON.parse(json)));
    expect(server.requests.filter((r) => r.url.endsWith('/events')).map((r) => r.lastEventId)).toEqual([undefined, '5']);
  });

  it('a MessageUpdate carries only its delta on the wire', async () => {
    server = await startHubServer();
    const { run$ } = recordedRun();
    const id = server.hub.start(run$);
    await lastValueFrom(fromEventStream(`${server.url}/runs/${id}/events`).pipe(toArray()));
    const response = await fetch(`${server.url}/runs/${id}/events`);
    const wire = await response.text();
    const updates = wire.split('\n\n').filter((f) => f.includes('event: MessageUpdate'));
    expect(updates.length).toBeGreaterThan(10);
    for (const frame of updates) {
      const data = JSON.parse(frame.split('\n').find((l) => l.startsWith('data: '))!.slice(6));
      expect(Object.keys(data).sort()).toEqual(['delta', 'loopId', 'timestamp', 'type']);
    }
    const ids = wire.split('\n').filter((l) => l.startsWith('id: ')).map((l) => Number(l.slice(4)));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
  });

  it('a connection dropped mid-reply resumes with Last-Event-ID: no gap, no duplicate', async () => {
    server = await startHubServer({ coalesceDeltasMs: false });
    const { run$, seen } = recordedRun([{ text: reply, chunkDelay: 2, delay: 50 }]);
    const id = server.hub.start(run$);
    server.dropNextAfterFrames(12); // mid-reply: 4 frames come before the model answers
    const events = await lastValueFrom(fromEventStream(`${server.url}/runs/${id}/events`, { retryDelayMs: 5 }).pipe(toArray()));
    expect(events).toEqual(seen.map((json) => JSON.parse(json)));
    expect(text(events)).toBe(reply);
    const connects = server.requests.filter((r) => r.url.endsWith('/events'));
    expect(connects.map((r) => r.lastEventId)).toEqual([undefined, '12']);
  });

  it('coalesced, a 2 KB reply in 4-character deltas costs under 3x its length on the wire, whole stream included', async () => {
    server = await startHubServer();
    const long = 'abcdefghijklmnopqrstuvwxyz0123456789 '.repeat(56).slice(0, 2048);
    const { run$ } = recordedRun([{ text: long, chunkSize: 4 }]);
    const id = server.hub.start(run$);
    const events = await lastValueFrom(fromEventStream(`${server.url}/runs/${id}/events`).pipe(toArray()));
    expect(text(events)).toBe(long);
    const wire = await (await fetch(`${server.url}/runs/${id}/events`)).text();
    const deltaFrames = wire.split('\n\n').filter((f) => f.includes('event: MessageUpdate'));
    const deltaBytes = deltaFrames.reduce((n, f) => n + new TextEncoder().encode(f).length + 2, 0);
    expect(deltaBytes).toBeLessThanOrEqual(1.5 * long.length);
    expect(deltaFrames.length).toBeLessThan(512);
    // the whole stream: the final message is sent once (TurnEnd and AgentEnd refer to its MessageEnd)
    expect(new TextEncoder().encode(wire).length).toBeLessThanOrEqual(3 * long.length);
    const turnEnd = wire.split('\n\n').find((f) => f.includes('event: TurnEnd'))!;
    expect(turnEnd).not.toContain('"message"');
    const end = events.at(-1)!;
    expect(end.type === 'AgentEnd' && end.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  });

  it('an id that fell out of the replay buffer gets a clear error, not silence', async () => {
    server = await startHubServer({ bufferSize: 5 });
    const { run$ } = recordedRun([{ text: 'abcdefghijklmnopqrstuvwxyz' }]);
    const id = server.hub.start(run$);
    await new Promise<void>((resolve) => server!.hub.run(id)!.framesAfter(0).subscribe({ complete: resolve, error: () => resolve() }));
    const failure = lastValueFrom(fromEventStream(`${server.url}/runs/${id}/events`, { lastEventId: '2' }));
    await expect(failure).rejects.toThrow(EventStreamError);
    await expect(failure).rejects.toThrow(/cannot resume after event 2: events 3\.\.\d+ fell out of the replay buffer/);
  });

  it('unsubscribing closes the connection', async () => {
    server = await startHubServer({ heartbeatMs: 60_000 });
    const never = new Subject<AgentEvent>();
    const id = server.hub.start(never);
    never.next({ type: 'AgentStart', agentId: 'a', sessionId: 's', loopId: 'l', timestamp: 0 });
    await lastValueFrom(fromEventStream(`${server.url}/runs/${id}/events`).pipe(take(1)));
    for (let i = 0; i < 100 && server.closed === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(server.closed).toBe(1);
  });

  it('an unknown run fails with the HTTP status and the server\'s message', async () => {
    server = await startHubServer();
    await expect(lastValueFrom(fromEventStream(`${server.url}/runs/nope/events`))).rejects.toThrow(/HTTP 404.*no run "nope"/);
  });

  it('idle connections get heartbeat comments', async () => {
    server = await startHubServer({ heartbeatMs: 20 });
    const id = server.hub.start(new Subject<AgentEvent>());
    const controller = new AbortController();
    const response = await fetch(`${server.url}/runs/${id}/events`, { signal: controller.signal });
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes(': heartbeat')) received += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(received).toContain(': heartbeat\n\n');
  });
});

describe('command channel', () => {
  it('steers, follows up and aborts a run by id; bad commands get a clear 400', async () => {
    server = await startHubServer();
    const received: string[] = [];
    const id = server.hub.start(new Subject<AgentEvent>(), {
      steer: (t) => received.push(`steer:${t}`),
      followUp: (t) => received.push(`followUp:${t}`),
      abort: () => received.push('abort'),
    });
    const commands = runCommands(`${server.url}/runs/${id}/commands`);
    await commands.steer('use metric');
    await commands.followUp('and then?');
    await commands.abort();
    expect(received).toEqual(['steer:use metric', 'followUp:and then?', 'abort']);
    await expect(commands.send({ type: 'steer', text: '' })).rejects.toThrow(/HTTP 400: command "steer": field "text" must be a non-empty string/);
    await expect(commands.send({ type: 'jump' } as never)).rejects.toThrow(/field "type" must be "steer", "followUp", "abort", "approve" or "cancelToolCall", got "jump"/);
    await expect(runCommands(`${server.url}/runs/other/commands`).abort()).rejects.toThrow(/HTTP 404/);
  });
});
