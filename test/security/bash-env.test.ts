import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_BASH_ENV, bashTool } from 'phi-rx/tools';
import { runTool, tempDir, textOf } from '../tools/helpers.js';

/** Planted in this process's environment: a command the model runs must see none of them. */
const PLANTED: Record<string, string> = {
  ANTHROPIC_API_KEY: 'sk-ant-planted-1111',
  OPENAI_API_KEY: 'sk-openai-planted-2222',
  AWS_SECRET_ACCESS_KEY: 'aws-planted-3333',
  PHI_RX_PLANTED_SECRET: 'planted-4444',
};

let dir: string;
let remove: () => Promise<void>;
beforeEach(async () => {
  ({ dir, remove } = await tempDir());
  Object.assign(process.env, PLANTED);
});
afterEach(async () => {
  for (const name of Object.keys(PLANTED)) delete process.env[name];
  await remove();
});

/** The environment a command sees, as NAME=value lines. */
async function commandEnv(tool: ReturnType<typeof bashTool>, extra?: Record<string, string>): Promise<Map<string, string>> {
  const run = await runTool(tool, { command: 'env', ...(extra ? { env: extra } : {}) });
  const lines = textOf(run.result).split('\n');
  return new Map(lines.filter((l) => /^\w+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

describe('the bash tool environment', () => {
  it('inherits only the allow-listed variables: no provider key, no other secret', async () => {
    const env = await commandEnv(bashTool({ cwd: dir }));
    for (const [name, value] of Object.entries(PLANTED)) {
      expect(env.has(name), name).toBe(false);
      expect([...env.values()].join('\n')).not.toContain(value);
    }
    expect(env.get('PATH')).toBe(process.env.PATH);
    const inherited = [...env.keys()].filter((name) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(name));
    expect(inherited.every((name) => DEFAULT_BASH_ENV.includes(name)), inherited.join(' ')).toBe(true);
  });

  it('adds what the caller gives with env, and the variables named in inheritEnv', async () => {
    const env = await commandEnv(bashTool({ cwd: dir, env: { PROJECT: 'demo' }, inheritEnv: ['PHI_RX_PLANTED_SECRET'] }));
    expect(env.get('PROJECT')).toBe('demo');
    expect(env.get('PHI_RX_PLANTED_SECRET')).toBe('planted-4444');
    expect(env.has('ANTHROPIC_API_KEY')).toBe(false);
  });

  it("adds the call's own env, which cannot name a loader variable", async () => {
    const env = await commandEnv(bashTool({ cwd: dir }), { GREETING: 'hi' });
    expect(env.get('GREETING')).toBe('hi');
    expect(env.has('OPENAI_API_KEY')).toBe(false);
  });
});
