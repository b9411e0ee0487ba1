import { describe, expect, it } from 'vitest';
import { AgentError, agentLoop, BasicAgent, type AgentLoopConfig, type ModelConfig, userMessage } from '../../src/index.js';
import { ProviderError } from '../../src/types/errors.js';
import { scriptedProvider, type ScriptStep } from '../../src/testing/index.js';
import type { AssistantMessage } from '../../src/types/message.js';
import type { AgentEvent } from '../../src/types/events.js';
import { addTool, agentEnd, context, events, model, trace } from '../agent/helpers.js';

const backup: ModelConfig = { id: 'backup-model', name: 'Backup', api: 'scripted', provider: 'backup' };
const third: ModelConfig = { id: 'third-model', api: 'scripted', provider: 'third' };

function chain(primaryScript: ScriptStep[], backupScript: ScriptStep[], extra: Partial<AgentLoopConfig> = {}) {
  const primary = scriptedProvider(primaryScript);
  const fallback = scriptedProvider(backupScript);
  const config: AgentLoopConfig = { model, provider: primary, models: [model, { model: backup, provider: fallback }], retry: false, ...extra };
  return { primary, fallback, config };
}

const lastAssistant = (all: AgentEvent[]): AssistantMessage =>
  agentEnd(all).messages.filter((m): m is AssistantMessage => m.role === 'assistant').at(-1)!;

describe('agentLoop with a models chain', () => {
  it('hands the turn to the next model once the retries are spent, announced by ModelFallback before its message', async () => {
    const { primary, fallback, config } = chain(
      [{ error: ProviderError.network('HTTP 503') }, { error: ProviderError.network('HTTP 503') }],
      [{ text: 'from the backup' }],
      { retry: { maxRetries: 1, initialDelayMs: 1, jitter: 0 } },
    );
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), config));
    expect(all.filter((e) => e.type !== 'MessageUpdate').map((e) => (e.type === 'ModelFallback' ? `ModelFallback:${e.reason}` : e.type))).toEqual([
      'AgentStart', 'TurnStart', 'MessageStart', 'MessageEnd', 'RetryScheduled', 'ModelFallback:retriesExhausted',
      'MessageStart', 'MessageEnd', 'TurnEnd', 'AgentEnd',
    ]);
    expect(all.find((e) => e.type === 'ModelFallback')).toMatchObject({
      loopId: 'session-1.scripted.1', turnIndex: 0, from: { provider: 'scripted', id: 'scripted-model' }, to: { provider: 'backup', id: 'backup-model' },
      errorMessage: 'network: HTTP 503',
    });
    expect(primary.requests).toHaveLength(2);
    expect(fallback.requests[0]!.model).toBe(backup);
    expect(lastAssistant(all)).toMatchObject({ stopReason: 'stop', provider: 'backup', model: 'backup-model' });
    expect(agentEnd(all).stopReason).toBe('stop');
  });

  it('stays on the fallback for the rest of the run; a new run starts with the primary', async () => {
    const { primary, fallback, config } = chain(
      [{ error: ProviderError.rateLimited('slow down') }, { text: 'primary is back' }],
      [{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }, { text: '3' }],
    );
    const first = await trace(agentLoop([userMessage('add', 0)], context([addTool]), config));
    expect(first.filter((e) => e.startsWith('ModelFallback') || e.startsWith('TurnStart'))).toEqual([
      'TurnStart:0', 'ModelFallback:scripted-model>backup-model', 'TurnStart:1',
    ]);
    expect(primary.requests).toHaveLength(1);
    expect(fallback.requests).toHaveLength(2); // turn 1 went straight to the fallback
    const second = await events(agentLoop([userMessage('again', 0)], context([]), config));
    expect(primary.requests).toHaveLength(2);
    expect(second.some((e) => e.type === 'ModelFallback')).toBe(false);
    expect(lastAssistant(second).provider).toBe('scripted');
  });

  it('falls back from an overflow after the one compaction retry, or at once without compaction', async () => {
    const history = Array.from({ length: 12 }, (_, i) => userMessage(`old ${i} ${'z'.repeat(200)}`, 0));
    const overflow = (): ProviderError => ProviderError.contextOverflow('prompt is too long');
    const compacting = chain([{ error: overflow() }, { error: overflow() }], [{ text: 'bigger window' }], { contextConfig: { maxContextTokens: 100_000 } });
    const all = await trace(agentLoop([userMessage('go', 0)], context([], history), compacting.config));
    expect(all.filter((e) => ['CompactionStart', 'ModelFallback:scripted-model>backup-model'].includes(e))).toEqual([
      'CompactionStart', 'ModelFallback:scripted-model>backup-model',
    ]);
    expect(compacting.primary.requests).toHaveLength(2);
    // The fallback gets the compacted context the primary's retry got.
    expect(compacting.fallback.requests[0]!.messages).toEqual(compacting.primary.requests[1]!.messages);

    const plain = chain([{ error: overflow() }], [{ text: 'bigger window' }]);
    const direct = await events(agentLoop([userMessage('go', 0)], context([], history), plain.config));
    expect(direct.find((e) => e.type === 'ModelFallback')).toMatchObject({ reason: 'contextOverflow' });
    expect(direct.some((e) => e.type === 'CompactionStart')).toBe(false);
    expect(lastAssistant(direct).stopReason).toBe('stop');

    // An overflow after partial output is not compacted and retried: it falls back at once, also with compaction on.
    const streamed = chain([{ text: 'Half an answer', errorAfter: 2, error: overflow() }], [{ text: 'bigger window' }], { contextConfig: { maxContextTokens: 100_000 } });
    const late = await events(agentLoop([userMessage('go', 0)], context([], history), streamed.config));
    expect(late.find((e) => e.type === 'ModelFallback')).toMatchObject({ reason: 'contextOverflow' });
    expect(late.some((e) => e.type === 'CompactionStart')).toBe(false);
    expect(lastAssistant(late)).toMatchObject({ stopReason: 'stop', provider: 'backup' });
  });

  it('ends the turn in error naming each model\'s failure when every model fails', async () => {
    const last = scriptedProvider([{ error: new ProviderError('circuitOpen', 'Circuit open for third') }]);
    const { config } = chain([{ error: ProviderError.network('HTTP 502') }], [{ error: ProviderError.rateLimited('HTTP 429') }], {});
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), { ...config, models: [...config.models!, { model: third, provider: last }] }));
    expect(all.filter((e) => e.type === 'ModelFallback').map((e) => (e as { reason: string }).reason)).toEqual(['retriesExhausted', 'retriesExhausted']);
    expect(lastAssistant(all)).toMatchObject({
      stopReason: 'error',
      // The error message is the last model's: the one that was asked last, not the configured primary.
      provider: 'third',
      model: 'third-model',
      errorMessage:
        'circuitOpen: Every model that took this turn failed: scripted/scripted-model: network: HTTP 502; backup/backup-model: rateLimited: HTTP 429; ' +
        'third/third-model: circuitOpen: Circuit open for third',
    });
    expect(agentEnd(all).stopReason).toBe('error');
  });

  it('does not fall back on an error any model would meet (auth, bad request)', async () => {
    const { fallback, config } = chain([{ error: new ProviderError('auth', 'invalid x-api-key', { status: 401 }) }], [{ text: 'never' }]);
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), config));
    expect(all.some((e) => e.type === 'ModelFallback')).toBe(false);
    expect(fallback.requests).toHaveLength(0);
    expect(lastAssistant(all)).toMatchObject({ stopReason: 'error', errorMessage: 'auth: invalid x-api-key' });
  });

  it('resolves a plain ModelConfig entry through the registry, as `model` is', async () => {
    const { config } = chain([{ error: ProviderError.network('down') }], []);
    const all = await events(agentLoop([userMessage('hi', 0)], context([]), { ...config, models: [model, { id: 'x', api: 'openai-completions', provider: 'nowhere', apiKey: 'k', baseUrl: 'http://127.0.0.1:9' }] }));
    expect(all.find((e) => e.type === 'ModelFallback')).toMatchObject({ to: { provider: 'nowhere', id: 'x' } });
    expect(lastAssistant(all).stopReason).toBe('error');
  });

  it('prices each turn for the cost limit by the model that answered it', async () => {
    const pricey: ModelConfig = { ...backup, cost: { input: 1_000, output: 1_000 } }; // $ per million tokens
    const run = (fallbackModel: ModelConfig) => {
      const primary = scriptedProvider([{ error: ProviderError.network('down') }]);
      const fallback = scriptedProvider([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }], usage: { input: 1_000, output: 0 } }, { text: '3' }]);
      return events(agentLoop([userMessage('add', 0)], context([addTool]), {
        model, provider: primary, models: [model, { model: fallbackModel, provider: fallback }], retry: false, limits: { maxCost: 0.5 },
      }));
    };
    // $1 spent on the fallback's first turn: the limit stops the run before the second.
    const limited = await run(pricey);
    expect(lastAssistant(limited).content).toEqual([{ type: 'toolCall', id: expect.any(String), name: 'add', arguments: { a: 1, b: 2 } }]);
    expect(agentEnd(limited).stopReason).toBe('guardRail');
    const free = await run(backup);
    expect(agentEnd(free).stopReason).toBe('stop');
  });

  it('rejects a bad chain with InvalidConfig naming the entry, before any event', async () => {
    const cases: Array<[unknown, RegExp]> = [
      ['gpt', /^config\.models: expected an array/],
      [[], /^config\.models: expected at least one model/],
      [[model, 42], /^config\.models\[1\]: expected a ModelConfig/],
      [[model, { model: backup }], /^config\.models\[1\]\.provider: expected a Provider function, got undefined/],
      [[model, { id: 'x', api: 'scripted' }], /^config\.models\[1\]\.provider: expected a non-empty string/],
      [[backup, model], /^config\.models\[0\]: the primary must be config\.model \(scripted\/scripted-model/],
      [[{ model, provider: scriptedProvider([]) }], /^config\.models\[0\]\.provider: differs from config\.provider/],
    ];
    for (const [models, message] of cases) {
      const seen: AgentEvent[] = [];
      const error = await new Promise<unknown>((resolve) =>
        agentLoop('hi', context([]), { model, provider: scriptedProvider([]), models: models as never }).subscribe({ next: (e) => seen.push(e), error: resolve }),
      );
      expect(error).toBeInstanceOf(AgentError);
      expect((error as AgentError).code).toBe('InvalidConfig');
      expect((error as Error).message).toMatch(message);
      expect(seen).toEqual([]);
    }
  });
});

describe('BasicAgent with models', () => {
  it('passes the chain to every run: a fallback serves the prompt, the next prompt starts with the primary', async () => {
    const primary = scriptedProvider([{ error: ProviderError.network('down') }, { text: 'primary answers' }]);
    const fallback = scriptedProvider([{ text: 'backup answers' }]);
    const agent = new BasicAgent({ model, provider: primary, models: [model, { model: backup, provider: fallback }], retry: false });
    const first = await events(agent.prompt('one'));
    expect(first.find((e) => e.type === 'ModelFallback')).toMatchObject({ to: { id: 'backup-model' } });
    const second = await events(agent.prompt('two'));
    expect(second.some((e) => e.type === 'ModelFallback')).toBe(false);
    expect(agent.messages.filter((m) => m.role === 'assistant').map((m) => (m as AssistantMessage).provider)).toEqual(['backup', 'scripted']);
  });
});
