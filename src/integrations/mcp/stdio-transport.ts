import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { asyncScheduler, firstValueFrom, fromEvent, map, race, timer } from 'rxjs';
import type { SchedulerLike } from 'rxjs';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** How a stdio server process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface StdioTransportParams {
  command: string;
  args: readonly string[];
  /** Added on top of the SDK's safe default environment (HOME, PATH, USER, ...); nothing else is inherited. */
  env: Readonly<Record<string, string>>;
  cwd?: string | undefined;
  /** Called with each stderr line of the server; the last lines are kept for error messages either way. */
  onStderr?: ((line: string) => void) | undefined;
  /** How long `close()` waits after closing stdin, then after SIGTERM, before escalating. Default 2000 ms. */
  closeGraceMs?: number | undefined;
  scheduler?: SchedulerLike | undefined;
}

const STDERR_TAIL_LINES = 20;

/**
 * An MCP client transport over a child process's stdin/stdout, framed with the SDK's own
 * ReadBuffer (newline-delimited JSON-RPC, every message dispatched by the Protocol layer, so
 * notifications interleaved with responses are handled by id).
 *
 * Why not the SDK's StdioClientTransport: it does not tell how the process ended, and a crashed
 * server must be reported as "exited with code N" with the tail of its stderr.
 */
export class StdioProcessTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  private child: ChildProcess | undefined;
  private readonly readBuffer = new ReadBuffer();
  private readonly stderrTail: string[] = [];
  private partialStderrLine = '';
  private exitInfo: ProcessExit | undefined;
  private closing = false;

  constructor(private readonly params: StdioTransportParams) {}

  /** How the process ended, once it has. */
  get exit(): ProcessExit | undefined {
    return this.exitInfo;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last lines the server wrote to stderr. */
  get stderr(): string {
    return [...this.stderrTail, this.partialStderrLine].filter((l) => l.length > 0).join('\n');
  }

  start(): Promise<void> {
    if (this.child) throw new Error('StdioProcessTransport already started');
    return new Promise<void>((resolve, reject) => {
      const child = spawn(this.params.command, [...this.params.args], {
        env: { ...getDefaultEnvironment(), ...this.params.env },
        cwd: this.params.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      child.once('spawn', () => resolve());
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
      });
      // 'close' comes after stdout/stderr are drained, so the stderr tail is complete by then.
      child.once('close', (code, signal) => {
        this.exitInfo ??= { code, signal };
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => this.keepStderr(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || this.closing) return Promise.reject(new Error('Not connected'));
    return new Promise<void>((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Closes stdin, then escalates to SIGTERM and SIGKILL if the server does not exit (MCP's shutdown order). */
  async close(): Promise<void> {
    const child = this.child;
    this.closing = true;
    if (child && child.exitCode === null && child.signalCode === null) {
      const grace = this.params.closeGraceMs ?? 2000;
      const scheduler = this.params.scheduler ?? asyncScheduler;
      const closed$ = fromEvent(child, 'close').pipe(map(() => true));
      const waitForExit = () => firstValueFrom(race(closed$, timer(grace, scheduler).pipe(map(() => false))));
      child.stdin?.end();
      if (!(await waitForExit())) {
        child.kill('SIGTERM');
        if (!(await waitForExit())) child.kill('SIGKILL');
      }
    }
    this.readBuffer.clear();
  }

  private receive(chunk: Buffer): void {
    try {
      this.readBuffer.append(chunk);
    } catch (error) {
      // One message over the buffer limit: the stream can no longer be framed, so give up on it.
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        // A line that is not JSON-RPC (a stray console.log in the server) is reported, not fatal.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private keepStderr(chunk: string): void {
    const lines = (this.partialStderrLine + chunk).split('\n');
    this.partialStderrLine = lines.pop() ?? '';
    for (const line of lines) {
      this.params.onStderr?.(line);
      this.stderrTail.push(line);
      if (this.stderrTail.length > STDERR_TAIL_LINES) this.stderrTail.shift();
    }
  }
}

/** "exited with code 3", "killed by SIGTERM". */
export function describeExit(exit: ProcessExit): string {
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? 'unknown'}`;
}
