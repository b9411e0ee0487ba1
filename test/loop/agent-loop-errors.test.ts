import { describe, expect, it } from 'vitest';
import { NEVER, Observable } from 'rxjs';
import { agentLoop, ProviderError, textOf, userMessage, type AgentEvent, type AnyTool, type AssistantMessage } from '../../src/index.js';
import { addTool, agentEnd, config, context, events, run, testScheduler } from '../agent/helpers.js';

const lastAssistant = (all: AgentEvent[]): AssistantMessage =>
  agentEnd(all).messages.filter((m) => m.role === 'assistant').at(-1) as AssistantMessage;

describe('retryBackoff in the loop', () => {
  it('retries rateLimited after the server retry-after, network with backoff, and keeps one message lifecycle', () => {
    testScheduler().run(({ flush }) => {
      const all: AgentEvent[] = [];
      const cfg = config(
        [
          { error: ProviderError.rateLimited('slow down', 7_000) },
          { error: ProviderError.network('socket hang up') },
          { text: 'finally' },
        ],
        { retry: { maxRetries: 3, initialDelayMs: 1000, backoffMultiplier: 2, jitter: 0.2 }, random: () => 0.5 },
      );
      agentLoop([userMessage('hi', 0)], context([]), cfg).subscribe((e) => all.push(e));
      flush();
      const retries = all.filter((e) => e.type === 'RetryScheduled');
      expect(retries).toMatchObject([
        { attempt: 1, delayMs: 7000, errorKind: 'rateLimited', timestamp: 0 },
        { attempt: 2, delayMs: 2000, errorKind: 'network', timestamp: 7000 },
      ]);
      expect(all.filter((e) => e.type === 'MessageStart' && e.message.role === 'assistant')).toHaveLength(1);
      expect(agentEnd(all).timestamp).toBe(9000);
      expect(lastAssistant(all).stopReason).toBe('stop');
    });
  });

  it('does not retry auth errors; exhausted retries end in an error message with the cause, onError fires once', () => {
    testScheduler().run(({ flush }) => {
      const errors: string[] = [];
      const all: AgentEvent[] = [];
      const failing = Array.from({ length: 3 }, () => ({ error: ProviderError.network('ECONNRESET') }));
      agentLoop([userMessage('hi', 0)], context([]), config(failing, { retry: { maxRetries: 2, jitter: 0 }, hooks: { onError: (m) => void errors.push(m) } })).subscribe((e) => all.push(e));
      flush();
      expect(all.filter((e) => e.type === 'RetryScheduled').map((e) => (e as { delayMs: number }).delayMs)).toEqual([1000, 2000]);
      const message = lastAssistant(all);
      expect(message).toMatchObject({ stopReason: 'error', errorMessage: 'network: ECONNRESET' });
      expect(errors).toEqual(['network: ECONNRESET']);
      expect(agentEnd(all).stopReason).toBe('error');
      expect(all.filter((e) => e.type !== 'MessageUpdate').map((e) => e.type).slice(-4)).toEqual(['MessageStart', 'MessageEnd', 'TurnEnd', 'AgentEnd']);
    });
  });

  it('auth is not retried', async () => {
    const cfg = config([{ error: ProviderError.auth('invalid x-api-key') }, { text: 'never' }], { retry: { maxRetries: 3 } });
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), cfg));
    expect(cfg.provider.requests).toHaveLength(1);
    expect(lastAssistant(all).errorMessage).toBe('auth: invalid x-api-key');
  });

  it('skips follow-ups after an error exit', async () => {
    const { MessageQueue } = await import('../../src/index.js');
    const followUp = new MessageQueue();
    followUp.push(userMessage('later', 0));
    const all = await run([{ error: ProviderError.api('bad request') }], [], { followUp });
    expect(all.filter((e) => e.type === 'TurnStart')).toHaveLength(1);
    expect(followUp.size).toBe(1);
  });
});

describe('compaction', () => {
  const long = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n');

  it('compacts before the model call when over budget, with compaction events', async () => {
    const history = Array.from({ length: 30 }, (_, i) => userMessage(`message ${i} ${'y'.repeat(400)}`, 0));
    const cfg = config([{ text: 'ok' }], { contextConfig: { maxContextTokens: 2_000, systemPromptTokens: 0, keepFirst: 2, keepRecent: 4 } });
    const all = await events(agentLoop([userMessage('now', 0)], context([], history), cfg));
    const start = all.find((e) => e.type === 'CompactionStart');
    const end = all.find((e) => e.type === 'CompactionEnd') as Extract<AgentEvent, { type: 'CompactionEnd' }>;
    expect(start).toMatchObject({ reason: 'budget' });
    expect(end.tokensAfter).toBeLessThanOrEqual(2_000);
    expect(end.tokensBefore).toBeGreaterThan(2_000);
    // The request is what was compacted, and the compacted history still ends with the new prompt.
    const sent = cfg.provider.requests[0]!.messages;
    expect(end.tier).toBe(2); // old turns summarized to their first 200 characters was enough
    expect(textOf(sent[10] as never)).toMatch(/… \[summarized\]$/);
    expect(textOf(sent.at(-1) as never)).toBe('now');
    const order = all.map((e) => e.type);
    expect(order.indexOf('CompactionEnd')).toBeLessThan(order.indexOf('TurnEnd'));
  });

  it('tier 1 truncates long tool outputs', async () => {
    const big: AnyTool = { ...addTool, name: 'big', execute: () => long(400) };
    const cfg = config([{ toolCalls: [{ name: 'big', arguments: { a: 1, b: 1 } }] }, { text: 'ok' }], {
      contextConfig: { maxContextTokens: 3_000, systemPromptTokens: 0, toolOutputMaxLines: 20 },
    });
    const all = await events(agentLoop([userMessage('go', 0)], context([big]), cfg));
    expect(all.find((e) => e.type === 'CompactionEnd')).toMatchObject({ tier: 1 });
    const sentResult = cfg.provider.requests[1]!.messages.find((m) => m.role === 'toolResult')!;
    expect(textOf(sentResult as never)).toContain('lines truncated');
    // History keeps the full output: compaction rewrites what is sent, AgentEnd loses nothing.
    const kept = agentEnd(all).messages.find((m) => m.role === 'toolResult')!;
    expect(textOf(kept as never).split('\n')).toHaveLength(400);
  });

  it('a context overflow compacts once and retries the turn; a second overflow is an error', async () => {
    const history = Array.from({ length: 12 }, (_, i) => userMessage(`old ${i} ${'z'.repeat(200)}`, 0));
    const once = config([{ error: ProviderError.contextOverflow('prompt is too long: 250000 tokens > 200000 maximum') }, { text: 'fits now' }], {
      contextConfig: { maxContextTokens: 100_000 },
    });
    const ok = await events(agentLoop([userMessage('go', 0)], context([], history), once));
    expect(ok.find((e) => e.type === 'CompactionStart')).toMatchObject({ reason: 'overflow' });
    expect(once.provider.requests).toHaveLength(2);
    expect(once.provider.requests[1]!.messages.length).toBeLessThan(once.provider.requests[0]!.messages.length);
    expect(lastAssistant(ok).stopReason).toBe('stop');

    const twice = config([
      { error: ProviderError.contextOverflow('prompt is too long') },
      { error: ProviderError.contextOverflow('prompt is too long') },
      { text: 'never' },
    ], { contextConfig: { maxContextTokens: 100_000 } });
    const bad = await events(agentLoop([userMessage('go', 0)], context([], history), twice));
    expect(twice.provider.requests).toHaveLength(2);
    expect(lastAssistant(bad)).toMatchObject({ stopReason: 'error', errorMessage: 'contextOverflow: prompt is too long' });
  });

  it('without a context config an overflow is an error turn, not a retry', async () => {
    const cfg = config([{ error: ProviderError.contextOverflow('prompt is too long') }, { text: 'never' }]);
    const all = await events(agentLoop([userMessage('go', 0)], context([]), cfg));
    expect(cfg.provider.requests).toHaveLength(1);
    expect(lastAssistant(all).stopReason).toBe('error');
    expect(all.some((e) => e.type === 'CompactionStart')).toBe(false);
  });
});

describe('truncation guard', () => {
  it('never executes tool calls of a message that stopped for length', async () => {
    let executed = 0;
    const tool: AnyTool = { ...addTool, execute: () => (executed++, '2') };
    const all = await run([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }], stopReason: 'length' }, { text: 'retrying' }], [tool]);
    expect(executed).toBe(0);
    const result = agentEnd(all).messages.find((m) => m.role === 'toolResult')!;
    expect(result).toMatchObject({ isError: true });
    expect(textOf(result as never)).toMatch(/cut off \(stop reason: length\)/);
  });
});

describe('abort vs unsubscribe (DESIGN §3)', () => {
  it('abort mid-stream: the stream stops, the partial is kept as aborted, TurnEnd and AgentEnd follow', () => {
    testScheduler().run(({ cold, flush }) => {
      const controller = new AbortController();
      const all: AgentEvent[] = [];
      let providerSaw: AbortSignal | undefined;
      const cfg = config([(request) => ({ text: 'a long answer that will be cut', chunkDelay: 10 })], { signal: controller.signal });
      const provider = cfg.provider;
      cfg.provider = Object.assign((req: Parameters<typeof provider>[0], opts: Parameters<typeof provider>[1]) => ((providerSaw = opts.signal), provider(req, opts)), { requests: provider.requests, remaining: 0 });
      agentLoop([userMessage('hi', 0)], context([]), cfg).subscribe((e) => all.push(e));
      cold('25ms a').subscribe(() => controller.abort());
      flush();
      expect(providerSaw).toBe(controller.signal);
      const message = lastAssistant(all);
      expect(message).toMatchObject({ stopReason: 'aborted' });
      expect(textOf(message)).toBe('a long a'); // two deltas arrived before 25ms
      expect(all.map((e) => e.type).filter((t) => t !== 'MessageUpdate').slice(-3)).toEqual(['MessageEnd', 'TurnEnd', 'AgentEnd']);
      expect(agentEnd(all)).toMatchObject({ stopReason: 'aborted', timestamp: 25 });
    });
  });

  it('abort during tools: every started call gets a result, tools see the abort, no further turns', () => {
    testScheduler().run(({ cold, flush }) => {
      const controller = new AbortController();
      const signals: AbortSignal[] = [];
      const slow: AnyTool = { ...addTool, name: 'slow', execute: (_a, ctx) => (signals.push(ctx.signal), cold('100ms (r|)', { r: 'done' })) };
      const all: AgentEvent[] = [];
      const cfg = config([{ toolCalls: [{ name: 'slow', arguments: { a: 1, b: 1 } }, { name: 'slow', arguments: { a: 2, b: 2 } }] }, { text: 'never' }], { signal: controller.signal });
      agentLoop([userMessage('hi', 0)], context([slow]), cfg).subscribe((e) => all.push(e));
      cold('30ms a').subscribe(() => controller.abort());
      flush();
      expect(signals.map((s) => s.aborted)).toEqual([true, true]);
      const results = agentEnd(all).messages.filter((m) => m.role === 'toolResult');
      expect(results.map((r) => textOf(r as never))).toEqual(['Tool execution aborted.', 'Tool execution aborted.']);
      expect(all.filter((e) => e.type === 'TurnStart')).toHaveLength(1);
      expect(cfg.provider.requests).toHaveLength(1);
      expect(agentEnd(all)).toMatchObject({ stopReason: 'aborted', timestamp: 30 });
    });
  });

  it('unsubscribe: no more events, the provider request and the running tool are released, no timers left', () => {
    testScheduler().run(({ cold, flush }) => {
      let toolTornDown = false;
      let toolSignal: AbortSignal | undefined;
      const hanging: AnyTool = {
        ...addTool,
        name: 'hang',
        execute: (_a, ctx) => {
          toolSignal = ctx.signal;
          return new Observable(() => () => (toolTornDown = true));
        },
      };
      const all: AgentEvent[] = [];
      const cfg = config([{ toolCalls: [{ name: 'hang', arguments: { a: 1, b: 1 } }], delay: 5 }], { toolTimeoutMs: 60_000 });
      const sub = agentLoop([userMessage('hi', 0)], context([hanging]), cfg).subscribe((e) => all.push(e));
      cold('20ms a').subscribe(() => sub.unsubscribe());
      flush();
      const count = all.length;
      expect(all.at(-1)!.type).toBe('ToolExecutionStart');
      expect(toolTornDown).toBe(true);
      expect(toolSignal?.aborted).toBe(true);
      flush(); // nothing scheduled remains: the 60s tool timeout timer was released
      expect(all.length).toBe(count);
    });
  });

  it('unsubscribing during a stalled provider stream tears it down', () => {
    let tornDown = false;
    const cfg = config([]);
    cfg.provider = Object.assign(() => new Observable<never>(() => () => (tornDown = true)), { requests: [], remaining: 0 });
    const sub = agentLoop([userMessage('hi', 0)], context([]), cfg).subscribe();
    sub.unsubscribe();
    expect(tornDown).toBe(true);
  });
});

void NEVER;
