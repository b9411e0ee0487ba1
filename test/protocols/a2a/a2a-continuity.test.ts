import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { StreamResponse } from '@a2a-js/sdk';
import { InMemoryTaskStore, type TaskStore } from '@a2a-js/sdk/server';
import { BasicAgent, defineTool, textOf as messageText } from '../../../src/index.js';
import { FileSessionStore } from '../../../src/session/index.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../../src/testing/index.js';
import { a2aServer, dataPart, eventIdOf, sessionIdOfContext, TASK_STATE, type A2aServer } from '../../../src/protocols/a2a/index.js';
import { clientFor, collect, send, stateOf, taskOf, textOf, type Binding } from './helpers.js';

const model = scriptedModel();
const servers: A2aServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function start(agent: () => BasicAgent, store?: FileSessionStore, taskStore?: TaskStore): Promise<string> {
  const server = await a2aServer(agent, { card: { name: 'Bank', description: 'Moves money' }, authorize: 'allow-all', textChunkMs: 0, ...(store ? { store } : {}), ...(taskStore ? { taskStore } : {}) });
  servers.push(server);
  return server.listen();
}

const transfer = defineTool({
  name: 'transfer', description: 'Moves money', parameters: z.object({ amount: z.number() }), needsApproval: true,
  execute: ({ amount }) => `moved ${amount}`,
});

describe.each<Binding>(['JSONRPC', 'HTTP+JSON'])('a2aServer continuity over %s', (binding) => {
  it('a restarted server (a new instance on the same file store) continues the context\'s conversation', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'phi-a2a-'));
    dirs.push(dir);
    const store = new FileSessionStore(dir);
    const first = scriptedProvider([{ text: 'Noted: your name is Ada.' }]);
    const url1 = await start(() => new BasicAgent({ model, provider: first, retry: false }), store);
    const done = await client1(url1);
    const contextId = done.contextId;
    await servers.shift()!.close();

    const second = scriptedProvider([{ text: 'Your name is Ada.' }]);
    const url2 = await start(() => new BasicAgent({ model, provider: second, retry: false }), new FileSessionStore(dir));
    const client = await clientFor(url2, binding);
    const rs = await collect(client.sendMessageStream(send('What is my name?', { contextId })));
    expect(stateOf(rs.at(-1)!)).toBe(TASK_STATE.completed);
    expect(taskOf(rs).contextId).toBe(contextId);
    // The model of the new server saw the whole conversation, from the store.
    expect(second.requests[0]!.messages.map((m) => [m.role, messageText(m as never)])).toEqual([
      ['user', 'My name is Ada.'], ['assistant', 'Noted: your name is Ada.'], ['user', 'What is my name?'],
    ]);
    expect((await store.load(sessionIdOfContext(contextId))).loops).toHaveLength(2);

    async function client1(url: string) {
      const c = await clientFor(url, binding);
      const out = await collect(c.sendMessageStream(send('My name is Ada.')));
      expect(stateOf(out.at(-1)!), JSON.stringify(out.at(-1))).toBe(TASK_STATE.completed);
      return taskOf(out);
    }
  });

  it('input-required for an approval: the reply answers it (yes), a second approval is denied with a reason (data part)', async () => {
    const provider = scriptedProvider([
      { toolCalls: [{ name: 'transfer', arguments: { amount: 50 }, id: 't1' }] },
      { toolCalls: [{ name: 'transfer', arguments: { amount: 900 }, id: 't2' }] },
      { text: 'Moved 50, not 900.' },
    ]);
    const url = await start(() => new BasicAgent({ model, provider, retry: false, tools: [transfer] }));
    const client = await clientFor(url, binding);
    const asks = await collect(client.sendMessageStream(send('pay 50 then 900')));
    const task = taskOf(asks);
    const last = asks.at(-1)!;
    expect(stateOf(last)).toBe(TASK_STATE.inputRequired);
    expect(last.payload?.$case === 'statusUpdate' && last.payload.value.status?.message?.parts.map((p) => p.content)).toContainEqual(
      { $case: 'data', value: { approval: { toolCallId: 't1', toolName: 'transfer', args: { amount: 50 } } } },
    );
    const unreadable = await collect(client.sendMessageStream(send('hmm, maybe', { contextId: task.contextId, taskId: task.id })));
    expect(stateOf(unreadable.at(-1)!)).toBe(TASK_STATE.inputRequired);
    expect(textOf((unreadable.at(-1)!.payload?.value as { status?: { message?: never } }).status?.message)).toMatch(/Could not read an answer from "hmm, maybe"/);

    const next = await collect(client.sendMessageStream(send('yes', { contextId: task.contextId, taskId: task.id })));
    expect(stateOf(next.at(-1)!)).toBe(TASK_STATE.inputRequired);
    const lines = next.flatMap((r) => (r.payload?.$case === 'statusUpdate' ? [textOf(r.payload.value.status?.message)] : []));
    expect(lines).toContain('transfer done');
    const end = await collect(client.sendMessageStream(send([dataPart({ approved: false, reason: 'too much' })], { contextId: task.contextId, taskId: task.id })));
    expect(stateOf(end.at(-1)!)).toBe(TASK_STATE.completed);
    const answer = end.flatMap((r) => (r.payload?.$case === 'artifactUpdate' ? [textOf({ parts: r.payload.value.artifact!.parts } as never)] : []));
    expect(answer).toEqual(['Moved 50, not 900.']);
    const results = provider.requests[2]!.messages.filter((m) => m.role === 'toolResult').map((m) => messageText(m as never));
    expect(results).toEqual(['moved 50', 'Tool call "transfer" was denied: too much']);
  });

  it('a message to a task at work is refused (it is not waiting for input) and the run goes on undisturbed', async () => {
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const gate = defineTool({ name: 'gate', description: 'Waits for the test', parameters: z.object({}), execute: async () => (await opened, 'open') });
    const provider = scriptedProvider([{ toolCalls: [{ name: 'gate', arguments: {}, id: 'g1' }] }, { text: 'Done.' }]);
    const url = await start(() => new BasicAgent({ model, provider, retry: false, tools: [gate] }));
    const client = await clientFor(url, binding);
    let refused: Promise<unknown> | undefined;
    const first = await collect(client.sendMessageStream(send('go')), (r) => {
      if (r.payload?.$case === 'statusUpdate' && textOf(r.payload.value.status?.message) === 'Calling gate') {
        const task = r.payload.value;
        refused = collect(client.sendMessageStream(send('Answer in French.', { taskId: task.taskId, contextId: task.contextId }))).then(() => 'served', (e: unknown) => e);
        void refused.then(open);
      }
    });
    expect(String(await refused)).toMatch(/task \S+ is at work: send a message to it when it asks for input/);
    expect(stateOf(first.at(-1)!)).toBe(TASK_STATE.completed);
    expect(first.filter((r) => r.payload?.$case === 'task')).toHaveLength(1);
  });

  it('SubscribeToTask after the connection dropped: the snapshot matches the stream so far, then every later update once', async () => {
    const answer = 'The quick brown fox jumps over the lazy dog. '.repeat(3);
    // A task store that answers slowly, as a database does: the SDK's own SubscribeToTask reads the task while updates go on.
    const tasks = new InMemoryTaskStore();
    let slow = false;
    const taskStore: TaskStore = {
      save: (task, context) => tasks.save(task, context),
      load: async (id, context) => {
        if (slow) await new Promise((resolve) => setTimeout(resolve, 30));
        return tasks.load(id, context);
      },
      list: (params, context) => tasks.list(params, context),
    } as TaskStore;
    const provider = scriptedProvider([{ text: 'Adding. ', toolCalls: [{ name: 'gate', arguments: {}, id: 'g1' }] }, { text: answer, chunkDelay: 2 }], { chunkSize: 1 });
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const gate = defineTool({ name: 'gate', description: 'Waits for the test', parameters: z.object({}), execute: async () => (await opened, 'open') });
    const url = await start(() => new BasicAgent({ model, provider, retry: false, tools: [gate] }), undefined, taskStore);
    const client = await clientFor(url, binding);

    const dropped = new AbortController();
    const before: StreamResponse[] = [];
    let watcher: Promise<StreamResponse[]> | undefined;
    let answerDeltas = 0;
    let streaming: () => void = () => undefined;
    const answerStreams = new Promise<void>((resolve) => (streaming = resolve));
    const watch = (r: StreamResponse) => {
      if (r.payload?.$case === 'statusUpdate' && r.payload.value.metadata?.['phi-rx']?.type === 'MessageUpdate' && ++answerDeltas === 12) streaming();
    };
    try {
      for await (const r of client.sendMessageStream(send('go'), { signal: dropped.signal })) {
        before.push(r);
        // A watcher that never drops: the reference list of every update.
        if (before.length === 1) watcher = collect(client.resubscribeTask({ tenant: '', id: taskOf(before).id } as never), watch);
        if (r.payload?.$case === 'statusUpdate' && textOf(r.payload.value.status?.message) === 'Calling gate') dropped.abort(); // the connection drops mid-run
      }
    } catch {
      // the aborted stream ends with an AbortError
    }
    const taskId = taskOf(before).id;
    // Subscribe again while the answer streams: updates go out as the snapshot is taken.
    open();
    await answerStreams;
    slow = true;
    const again = await collect(client.resubscribeTask({ tenant: '', id: taskId } as never));
    const watched = await watcher!;
    const reference = watched.slice(1);
    expect(stateOf(again.at(-1)!)).toBe(TASK_STATE.completed);

    const snapshot = taskOf(again);
    const lastEventId = eventIdOf(snapshot)!;
    const later = again.slice(1);
    expect(lastEventId).toBeGreaterThan(0);
    expect(later.every((r) => eventIdOf(r.payload!.value as never)! > lastEventId)).toBe(true);
    // The snapshot's history holds exactly the status messages of the updates up to lastEventId; the rest come after it, once.
    const messageIds = (rs: StreamResponse[]) => rs.flatMap((r) => (r.payload?.$case === 'statusUpdate' && r.payload.value.status?.message ? [r.payload.value.status.message.messageId] : []));
    const inSnapshot = snapshot.history.slice(1).map((m) => m.messageId);
    expect(inSnapshot.length).toBeGreaterThan(0);
    expect(messageIds(later).length).toBeGreaterThan(0);
    const everyMessage = [...taskOf(watched).history.slice(1).map((m) => m.messageId), ...messageIds(reference)];
    expect([...inSnapshot, ...messageIds(later)]).toEqual(everyMessage);
    expect(new Set(everyMessage).size).toBe(everyMessage.length);
    // So text rebuilt from the snapshot and the later updates is the whole text, without a repeat.
    const text = (ms: Array<{ parts: never[]; metadata?: Record<string, { type?: string }> }>) => ms.filter((m) => m.metadata?.['phi-rx']?.type === 'MessageUpdate').map((m) => textOf(m as never)).join('');
    const laterMessages = later.flatMap((r) => (r.payload?.$case === 'statusUpdate' && r.payload.value.status?.message ? [r.payload.value.status.message] : []));
    expect(text([...snapshot.history, ...laterMessages] as never)).toBe(`Adding. ${answer}`);
    expect(later.flatMap((r) => (r.payload?.$case === 'artifactUpdate' ? [r.payload.value.artifact!.name] : []))).toEqual(['answer']);
  });
});
