/**
 * Bad usage exits 2 with the problem and the usage text on stderr, whatever the mistake: an unknown
 * option, an option without its value, an option the command does not take, a missing or extra
 * argument, an unknown command.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/cli.js';
import type { Io } from '../../src/cli/commands.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The CLI in this process, its output captured. */
async function inProcess(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: Io = {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    onInterrupt: () => undefined,
    exit: () => undefined,
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

/** The CLI as the binary runs it. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PHI_RX_SESSIONS: path.join(repoRoot, '.tmp', 'cli-usage-never-written') };
  for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY']) delete env[key];
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli/main.ts'), ...args], { cwd: repoRoot, env }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const badUsage: Array<[string[], RegExp]> = [
  [['run', '--frobnicate', 'hello'], /Unknown option '--frobnicate'/],
  [['run', '--config'], /Option '-c, --config <value>' argument missing/],
  [['run'], /run needs a prompt/],
  [['replay'], /replay needs one session file/],
  [['replay', 'a.json', '--config', 'x.toml'], /replay does not take --config/],
  [['sessions', '--no-save'], /sessions does not take --no-save/],
  [['sessions', 'extra'], /sessions takes no arguments \(got "extra"\)/],
  [['frobnicate'], /unknown command "frobnicate"/],
  [['--frobnicate'], /unknown command "--frobnicate"/],
  [[], /no command/],
];

describe('phi-rx bad usage', () => {
  it('exits 2 and says what was wrong, then the usage', async () => {
    const results = await Promise.all(badUsage.map(([args]) => inProcess(args)));
    results.forEach((result, i) => {
      const [args, problem] = badUsage[i]!;
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(problem);
      expect(result.stderr).toContain('Usage:');
      expect(result.stdout).toBe('');
    });
  });

  it('the binary exits 2 on phi-rx run --frobnicate', async () => {
    const { code, stderr } = await cli(['run', '--frobnicate', 'hello']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^phi-rx: Unknown option '--frobnicate'/);
  }, 30_000);

  it('--help still exits 0 with the usage on stdout', async () => {
    const { code, stdout } = await inProcess(['run', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage:');
  });
});
