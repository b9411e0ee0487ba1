import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { liveModel, main } from '../../examples/live.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NOTHING_TO_DO = 'examples/live.ts: set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY to run against a real API. Nothing to do.\n';

/** The environment of this process without any key that would make live.ts call a real API. */
function envWithoutKeys(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'PHI_RX_LIVE_MODEL']) delete env[name];
  return env;
}

describe('examples/live.ts', () => {
  it('with no key in the environment, says so and makes no call', async () => {
    let out = '';
    const end = await main({ env: {}, write: (s) => (out += s) });
    expect(end).toBeUndefined();
    expect(out).toBe(NOTHING_TO_DO);
  });

  it('run as a program with no key, prints its message and exits 0', () => {
    const child = spawnSync(process.execPath, ['--conditions=phi-rx-source', '--import', 'tsx', 'examples/live.ts'], {
      cwd: repoRoot,
      env: envWithoutKeys(),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.error).toBeUndefined();
    expect(child.stdout).toBe(NOTHING_TO_DO);
    expect(child.status).toBe(0);
  });

  it('picks the provider of the first key found: Anthropic, then OpenAI, then Gemini', () => {
    expect(liveModel({})).toBeUndefined();
    expect(liveModel({ GEMINI_API_KEY: 'g', OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' })).toMatchObject({ api: 'anthropic-messages', id: 'claude-haiku-4-5' });
    expect(liveModel({ GEMINI_API_KEY: 'g', OPENAI_API_KEY: 'o' })).toMatchObject({ api: 'openai-completions', id: 'gpt-4o-mini' });
    expect(liveModel({ GEMINI_API_KEY: 'g' })).toMatchObject({ api: 'google-generative-ai', id: 'gemini-2.5-flash' });
    expect(liveModel({ OPENAI_API_KEY: 'o', PHI_RX_LIVE_MODEL: 'gpt-4.1-nano' })).toMatchObject({ id: 'gpt-4.1-nano', maxTokens: 1024 });
    // Keys stay in the environment: the config carries none, so it can be logged.
    expect(liveModel({ ANTHROPIC_API_KEY: 'a' })?.apiKey).toBeUndefined();
  });
});
