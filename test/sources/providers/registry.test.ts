import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastValueFrom, Observable, of, toArray } from 'rxjs';
import { defaultProviderRegistry, lazyProvider, ProviderRegistry } from '../../../src/sources/providers/registry.js';
import { isProviderError } from '../../../src/types/errors.js';
import type { ModelConfig, Provider, StreamEvent, StreamRequest } from '../../../src/types/provider.js';
import { emptyAssistant } from '../../../src/types/message.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
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
  // A resolve hook in a child process lists the packages each step loads.
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'phi-rx-registry-'));
    await writeFile(
      path.join(dir, 'hook.mjs'),
      `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const found = /node_modules\\\\/((?:@[^/]+\\\\/)?[^/]+)/.exec(resolved.url);
  if (found && !['tsx', 'esbuild', 'get-tsconfig', 'resolve-pkg-maps'].includes(found[1])) process.stderr.write('package ' + found[1] + '\\\\n');
  return resolved;
}\`));
`,
    );
    const src = (file: string): string => JSON.stringify(pathToFileURL(path.join(repoRoot, 'src', file)).href);
    await writeFile(
      path.join(dir, 'steps.mts'),
      `const phi = await import(${src('index.ts')});
const { scriptedProvider } = await import(${src('testing/scripted-provider.ts')});
process.stderr.write('step imported\\n');
const run = (config) => new Promise((resolve) => phi.agentLoop([phi.userMessage('hi')], { systemPrompt: '', messages: [], tools: [] }, config).subscribe({ complete: resolve }));
await run({ model: phi.anthropic('claude-sonnet-4'), provider: scriptedProvider([{ text: 'ok' }]) });
process.stderr.write('step config.provider\\n');
await run({ model: phi.anthropic('claude-sonnet-4', { baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }), retry: false });
process.stderr.write('step registry\\n');
`,
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loads undici only when a built-in provider first runs, not on import nor for a run with config.provider', async () => {
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', path.join(dir, 'hook.mjs'), path.join(dir, 'steps.mts')], {
      cwd: repoRoot,
    });
    const lines = stderr.split('\n');
    const packagesBefore = (step: string): string[] => lines.slice(0, lines.indexOf(`step ${step}`)).filter((l) => l.startsWith('package ')).map((l) => l.slice(8));
    expect(lines).toContain('step registry');
    expect(packagesBefore('imported')).not.toContain('undici');
    expect(packagesBefore('config.provider')).not.toContain('undici');
    expect(packagesBefore('registry')).toContain('undici');
  }, 30_000);
});
