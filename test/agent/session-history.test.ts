import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { BasicAgent } from '../../src/index.js';
import { FileSessionStore, parseSession, SessionCorruptError } from '../../src/session/index.js';
import { scriptedModel, scriptedProvider, type ScriptStep } from '../../src/testing/index.js';

const earlier = [
  { role: 'user', content: [{ type: 'text', text: 'My name is Ada.' }], timestamp: 1 },
  { role: 'assistant', content: [{ type: 'text', text: 'Hello, Ada.' }], stopReason: 'stop', timestamp: 2 },
];

function agent(script: ScriptStep[]): BasicAgent {
  let n = 0;
  return new BasicAgent({ model: scriptedModel(), provider: scriptedProvider(script), systemPrompt: 'sys', ids: () => `id${++n}` });
}

const dirs: string[] = [];
async function fileStore(): Promise<{ store: FileSessionStore; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'phi-rx-history-'));
  dirs.push(dir);
  return { store: new FileSessionStore(dir), dir };
}

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe('a saved session keeps the conversation its first run started from (history)', () => {
  it('messages restored with restoreMessages survive save → restore in a new agent, before the run that followed', async () => {
    const { store } = await fileStore();
    const first = agent([{ text: 'You are Ada.' }]);
    first.restoreMessages(JSON.stringify(earlier));
    await lastValueFrom(first.prompt('What is my name?'));
    const saved = await first.save(store);
    expect(saved.history?.map((m) => m.role)).toEqual(['user', 'assistant']);

    const second = agent([]);
    await second.restore(store, first.sessionId);
    expect(second.messages).toEqual(first.messages);
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // Saved again by the restored agent: the history is kept, not doubled.
    const again = await second.save(store);
    expect(again.history).toEqual(saved.history);
  });

  it("a new session's history is the conversation of the sessions before it", async () => {
    const { store } = await fileStore();
    const first = agent([{ text: 'one' }, { text: 'two' }]);
    await lastValueFrom(first.prompt('first'));
    const firstSession = first.sessionId;
    first.newSession();
    await lastValueFrom(first.prompt('second'));
    await first.save(store);

    const restored = agent([]);
    await restored.restore(store, first.sessionId);
    expect(restored.sessionId).not.toBe(firstSession);
    expect(restored.messages).toEqual(first.messages);
    expect(restored.messages).toHaveLength(4);
  });

  it('restoreMessages after runs of a session starts a new session, whose history is the restored conversation', async () => {
    const { store } = await fileStore();
    const first = agent([{ text: 'one' }, { text: 'two' }]);
    await lastValueFrom(first.prompt('first'));
    const before = first.sessionId;
    first.restoreMessages(JSON.stringify(earlier));
    expect(first.sessionId).not.toBe(before);
    await lastValueFrom(first.prompt('second'));
    expect((await first.save(store)).history).toEqual(first.messages.slice(0, 2));
    expect(first.messages.slice(0, 2).map((m) => m.timestamp)).toEqual([1, 2]);

    const restored = agent([]);
    await restored.restore(store, first.sessionId);
    expect(restored.messages).toEqual(first.messages);
    expect(restored.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // Before any run of a session, restoreMessages keeps the session.
    const fresh = agent([]);
    const id = fresh.sessionId;
    fresh.restoreMessages(JSON.stringify(earlier));
    expect(fresh.sessionId).toBe(id);
  });

  it('a session with no history is saved without one', async () => {
    const { store } = await fileStore();
    const first = agent([{ text: 'hi' }]);
    await lastValueFrom(first.prompt('hello'));
    expect((await first.save(store)).history).toBeUndefined();
  });

  it('a stored history that is not messages is refused, naming the path', async () => {
    const { store, dir } = await fileStore();
    const first = agent([{ text: 'x' }]);
    first.restoreMessages(JSON.stringify(earlier));
    await lastValueFrom(first.prompt('y'));
    await first.save(store);
    const file = join(dir, `${first.sessionId}.json`);
    const json = JSON.parse(await readFile(file, 'utf8')) as { history: Array<Record<string, unknown>> };
    json.history[1]!.role = 'robot';
    const parsed = parseSession(json);
    expect(parsed.success).toBe(false);
    expect(!parsed.success && parsed.error.path).toEqual(['history', 1, 'role']);
    await writeFile(file, JSON.stringify(json));
    await expect(agent([]).restore(store, first.sessionId)).rejects.toBeInstanceOf(SessionCorruptError);
  });
});
