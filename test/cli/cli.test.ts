import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { interruptHandler } from '../../src/cli/interrupt.js';
import type { AgentEvent } from '../../src/index.js';
import { Terminal, tmuxMissing } from './tmux.js';
import { describeNeeding } from '../support/skip.js';
import { cliBundle } from './cli-bundle.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let cli: string;
let dir: string;
let sessions: string;

beforeAll(async () => {
  cli = await cliBundle();
  dir = await mkdtemp(path.join(os.tmpdir(), 'phi-rx-cli-'));
  sessions = path.join(dir, 'sessions');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The shell command that runs the CLI (its bundle of src/) with no model keys in its environment. */
function command(args: string[], sessionDir = sessions): string {
  return `env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u GEMINI_API_KEY PHI_RX_SESSIONS=${quote(sessionDir)} ${quote(process.execPath)} ${quote(cli)} ${args.map(quote).join(' ')}`;
}

/** The CLI without a terminal (pipes): for --json, sessions and replay. */
function runPiped(args: string[], sessionDir = sessions): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PHI_RX_SESSIONS: sessionDir };
  delete env['ANTHROPIC_API_KEY'];
  delete env['OPENAI_API_KEY'];
  delete env['GEMINI_API_KEY'];
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd: repoRoot, env }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

async function script(name: string, turns: unknown[]): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, JSON.stringify(turns));
  return file;
}

describeNeeding(tmuxMissing)('phi-rx run in a terminal (tmux)', () => {
  let term: Terminal | undefined;
  afterEach(() => {
    term?.close();
    term = undefined;
  });

  it('with no key runs the scripted demo and says so: streamed text, a live tool call, usage; exit 0', async () => {
    term = new Terminal(command(['run', 'count these five words please']), repoRoot);
    const live = await term.waitFor((s) => /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] count_words\(.*\) — counted \d of 5 words/.test(s), 'the spinner with progress');
    expect(live).toContain('No API key found');
    expect(await term.exited()).toBe(0);
    const screen = term.screen();
    expect(screen).toContain('No model key, so this is the scripted demo.');
    expect(screen).toMatch(/✓ count_words\(\{"text":"count these five words please"\}\) \d+ ms/);
    expect(screen).toContain('Your prompt has 5 words.');
    expect(screen).toContain('● stop · 2 turns · 100 in / 34 out tokens');
    expect(screen).not.toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/); // the spinner line is gone
  });

  it('the first Ctrl-C aborts the run gracefully: it ends with its summary; exit 130', async () => {
    const slow = await script('slow.json', [{ text: 'one two three four five six seven eight nine ten eleven twelve', chunkDelay: 150 }]);
    term = new Terminal(command(['run', '--script', slow, 'talk slowly']), repoRoot);
    await term.waitFor((s) => s.includes('one two'), 'streamed text');
    term.press('C-c');
    expect(await term.exited()).toBe(130);
    const screen = term.screen();
    expect(screen).toContain('Aborting the run… (Ctrl-C again to exit now)');
    expect(screen).toMatch(/■ aborted · 1 turn · 0 in \/ 0 out tokens/);
    expect(screen).not.toContain('twelve');
    expect(screen).toMatch(/session \S+ saved in /);
  });

  it('a second Ctrl-C exits at once while the aborted run is still shutting down', async () => {
    // The config's MCP server ignores SIGINT, SIGTERM and the end of its stdin: after the abort,
    // closing it takes about 4 s (stdin, then SIGTERM, then SIGKILL). The second Ctrl-C does not wait.
    const config = path.join(dir, 'stubborn.toml');
    const server = path.join(repoRoot, 'test/cli/fixtures/stubborn-server.ts');
    await writeFile(
      config,
      `[model]\nprovider = "scripted"\nid = "demo"\n\n[mcpServers.slow]\ncommand = ${JSON.stringify(process.execPath)}\nargs = ["--import", "tsx", ${JSON.stringify(server)}]\ncwd = ${JSON.stringify(repoRoot)}\n`,
    );
    const turns = await script('stubborn.json', [{ toolCalls: [{ name: 'slow__wait' }] }, { text: 'never' }]);
    term = new Terminal(command(['run', '--config', config, '--script', turns, 'run it']), repoRoot);
    await term.waitFor((s) => /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] slow__wait\(/.test(s), 'the MCP tool running');
    term.press('C-c');
    await term.waitFor((s) => s.includes('■ aborted'), 'the aborted run’s summary');
    expect(term.exitStatus()).toBeUndefined(); // still closing the MCP server
    term.press('C-c');
    expect(await term.exited(3_000)).toBe(130);
    const screen = term.screen();
    expect(screen).toContain('Exiting.');
    expect(screen).not.toMatch(/session \S+ saved/); // it did not wait for the rest of the shutdown
  });

  it('a failed run shows the error and exits 1', async () => {
    const failing = await script('fail.json', [{ error: { kind: 'auth', message: 'the key was refused' } }]);
    term = new Terminal(command(['run', '--script', failing, 'hello']), repoRoot);
    expect(await term.exited()).toBe(1);
    const screen = term.screen();
    expect(screen).toContain('✗ auth: the key was refused');
    expect(screen).toMatch(/✗ error · 1 turn/);
  });

  it('a usage error exits 2', async () => {
    term = new Terminal(command(['run']), repoRoot);
    expect(await term.exited()).toBe(2);
    expect(term.screen()).toContain('phi-rx: run needs a prompt');
  });
});

describe('Ctrl-C handling', () => {
  it('the first press aborts, the second exits', () => {
    const calls: string[] = [];
    const press = interruptHandler({ abort: () => calls.push('abort'), exit: () => calls.push('exit'), notice: (t) => calls.push(t) });
    press();
    expect(calls).toEqual(['Aborting the run… (Ctrl-C again to exit now)', 'abort']);
    press();
    expect(calls.slice(2)).toEqual(['Exiting.', 'exit']);
  });
});

describe('phi-rx without a terminal', () => {
  it('--json prints one event per line, AgentStart first and AgentEnd last', async () => {
    const own = path.join(dir, 'json-sessions');
    const { code, stdout, stderr } = await runPiped(['run', '--json', 'two words'], own);
    expect(code).toBe(0);
    const events = stdout.trim().split('\n').map((line) => JSON.parse(line) as AgentEvent);
    expect(events[0]!.type).toBe('AgentStart');
    expect(events.at(-1)).toMatchObject({ type: 'AgentEnd', stopReason: 'stop' });
    expect(events.some((e) => e.type === 'ToolExecutionEnd' && e.toolName === 'count_words')).toBe(true);
    expect(stderr).toContain('running on the scripted provider');
  }, 30_000);

  it('sessions lists what runs stored, and replay renders a stored session', async () => {
    const own = path.join(dir, 'listed');
    expect((await runPiped(['sessions'], own)).stdout).toContain(`No sessions in ${own}`);
    expect((await runPiped(['run', 'first prompt here'], own)).code).toBe(0);
    const listed = await runPiped(['sessions'], own);
    expect(listed.code).toBe(0);
    const [file] = await readdir(own);
    const id = file!.replace(/\.json$/, '');
    expect(listed.stdout).toMatch(new RegExp(`^${id}  \\S+  1 loop  stop  first prompt here$`, 'm'));
    expect(listed.stdout).toContain(`1 session in ${own}`);
    const replay = await runPiped(['replay', path.join(own, file!)], own);
    expect(replay.code).toBe(0);
    expect(replay.stdout).toContain('> first prompt here');
    expect(replay.stdout).toContain('Your prompt has 3 words.');
    expect(replay.stdout).toContain('● stop · 2 turns · 100 in / 34 out tokens');
  }, 30_000);

  it('replay of a file that is not a session names the file and fails', async () => {
    const bad = path.join(dir, 'bad-session.json');
    await writeFile(bad, JSON.stringify({ version: 1, sessionId: 's' }));
    const { code, stderr } = await runPiped(['replay', bad]);
    expect(code).toBe(1);
    expect(stderr).toContain(`phi-rx: ${bad}: not a phi-rx session`);
  }, 30_000);

  it('runs an agent from --config (scripted provider named in the file) and says so', async () => {
    const config = path.join(dir, 'agent.toml');
    await writeFile(config, '[model]\nprovider = "scripted"\nid = "demo"\n');
    const { code, stdout, stderr } = await runPiped(['run', '--config', config, '--no-save', 'a b c d'], path.join(dir, 'unused'));
    expect(code).toBe(0);
    expect(stderr).toContain('The config names the scripted provider');
    expect(stdout).toContain('Your prompt has 4 words.');
    const errored = await runPiped(['run', '--config', path.join(dir, 'missing.toml'), 'x']);
    expect(errored.code).toBe(1);
    expect(errored.stderr).toMatch(/missing\.toml: cannot read the file \(ENOENT\)/);
  }, 30_000);
});
