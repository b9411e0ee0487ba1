import { describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import { BasicAgent, runToEnd, textOf, type AgentEvent } from '../../src/index.js';
import { scriptedProvider, scriptedModel, type ScriptStep } from '../../src/testing/index.js';
import { addTool, testScheduler } from './helpers.js';

function agent(script: ScriptStep[], extra: Partial<ConstructorParameters<typeof BasicAgent>[0]> = {}) {
  const provider = scriptedProvider(script);
  let n = 0;
  const a = new BasicAgent({ model: scriptedModel(), provider, systemPrompt: 'sys', ids: () => `id${++n}`, retry: false, ...extra });
  return { agent: a, provider };
}

describe('BasicAgent', () => {
  it('prompts, keeps the conversation, and numbers loops per config: {sessionId}.{configId}.{N}', async () => {
    const { agent: a } = agent([{ text: 'one' }, { text: 'two' }]);
    const first = await runToEnd(a.prompt('hi'));
    expect(first.loopId).toBe('id2.scripted-scripted-model.1');
    await a.run('again');
    expect(a.lastLoopId).toBe('id2.scripted-scripted-model.2');
    expect(a.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it('runs nothing until subscribed, and streams every run on events$', async () => {
    const { agent: a, provider } = agent([{ text: 'ok' }]);
    const seen: string[] = [];
    a.events$.subscribe((e) => seen.push(e.type));
    const run$ = a.prompt('hi');
    expect(provider.requests).toHaveLength(0);
    await lastValueFrom(run$);
    expect(seen[0]).toBe('AgentStart');
    expect(seen.at(-1)).toBe('AgentEnd');
  });

  it('refuses a prompt while running with a typed error, leaving the active run alone', () => {
    testScheduler().run(({ flush }) => {
      const { agent: a } = agent([{ text: 'slow answer', delay: 50 }]);
      const events: AgentEvent[] = [];
      a.prompt('first').subscribe((e) => events.push(e));
      expect(a.isStreaming).toBe(true);
      let error: unknown;
      a.prompt('second').subscribe({ error: (e) => (error = e) });
      expect(error).toMatchObject({ code: 'AlreadyRunning', message: expect.stringContaining('steer()') });
      flush();
      expect(events.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'stop' });
      expect(a.isStreaming).toBe(false);
    });
  });

  it('run() while a run is active rejects with AlreadyRunning and leaves that run alone; afterwards it runs', async () => {
    const { agent: a, provider } = agent([{ text: 'first answer', delay: 50 }, { text: 'second answer' }]);
    let first: Promise<string> | undefined;
    let second: Promise<string> | undefined;
    testScheduler().run(({ flush }) => {
      first = a.run('first');
      expect(a.isStreaming).toBe(true);
      second = a.run('second');
      flush();
    });
    await expect(second).rejects.toMatchObject({ code: 'AlreadyRunning' });
    await expect(first).resolves.toBe('first answer');
    expect(provider.requests).toHaveLength(1);
    await expect(a.run('again')).resolves.toBe('second answer');
    expect(a.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(a.state.messages).toEqual(a.messages);
    expect(a.isStreaming).toBe(false);
  });

  it('without ids of its own, an agent and its session get distinct random UUIDs', () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const a = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([]) });
    const b = new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([]) });
    expect([a.agentId, a.sessionId, b.agentId, b.sessionId].every((id) => uuid.test(id))).toBe(true);
    expect(new Set([a.agentId, a.sessionId, b.agentId, b.sessionId]).size).toBe(4);
    // Version 4 with the RFC 9562 variant, unique across many (more than one draw of random bytes).
    const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const many = Array.from({ length: 150 }, () => new BasicAgent({ model: scriptedModel(), provider: scriptedProvider([]) }));
    const ids = many.flatMap((agent) => [agent.agentId, agent.sessionId]);
    expect(ids.filter((id) => !v4.test(id))).toEqual([]);
    expect(new Set(ids).size).toBe(300);
  });

  it('steer and followUp feed the running loop', () => {
    testScheduler().run(({ cold, flush }) => {
      const { agent: a } = agent([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }], delay: 10 }, { text: 'two', delay: 10 }, { text: 'bye', delay: 10 }]);
      a.withTools(addTool);
      a.prompt('go').subscribe();
      cold('5ms a').subscribe(() => {
        a.steer('and be quick');
        a.followUp('goodbye');
      });
      flush();
      expect(a.messages.filter((m) => m.role === 'user').map((m) => textOf(m as never))).toEqual(['go', 'and be quick', 'goodbye']);
    });
  });

  it('continue: Default / Rerun / Branch with parentLoopId = lastLoopId; typed errors on empty or assistant-tail contexts', async () => {
    const { agent: a } = agent([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
    await expect(lastValueFrom(a.continue())).rejects.toMatchObject({ code: 'InvalidContinue' });
    await a.run('hi');
    await expect(lastValueFrom(a.continue())).rejects.toMatchObject({ code: 'InvalidContinue' });
    a.followUp('more');
    const parent = a.lastLoopId;
    const events = await lastValueFrom(a.continue('branch').pipe(toArray()));
    expect(events[0]).toMatchObject({ type: 'AgentStart', parentLoopId: parent, continuationKind: { kind: 'branch', tag: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) } });
    expect(events.find((e) => e.type === 'TurnStart')).toMatchObject({ triggeredBy: 'branch' });
  });

  it('abort ends the active run gracefully', () => {
    testScheduler().run(({ cold, flush }) => {
      const { agent: a } = agent([{ text: 'a long answer', chunkDelay: 10 }]);
      const events: AgentEvent[] = [];
      a.prompt('hi').subscribe((e) => events.push(e));
      cold('15ms a').subscribe(() => a.abort());
      flush();
      expect(events.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'aborted' });
      expect(a.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'aborted' });
    });
  });

  it('saves and restores messages; bad JSON names the path and leaves the conversation untouched', async () => {
    const { agent: a } = agent([{ text: 'one' }]);
    await a.run('hi');
    const saved = a.saveMessages();
    const { agent: b } = agent([]);
    b.restoreMessages(saved);
    expect(b.messages).toEqual(a.messages);
    const broken = JSON.parse(saved);
    broken[1].content[0].type = 'banana';
    expect(() => b.restoreMessages(JSON.stringify(broken))).toThrow(/messages\[1\]\.content\[0\]/);
    expect(() => b.restoreMessages('{not json')).toThrow(/not valid JSON/);
    expect(b.messages).toEqual(a.messages);
  });

  it("reads phi-core's snake_case save_messages shape (error_message, stop_reason, tool_call_id)", () => {
    const { agent: a } = agent([]);
    a.restoreMessages(JSON.stringify([
      { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 1 },
      { role: 'assistant', content: [], stop_reason: 'error', model: 'm', provider: 'p', usage: { input: 1, output: 0, cache_read: 0, cache_write: 0, total_tokens: 1 }, timestamp: 2, error_message: 'boom' },
      { role: 'toolResult', tool_call_id: 'c1', tool_name: 'bash', content: [{ type: 'text', text: 'ok' }], is_error: false, timestamp: 3 },
    ]));
    expect(a.messages[1]).toMatchObject({ stopReason: 'error', errorMessage: 'boom', usage: { totalTokens: 1 } });
    expect(a.messages[2]).toMatchObject({ toolCallId: 'c1', toolName: 'bash', isError: false });
  });

  it('newSession rotates ids and counters; checkAndRotate uses the scheduler clock', () => {
    testScheduler().run(({ cold, flush }) => {
      const { agent: a } = agent([{ text: 'one' }, { text: 'two' }]);
      a.prompt('hi').subscribe();
      flush();
      const before = a.sessionId;
      expect(a.checkAndRotate(1000)).toBeUndefined();
      let rotated: string | undefined;
      cold('1001ms a').subscribe(() => (rotated = a.checkAndRotate(1000)));
      flush();
      expect(rotated).toBeDefined();
      expect(rotated).not.toBe(before);
      expect(a.lastLoopId).toBeUndefined();
      expect(a.nextLoopId()).toBe(`${rotated}.scripted-scripted-model.1`);
    });
  });

  it('rejects duplicate tool names; reset clears messages and queues', async () => {
    const { agent: a } = agent([{ text: 'one' }]);
    a.withTools(addTool);
    expect(() => a.withTools(addTool)).toThrow(/Duplicate tool name "add"/);
    await a.run('hi');
    a.followUp('x');
    a.reset();
    expect(a.messages).toEqual([]);
    expect(a.queuedFollowUps).toBe(0);
  });

  it('builder hooks apply to runs', async () => {
    const log: string[] = [];
    const { agent: a } = agent([{ text: 'one' }]);
    a.onBeforeTurn(() => void log.push('turn')).onAfterLoop(() => void log.push('end'));
    await a.run('hi');
    expect(log).toEqual(['turn', 'end']);
  });
});
