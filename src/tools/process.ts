import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { Observable, fromEvent, of, take, timer } from 'rxjs';
import type { Subscription } from 'rxjs';

/** One thing a child process did: a chunk on a stream, or its exit. */
export type ProcessEvent =
  | { type: 'stdout'; chunk: Buffer }
  | { type: 'stderr'; chunk: Buffer }
  | { type: 'exit'; code: number | null; signal: NodeJS.Signals | null };

export interface ProcessSpec {
  file: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** After SIGTERM, how long the group gets before SIGKILL. */
  killGraceMs?: number;
  /**
   * After the process exits, how long to wait for its pipes to close. A background
   * grandchild that inherited stdout would otherwise hold the run open for its lifetime.
   */
  drainMs?: number;
}

const DEFAULT_KILL_GRACE_MS = 1_000;
const DEFAULT_DRAIN_MS = 250;

/**
 * Runs a process as the leader of its own process group. Cold: spawning happens on
 * subscribe. Emits stdout/stderr chunks, then one `exit`, then completes. Unsubscribing
 * before the exit kills the whole group (SIGTERM, then SIGKILL after a grace period), so
 * grandchildren such as `sleep 100 &` go too. A spawn failure (e.g. ENOENT) is an error.
 */
export function processGroup$(spec: ProcessSpec): Observable<ProcessEvent> {
  return new Observable<ProcessEvent>((subscriber) => {
    const child = spawn(spec.file, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let exited = false;
    let drain: Subscription | undefined;

    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      drain?.unsubscribe();
      subscriber.next({ type: 'exit', code, signal });
      subscriber.complete();
    };

    child.stdout.on('data', (chunk: Buffer) => subscriber.next({ type: 'stdout', chunk }));
    child.stderr.on('data', (chunk: Buffer) => subscriber.next({ type: 'stderr', chunk }));
    child.once('error', (err) => {
      exited = true;
      subscriber.error(err);
    });
    child.once('exit', (code, signal) => {
      exited = true;
      // Real time, not the run's scheduler: this waits on the OS, not on the agent's clock.
      drain = timer(spec.drainMs ?? DEFAULT_DRAIN_MS).subscribe(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code, signal);
      });
    });
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => finish(code, signal));

    return () => {
      drain?.unsubscribe();
      child.stdout.destroy();
      child.stderr.destroy();
      if (!exited && child.pid !== undefined) killGroup(child.pid, spec.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    };
  });
}

/** SIGTERM to the whole group now, SIGKILL to whatever is left after `graceMs`. */
export function killGroup(pid: number, graceMs: number): void {
  if (!signalGroup(pid, 'SIGTERM')) return;
  // Not on the injected scheduler: this must fire in real time even after the run is gone.
  setTimeout(() => signalGroup(pid, 'SIGKILL'), graceMs).unref();
}

function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is already gone
  }
}

/** Emits once when the signal aborts (at once if it already has). */
export function aborted$(signal: AbortSignal): Observable<unknown> {
  return signal.aborted ? of(signal.reason) : fromEvent(signal, 'abort').pipe(take(1));
}

/**
 * Splits a byte stream into complete lines, decoding UTF-8 across chunk boundaries.
 * `push` returns the lines completed by this chunk; `end` returns the unterminated rest.
 */
export function lineSplitter(): { push(chunk: Buffer): string[]; end(): string[] } {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  return {
    push(chunk) {
      pending += decoder.write(chunk);
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      return parts.map(stripCr);
    },
    end() {
      const rest = pending + decoder.end();
      pending = '';
      return rest === '' ? [] : [stripCr(rest)];
    },
  };
}

const stripCr = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);
