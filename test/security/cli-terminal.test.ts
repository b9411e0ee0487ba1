/**
 * The CLI never writes an escape sequence that came from the run to the terminal: a scripted model
 * whose text carries OSC 0 (window title), OSC 52 (clipboard), CSI (clear screen), their 8-bit C1
 * forms, BEL and CR, and a tool call named with them, rendered live, replayed from the saved
 * session and listed; with `--json` the same text comes out exact (parses back byte for byte).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/index.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HOSTILE = 'title\x1b]0;pwned-title\x07 clip\x1b]52;c;cHduZWQ=\x1b\\ clear\x1b[2J\x1b[H c1\x9b2J\x9d0;c1-title\x9c bell\x07 cr\rdone';
const TOOL = 'evil\x1b]0;tool-title\x07';
/** Anything a terminal acts on: C0 but \n and \t, DEL, C1. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

let dir: string;
let sessions: string;
let turns: string;

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PHI_RX_SESSIONS: sessions };
  for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY']) delete env[key];
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli/main.ts'), ...args], { cwd: repoRoot, env }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'phi-rx-cli-terminal-'));
  sessions = path.join(dir, 'sessions');
  turns = path.join(dir, 'turns.json');
  await writeFile(turns, JSON.stringify([{ text: HOSTILE, toolCalls: [{ name: TOOL, arguments: { q: HOSTILE } }] }, { text: `answer ${HOSTILE}` }]));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the CLI and terminal control sequences', () => {
  let saved: string;

  it('run: model text, the tool call and its error reach the terminal neutralised, visibly', async () => {
    const { code, stdout, stderr } = await cli(['run', '--script', turns, `prompt ${HOSTILE}`]);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(CONTROL);
    expect(stderr).not.toMatch(CONTROL);
    expect(stdout).toContain('title␛]0;pwned-title␇ clip␛]52;c;cHduZWQ=␛\\ clear␛[2J␛[H c1�2J�0;c1-title� bell␇ cr␍done');
    expect(stdout).toContain('evil␛]0;tool-title␇'); // the unknown tool's name, in its error line
    saved = path.join(sessions, (await readdir(sessions))[0]!);
  }, 30_000);

  it('run --json: the text comes out exact', async () => {
    const { code, stdout } = await cli(['run', '--json', '--no-save', '--script', turns, 'prompt']);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(CONTROL); // JSON escapes them, C1 included
    const events = stdout.trim().split('\n').map((line) => JSON.parse(line) as AgentEvent);
    const texts = events.flatMap((e) => (e.type === 'MessageEnd' && e.message.role === 'assistant' ? e.message.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])) : []));
    expect(texts).toEqual([HOSTILE, `answer ${HOSTILE}`]);
  }, 30_000);

  it('replay of the saved session: neutralised; with --json exact', async () => {
    const shown = await cli(['replay', saved]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toMatch(CONTROL);
    expect(shown.stdout).toContain(`> prompt title␛]0;pwned-title␇`);
    expect(shown.stdout).toContain('answer title␛]0;pwned-title␇');
    const json = await cli(['replay', saved, '--json']);
    expect(json.stdout).not.toMatch(CONTROL);
    expect(json.stdout.trim().split('\n').map((line) => JSON.parse(line) as AgentEvent).some((e) => e.type === 'MessageEnd' && JSON.stringify(e).includes(JSON.stringify(`answer ${HOSTILE}`)))).toBe(true);
  }, 30_000);

  it('sessions: the listed prompt is neutralised', async () => {
    const { code, stdout } = await cli(['sessions']);
    expect(code).toBe(0);
    expect(stdout).not.toMatch(CONTROL);
    expect(stdout).toContain('prompt title␛]0;pwned-title␇');
  }, 30_000);
});

const haveTmux = spawnSync('tmux', ['-V']).status === 0;

describe.skipIf(!haveTmux)('the CLI in a real terminal (tmux)', () => {
  it('the run cannot set the pane title, fill the clipboard or clear the screen', async () => {
    const socket = `phi-rx-cli-terminal-${process.pid}`;
    const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    const conf = path.join(dir, 'tmux.conf');
    // set-clipboard on: tmux keeps what an application writes with OSC 52 as a paste buffer.
    await writeFile(conf, 'set -g remain-on-exit on\nset -g set-clipboard on\nset -g history-limit 5000\n');
    const env = `env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY -u GEMINI_API_KEY PHI_RX_SESSIONS='${sessions}'`;
    const command = `${env} '${process.execPath}' --import tsx '${path.join(repoRoot, 'src/cli/main.ts')}' run --no-save --script '${turns}' hello; echo "[exit $?]"`;
    try {
      tmux('-f', conf, 'new-session', '-d', '-s', 'main', '-x', '200', '-y', '50', '-c', repoRoot, 'bash', '-c', command);
      const until = Date.now() + 30_000;
      let screen = '';
      while (!/\[exit \d+\]/.test((screen = tmux('capture-pane', '-p', '-S', '-', '-t', 'main'))) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      expect(screen).toContain('[exit 0]');
      expect(tmux('display', '-p', '-t', 'main', '#{pane_title}')).not.toMatch(/pwned|c1-title|tool-title/);
      expect(tmux('list-buffers')).toBe('');
      expect(screen).toContain('Running on the scripted provider'); // written before the CSI 2J: not cleared
      expect(screen).toContain('title␛]0;pwned-title␇');
    } finally {
      spawnSync('tmux', ['-L', socket, 'kill-server']);
    }
  }, 40_000);
});
