import { beforeEach, describe, expect, it } from 'vitest';
import { asyncScheduler, filter, firstValueFrom } from 'rxjs';
import { z } from 'zod';
import {
  agentLoop, agentLoopContinue, BasicAgent, defineAgent, defineTool, MessageQueue, userMessage, type AgentContext, type AgentEvent, type AgentLoopConfig, type AnyTool,
} from '../../src/index.js';
import { scriptedProvider } from '../../src/testing/index.js';
import type { StreamRequest } from '../../src/types/provider.js';
import { composedLoop } from '../../src/loop/agent-loop.js';
import { RunCompositions } from '../../src/loop/run-composition.js';
import { addTool, events, fixtureReport, model, testScheduler } from '../agent/helpers.js';

// An agent definition composes its stages once (RunCompositions) and every run that fits goes through
// them; what a run has of its own rides on its state. These tests hold runs of one config object
// through one RunCompositions against each other: interleaved, one after the other, and with the config,
// tools or prompt changed between; and sessions of one definition against each other.

const runContext = (n: number, tools: readonly AnyTool[] = [addTool], systemPrompt = 'You are a test.'): AgentContext => ({
  systemPrompt, messages: [], tools, agentId: `agent-${n}`, sessionId: `session-${n}`, loopId: `loop-${n}`,
});

/** A provider answering every request by its conversation: turn 0 calls `add`, turn 1 answers; the requests are kept. */
function conversational(requests: StreamRequest[], chunkDelay = 0): ReturnType<typeof scriptedProvider> {
  const step = (request: StreamRequest) => {
    requests.push(request);
    const turn = request.messages.filter((m) => m.role === 'assistant').length;
    const user = request.messages.find((m) => m.role === 'user');
    const asked = user && typeof user.content !== 'string' && user.content[0]?.type === 'text' ? user.content[0].text : '?';
    return turn === 0
      ? { text: `adding for ${asked}`, toolCalls: [{ name: 'add', arguments: { a: turn + 1, b: 2 }, id: `call-${asked}` }], chunkDelay }
      : { text: `done with ${asked}`, chunkDelay };
  };
  return scriptedProvider(Array.from({ length: 40 }, () => step));
}

describe('RunCompositions: the runs of one config share its stages', () => {
  let shared = new RunCompositions();
  const agentLoop: typeof composedLoop extends unknown ? (p: Parameters<typeof composedLoop>[1], c: AgentContext, k: AgentLoopConfig) => ReturnType<typeof composedLoop> : never =
    (prompts, context, config) => composedLoop(shared, prompts, context, config);
  const agentLoopContinue = (context: AgentContext, config: AgentLoopConfig) => composedLoop(shared, undefined, context, config);
  beforeEach(() => {
    shared = new RunCompositions();
  });

  it('interleaved runs of one config each get the events they get alone (ids, prompts, calls, results)', () => {
    const alone = (n: number): AgentEvent[] => {
      const out: AgentEvent[] = [];
      testScheduler().run(({ flush }) => {
        const config: AgentLoopConfig = { model, provider: conversational([], 3), retry: false };
        agentLoop([userMessage(`q${n}`, 0)], runContext(n), config).subscribe((e) => out.push(e));
        flush();
      });
      return out;
    };
    const together: AgentEvent[][] = [[], [], []];
    testScheduler().run(({ flush }) => {
      const config: AgentLoopConfig = { model, provider: conversational([], 3), retry: false };
      for (const n of [0, 1, 2]) agentLoop([userMessage(`q${n}`, 0)], runContext(n), config).subscribe((e) => together[n]!.push(e));
      flush();
    });
    for (const n of [0, 1, 2]) {
      expect(together[n]).toEqual(alone(n));
      expect(together[n]!.at(-1)).toMatchObject({ type: 'AgentEnd', loopId: `loop-${n}`, stopReason: 'stop' });
    }
    expect(together[1]![0]).toMatchObject({ type: 'AgentStart', agentId: 'agent-1', sessionId: 'session-1', loopId: 'loop-1' });
  });

  it('each run of one config starts from its own context: its ids, its prompts or continuation, its session on every request', async () => {
    const requests: StreamRequest[] = [];
    const config: AgentLoopConfig = { model, provider: conversational(requests), retry: false };
    const first = await events(agentLoop([userMessage('first', 0)], runContext(1), config));
    const history = first.flatMap((e) => (e.type === 'AgentEnd' ? e.messages : []));
    const second = await events(agentLoop([userMessage('second', 0)], runContext(2), config));
    // A continuation of run 1's conversation with a new user message, through the same config.
    const continued = await events(agentLoopContinue(
      { ...runContext(3), messages: [...history, userMessage('and again', 0)], parentLoopId: 'loop-1', continuationKind: { kind: 'default' } },
      config,
    ));
    const start = (all: AgentEvent[]) => all.find((e) => e.type === 'AgentStart');
    const triggers = (all: AgentEvent[]) => all.flatMap((e) => (e.type === 'TurnStart' ? [e.triggeredBy] : []));
    expect(start(first)).toMatchObject({ agentId: 'agent-1', sessionId: 'session-1', loopId: 'loop-1' });
    expect(start(second)).toMatchObject({ agentId: 'agent-2', sessionId: 'session-2', loopId: 'loop-2' });
    expect(start(continued)).toMatchObject({ agentId: 'agent-3', loopId: 'loop-3', parentLoopId: 'loop-1', continuationKind: { kind: 'default' } });
    expect(start(second)).not.toHaveProperty('parentLoopId');
    expect(triggers(first)).toEqual(['user', 'continuation']);
    expect(triggers(continued)).toEqual(['continuation']);
    expect(requests.map((r) => r.sessionId)).toEqual(['session-1', 'session-1', 'session-2', 'session-2', 'session-3']);
    // Each run's prompt went to the model in its own run only.
    expect(requests[2]!.messages.map((m) => m.role)).toEqual(['user']);
    expect(JSON.stringify(requests[2]!.messages)).toContain('second');
    expect(JSON.stringify(requests[2]!.messages)).not.toContain('first');
  });

  it('sees what changed between runs: a config field set anew, a tool added to the same array, a new system prompt', async () => {
    const requests: StreamRequest[] = [];
    const seen: number[] = [];
    const tools: AnyTool[] = [addTool];
    const config: AgentLoopConfig = { model, provider: conversational(requests), retry: false, maxTokens: 100 };
    await events(agentLoop('one', runContext(1, tools), config));
    config.maxTokens = 200;
    config.hooks = { beforeTurn: (_m, turn) => void seen.push(turn) };
    tools.push(defineTool({ name: 'echo', description: 'Echoes', parameters: z.object({ text: z.string() }), execute: ({ text }) => text }));
    await events(agentLoop('two', runContext(2, tools), config));
    await events(agentLoop('three', runContext(3, tools, 'Be brief.'), config));
    expect(requests.map((r) => r.maxTokens)).toEqual([100, 100, 200, 200, 200, 200]);
    expect(requests.map((r) => r.tools?.map((t) => t.name).join())).toEqual(['add', 'add', 'add,echo', 'add,echo', 'add,echo', 'add,echo']);
    expect(requests.map((r) => r.systemPrompt)).toEqual(['You are a test.', 'You are a test.', 'You are a test.', 'You are a test.', 'Be brief.', 'Be brief.']);
    expect(seen).toEqual([0, 1, 0, 1]);
  });

  it('steering from a queue shared by runs of one config reaches the run that takes it; a steering function is asked by each run', async () => {
    const queue = new MessageQueue();
    const requests: StreamRequest[] = [];
    const config: AgentLoopConfig = { model, provider: conversational(requests), retry: false, steering: queue };
    queue.push(userMessage('steered', 0));
    await events(agentLoop('one', runContext(1), config));
    await events(agentLoop('two', runContext(2), config));
    const sentTexts = requests.map((r) => JSON.stringify(r.messages));
    expect(sentTexts.filter((t) => t.includes('steered'))).toHaveLength(2); // run 1's two requests; run 2 never saw it
    expect(JSON.stringify(requests[2]!.messages)).not.toContain('steered');

    let asks = 0;
    const handed: string[] = [];
    const fromFunction: AgentLoopConfig = {
      model, provider: conversational([]), retry: false,
      steering: () => (++asks === 1 || asks === 4 ? [userMessage(`note ${asks}`, 0)] : []),
    };
    const asksAfter: number[] = [];
    for (const n of [1, 2]) {
      const all = await events(agentLoop(`run ${n}`, runContext(n), fromFunction));
      for (const e of all) if (e.type === 'MessageEnd' && e.message.role === 'user') handed.push(JSON.stringify(e.message.content));
      asksAfter.push(asks);
    }
    expect(asksAfter[0]).toBeGreaterThan(0);
    expect(asksAfter[1]).toBeGreaterThan(asksAfter[0]!);
    expect(handed.filter((t) => t.includes('note'))).toHaveLength(2); // nothing it handed over was lost
  });

  it('runs whose configs differ only in their signal share a composition and abort alone: one aborted, the other runs to its end', () => {
    const ends: Record<string, string> = {};
    testScheduler().run(({ flush }) => {
      const base: AgentLoopConfig = { model, provider: conversational([], 5), retry: false };
      const controllers = [new AbortController(), new AbortController()];
      controllers.forEach((controller, n) => {
        agentLoop(`q${n}`, runContext(n), { ...base, signal: controller.signal }).subscribe((e) => {
          if (e.type === 'AgentEnd') ends[e.loopId] = e.stopReason;
        });
      });
      asyncScheduler.schedule(() => controllers[0]!.abort(), 12); // virtual time, mid-stream
      flush();
    });
    expect(ends).toEqual({ 'loop-0': 'aborted', 'loop-1': 'stop' });
  });

  it('sessions of one definition keep their own steering, follow-ups and cancellations', async () => {
    const requests: StreamRequest[] = [];
    // The tool waits until the test lets it finish (or its call is cancelled): no timer.
    const finishers: Array<() => void> = [];
    let bothStarted: () => void = () => undefined;
    const running = new Promise<void>((resolve) => (bothStarted = resolve));
    const slow = defineTool({ name: 'slow', description: 'Waits', parameters: z.object({}), execute: (_a, { signal }) => new Promise<string>((resolve, reject) => {
      signal?.addEventListener('abort', () => reject(new Error('cancelled')));
      if (finishers.push(() => resolve('slow done')) === 2) bothStarted();
    }) });
    const options = {
      model, retry: false as const, tools: [addTool, slow],
      provider: scriptedProvider(Array.from({ length: 20 }, () => (request: StreamRequest) => {
        requests.push(request);
        const turn = request.messages.filter((m) => m.role === 'assistant').length;
        const text = JSON.stringify(request.messages);
        const who = text.includes('from A') ? 'A' : 'B';
        return turn === 0 ? { toolCalls: [{ name: 'slow', arguments: {}, id: `slow-${who}` }] } : { text: `answer ${turn} for ${who}` };
      })),
    };
    const definition = defineAgent(options);
    const a = definition.session();
    const b = definition.session();
    const runA = a.run('from A');
    const runB = b.run('from B');
    a.steer('steer A');
    b.followUp('follow B');
    await running;
    expect(a.cancelToolCall('slow-A')).toBe(true);
    for (const finish of finishers) finish(); // A's call is cancelled already: only B's finishes
    await Promise.all([runA, runB]);
    const textsOf = (agent: BasicAgent) => JSON.stringify(agent.messages);
    expect(textsOf(a)).toContain('steer A');
    expect(textsOf(a)).not.toContain('follow B');
    expect(textsOf(b)).toContain('follow B');
    expect(textsOf(b)).not.toContain('steer A');
    // A's call was cancelled, B's ran to its end.
    const resultOf = (agent: BasicAgent, id: string) => agent.messages.find((m) => m.role === 'toolResult' && m.toolCallId === id);
    expect(resultOf(a, 'slow-A')).toMatchObject({ isError: true });
    expect(JSON.stringify(resultOf(b, 'slow-B'))).toContain('slow done');
  });

  it('sessions of one definition answer their own approvals', async () => {
    const transfer = defineTool({
      name: 'transfer', description: 'Moves money', parameters: z.object({ amount: z.number() }), needsApproval: true,
      execute: ({ amount }) => `moved ${amount}`,
    });
    const options = {
      model, retry: false as const, tools: [transfer],
      provider: scriptedProvider(Array.from({ length: 6 }, () => (request: StreamRequest) => {
        const who = JSON.stringify(request.messages).includes('from A') ? 'A' : 'B';
        return request.messages.some((m) => m.role === 'toolResult') ? { text: `over for ${who}` } : { toolCalls: [{ name: 'transfer', arguments: { amount: 5 }, id: `pay-${who}` }] };
      })),
    };
    const definition = defineAgent(options);
    const a = definition.session();
    const b = definition.session();
    const waiting = (agent: BasicAgent) => firstValueFrom(agent.events$.pipe(filter((e) => e.type === 'ToolApprovalRequested')));
    const askedA = waiting(a);
    const askedB = waiting(b);
    const runA = a.run('from A');
    const runB = b.run('from B');
    await Promise.all([askedA, askedB]);
    expect(a.pendingApprovals().map((p) => p.toolCallId)).toEqual(['pay-A']);
    expect(b.pendingApprovals().map((p) => p.toolCallId)).toEqual(['pay-B']);
    expect(() => a.approve('pay-B', { approved: true })).toThrow(/no tool call with this id is waiting/);
    a.approve('pay-A', { approved: true });
    b.approve('pay-B', { approved: false, reason: 'not today' });
    await Promise.all([runA, runB]);
    const resultOf = (agent: BasicAgent) => JSON.stringify(agent.messages.find((m) => m.role === 'toolResult'));
    expect(resultOf(a)).toContain('moved 5');
    expect(resultOf(b)).toContain('not today');
  });
});

describe('what compositions hold on to', () => {
  // In a child process with --expose-gc: the hooks of configs alive after a full GC are the ones kept compositions hold.
  it('agentLoop keeps nothing; a definition keeps its four most recently used compositions, and of configs used once only the last', async () => {
    const report = (await fixtureReport('composition-retention', ['--expose-gc'])) as { plainAlive: number };
    // agentLoop keeps no composition: of twenty configs at most the last one's hook is still reachable (from the engine's own caches).
    expect(report.plainAlive).toBeLessThanOrEqual(1);
    expect(report).toEqual({ plainAlive: report.plainAlive, oneShotAlive: 1, reusedAlive: 4, newestKept: true });
  }, 90_000);
});
