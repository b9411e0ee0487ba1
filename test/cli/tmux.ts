import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** tmux is a Debian package CI installs; without it the terminal tests skip with a message. */
export const haveTmux = spawnSync('tmux', ['-V']).status === 0;
/** Why the terminal tests cannot run here (printed by the group that skips), or undefined. */
export const tmuxMissing = haveTmux ? undefined : 'tmux not found (apt-get install tmux)';

let count = 0;

/**
 * A command in a real pseudo-terminal: a tmux server of its own (a private socket) and one pane,
 * where a shell runs the command and then prints its exit status as `[exit N]`.
 */
export class Terminal {
  private readonly socket = `phi-rx-test-${process.pid}-${++count}`;

  constructor(command: string, cwd: string, size = { columns: 100, rows: 40 }) {
    const conf = path.join(os.tmpdir(), `${this.socket}.conf`);
    writeFileSync(conf, 'set -g remain-on-exit on\nset -g history-limit 5000\n');
    const shell = `${command}; echo "[exit $?]"`;
    this.tmux('-f', conf, 'new-session', '-d', '-s', 'main', '-x', String(size.columns), '-y', String(size.rows), '-c', cwd, 'bash', '-c', shell);
  }

  /** What the screen shows now, with what scrolled off it (trailing blank lines dropped). */
  screen(): string {
    return this.tmux('capture-pane', '-p', '-S', '-', '-t', 'main').replace(/\n+$/, '');
  }

  /** Keys as tmux names them: `C-c`, `Enter`, or literal text. */
  press(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'main', ...keys);
  }

  /** The command's exit status once it has exited, else undefined. */
  exitStatus(): number | undefined {
    const found = /\[exit (\d+)\]$/m.exec(this.screen());
    return found ? Number(found[1]) : undefined;
  }

  /** Polls the screen until `test` holds (the process runs in real time), or fails showing the screen. */
  async waitFor(test: (screen: string) => boolean, what: string, timeoutMs = 15_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (test(screen)) return screen;
      if (Date.now() > until) throw new Error(`Timed out waiting for ${what}. The screen:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async exited(timeoutMs = 15_000): Promise<number> {
    await this.waitFor(() => this.exitStatus() !== undefined, 'the command to exit', timeoutMs);
    return this.exitStatus()!;
  }

  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }
}
