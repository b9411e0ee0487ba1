import { describe, expect, it } from 'vitest';
import { lastValueFrom, Observable, of, toArray } from 'rxjs';
import { defaultProviderRegistry, lazyProvider, ProviderRegistry } from '../../src/providers/registry.js';
import { isProviderError } from '../../src/types/errors.js';
import type { ModelConfig, Provider, StreamEvent, StreamRequest } from '../../src/types/provider.js';
import { emptyAssistant } from '../../src/types/message.js';
import { packagesLoadedBySteps, srcModule } from '../support/loaded-packages.js';

const model: ModelConfig = { id: 'm', api: 'anthropic-messages', provider: 'p' };
const request: StreamRequest = {
  model,
  systemPrompt: '',
  messages: [],
  tools: [],
  thinkingLevel: 'off',
  cacheConfig: { enabled: false, strategy: { kind: 'auto' } },
};
const done: StreamEvent = { type: 'done', message: emptyAssistant('m', 'p', 0) };

describe('lazyProvider', () => {
  it('is cold: nothing is loaded until a stream is subscribed, then once for every later call', async () => {
    let loads = 0;
    const real: Provider = () => of(done);
    const provider = lazyProvider('Test', async () => (loads++, real));
    const first = provider(request, {});
    const second = provider(request, {});
    expect(loads).toBe(0);
    expect(await lastValueFrom(first.pipe(toArray()))).toEqual([done]);
    expect(await lastValueFrom(second.pipe(toArray()))).toEqual([done]);
    await lastValueFrom(provider(request, {}).pipe(toArray()));
    expect(loads).toBe(1);
  });

  it('fails a stream whose module cannot be loaded with a ProviderError naming the provider, and tries again on the next call', async () => {
    let loads = 0;
    const provider = lazyProvider('Flaky', async () => {
      loads++;
      if (loads === 1) throw new Error('Cannot find module');
      return () => of(done);
    });
    const error = await lastValueFrom(provider(request, {})).catch((e: unknown) => e);
    expect(isProviderError(error)).toBe(true);
    expect((error as Error).message).toBe('Could not load the Flaky provider: Cannot find module');
    expect(await lastValueFrom(provider(request, {}).pipe(toArray()))).toEqual([done]);
    expect(loads).toBe(2);
  });

  it('unsubscribing before the module is loaded starts no stream', async () => {
    let started = false;
    const provider = lazyProvider('Test', async () => () => new Observable<StreamEvent>(() => void (started = true)));
    provider(request, {}).subscribe().unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(started).toBe(false);
  });
});

describe('defaultProviderRegistry', () => {
  it('has every built-in wire protocol', () => {
    const registry = defaultProviderRegistry();
    for (const api of ['anthropic-messages', 'openai-completions', 'azure-openai', 'openai-responses', 'google-generative-ai', 'google-vertex', 'bedrock-converse-stream'] as const) {
      expect(registry.has(api)).toBe(true);
    }
    expect(new ProviderRegistry().has('anthropic-messages')).toBe(false);
  });
});

describe('loading phi-rx', () => {
  it('loads undici only when a built-in provider first runs, not on import nor for a run with config.provider', async () => {
    const packagesBefore = await packagesLoadedBySteps(`
const phi = await import(${srcModule('index.ts')});
const { scriptedProvider } = await import(${srcModule('testing/scripted-provider.ts')});
step('imported');
const run = (config: object) => new Promise((resolve) => phi.agentLoop([phi.userMessage('hi')], { systemPrompt: '', messages: [], tools: [] }, config).subscribe({ complete: resolve }));
await run({ model: phi.anthropic('claude-sonnet-4'), provider: scriptedProvider([{ text: 'ok' }]) });
step('config.provider');
await run({ model: phi.anthropic('claude-sonnet-4', { baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }), retry: false });
step('registry');
`);
    expect(packagesBefore('imported')).not.toContain('undici');
    expect(packagesBefore('config.provider')).not.toContain('undici');
    expect(packagesBefore('registry')).toContain('undici');
  }, 30_000);
});
