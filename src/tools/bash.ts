import { constants } from 'node:os';
import { concat, defer, map, merge, mergeMap, of, takeWhile, throwError, timer } from 'rxjs';
import type { Observable, SchedulerLike } from 'rxjs';
import { ToolError } from '../types/errors.js';
import { text } from '../types/content.js';
import type { Tool, ToolEmission, ToolResult } from '../types/tool.js';
import { toolProgress, toolUpdate } from '../types/tool.js';
import { defineTool } from './define-tool.js';
import { argsSchema } from './args-schema.js';
import { formatBytes } from './format.js';
import { aborted$, lineSplitter, processGroup$ } from './process.js';
import type { ProcessEvent } from './process.js';
import { resolvePath, workspace } from './paths.js';
import type { WorkspaceOptions } from './paths.js';

export interface BashToolOptions extends WorkspaceOptions {
  /** Default time limit of one command (default 120 000 ms). */
  timeoutMs?: number;
  /** Upper bound for the `timeout` argument the model may pass (default 600 000 ms). */
  maxTimeoutMs?: number;
  /** Bytes kept of stdout and of stderr, each (default 256 KiB). */
  maxOutputBytes?: number;
  /**
   * Commands are refused before they run when they contain one of these. Strings match as
   * substrings of the command with runs of whitespace collapsed; RegExps are tested as they
   * are. Default: `DEFAULT_DENY_PATTERNS`.
   */
  denyPatterns?: ReadonlyArray<string | RegExp>;
  /** Variables every command gets, on top of the inherited ones (loader variables dropped all the same). */
  env?: Readonly<Record<string, string>>;
  /**
   * Names of further `process.env` variables commands inherit, besides {@link DEFAULT_BASH_ENV}.
   * Nothing else is inherited: provider keys and other secrets of this process stay out of the
   * commands the model runs.
   */
  inheritEnv?: readonly string[];
  /** The shell binary (default `bash`); it is run as `<shell> -c <command>`. */
  shell?: string;
  /** After SIGTERM on timeout or abort, how long the process group gets before SIGKILL (default 1000 ms). */
  killGraceMs?: number;
}

/**
 * Commands refused by default: deleting the file-system root or home directory, a fork
 * bomb, formatting or overwriting a disk. A guard against accidents, not a sandbox.
 */
export const DEFAULT_DENY_PATTERNS: readonly (string | RegExp)[] = [
  'rm -rf /',
  'rm -fr /',
  '--no-preserve-root',
  /\brm\s+-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-\S+\s+)*(?:\/\*?|~\/?|\$HOME\/?)(?:\s|;|&|\||$)/,
  ':(){ :|:& };:',
  /\bmkfs(?:\.\w+)?\s/,
  /\bdd\b[^|;&]*\bof=\/dev\/(?:sd|nvme|hd|disk|mmcblk)/,
];

/** What a command inherits of `process.env` by default: what a shell needs, and no credentials. */
export const DEFAULT_BASH_ENV: readonly string[] = ['PATH', 'HOME', 'LANG', 'TERM', 'TMPDIR', 'USER', 'SHELL'];

/**
 * Variables dropped from the inherited environment: they make the dynamic loader or bash
 * itself run code the command did not ask for.
 */
const SCRUBBED_ENV = /^(?:LD_\w*|DYLD_\w*|BASH_ENV|ENV|BASH_FUNC_.*|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND)$/;
/** Variables the model may not set through the `env` argument. */
const PROTECTED_ENV = /^(?:PATH|HOME|SHELL|USER|LOGNAME|IFS|TMPDIR)$/;

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_TIMEOUT_MS = 600_000;
const DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024;

export interface BashArgs {
  command: string;
  timeout?: number;
  env?: Record<string, string>;
}

const parameters = argsSchema<BashArgs>({
  type: 'object',
  properties: {
    command: { type: 'string', minLength: 1, description: 'The bash command to run (executed with `bash -c` in the working directory).' },
    timeout: { description: 'Time limit in seconds (default 120). The whole process group is killed when it expires.', type: 'number', exclusiveMinimum: 0 },
    env: {
      description: 'Extra environment variables for this command. PATH, HOME and loader variables cannot be set.',
      type: 'object',
      propertyNames: { type: 'string' },
      additionalProperties: { type: 'string' },
    },
  },
  required: ['command'],
});

/**
 * The `bash` tool: runs a command in its own process group, streams its output lines as
 * updates, and returns stdout, stderr and the exit code. A non-zero exit is a normal result
 * (`details.exitCode`); a timeout is an error result carrying the output so far; an abort
 * kills the whole group.
 */
export function bashTool(options: BashToolOptions): Tool<BashArgs> {
  const ws = workspace(options);
  const limits = {
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxTimeoutMs: options.maxTimeoutMs ?? DEFAULT_MAX_TIMEOUT_MS,
    maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
  };
  const deny = options.denyPatterns ?? DEFAULT_DENY_PATTERNS;
  return defineTool({
    name: 'bash',
    label: 'Bash',
    description:
      `Run a bash command in the working directory ${ws.cwd}. Returns stdout, stderr and the exit code; ` +
      `output is truncated at ${formatBytes(limits.maxOutputBytes)} per stream. ` +
      `Default time limit ${limits.timeoutMs / 1000} s.`,
    parameters,
    execute: (args, ctx) =>
      defer(() => {
        const refusal = refuse(args, deny);
        if (refusal) return throwError(() => ToolError.failed(refusal));
        const timeoutMs = Math.min(args.timeout === undefined ? limits.timeoutMs : args.timeout * 1000, limits.maxTimeoutMs);
        return concat(
          of(toolProgress(`Executing: ${args.command}`)),
          defer(async () => (ws.root === undefined ? ws.cwd : resolvePath(ws, ws.cwd))).pipe(
            mergeMap((cwd) =>
              runCommand({
                command: args.command,
                cwd,
                env: commandEnv(options, args.env),
                shell: options.shell ?? 'bash',
                timeoutMs,
                maxOutputBytes: limits.maxOutputBytes,
                killGraceMs: options.killGraceMs,
                signal: ctx.signal,
                scheduler: ctx.scheduler,
              }),
            ),
          ),
        );
      }),
  });
}

/** Why a command may not run, or undefined when it may. */
function refuse(args: BashArgs, deny: ReadonlyArray<string | RegExp>): string | undefined {
  const normalized = args.command.replace(/\s+/g, ' ');
  for (const pattern of deny) {
    const hit = typeof pattern === 'string' ? normalized.includes(pattern.replace(/\s+/g, ' ')) : pattern.test(args.command);
    if (hit) return `Command blocked by deny pattern ${String(pattern)}: ${args.command}`;
  }
  for (const name of Object.keys(args.env ?? {})) {
    if (PROTECTED_ENV.test(name) || SCRUBBED_ENV.test(name)) {
      return `Command blocked: the environment variable ${name} may not be overridden.`;
    }
  }
  return undefined;
}

/** The allow-listed part of `process.env`, then the configured variables, then the call's; loader variables never. */
function commandEnv(options: BashToolOptions, requested: Readonly<Record<string, string>> | undefined): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries([...DEFAULT_BASH_ENV, ...(options.inheritEnv ?? [])].map((name) => [name, process.env[name]]));
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries({ ...inherited, ...options.env, ...requested })) {
    if (value !== undefined && !SCRUBBED_ENV.test(name)) env[name] = value;
  }
  return env;
}

interface RunSpec {
  command: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  shell: string;
  timeoutMs: number;
  maxOutputBytes: number;
  killGraceMs: number | undefined;
  signal: AbortSignal;
  scheduler: SchedulerLike;
}

type StopEvent = { type: 'timeout' } | { type: 'aborted' };

/**
 * Output events until the process exits, times out or is aborted; whichever comes first
 * ends the stream, and unsubscribing from the process kills its group.
 */
function runCommand(spec: RunSpec): Observable<ToolEmission> {
  const started = spec.scheduler.now();
  const out = { stdout: capture(spec.maxOutputBytes), stderr: capture(spec.maxOutputBytes) };
  const stop$ = merge(
    timer(spec.timeoutMs, spec.scheduler).pipe(map((): StopEvent => ({ type: 'timeout' }))),
    aborted$(spec.signal).pipe(map((): StopEvent => ({ type: 'aborted' }))),
  );
  const process$ = processGroup$({
    file: spec.shell,
    args: ['-c', spec.command],
    cwd: spec.cwd,
    env: spec.env,
    ...(spec.killGraceMs === undefined ? {} : { killGraceMs: spec.killGraceMs }),
  });
  return merge(process$, stop$).pipe(
    takeWhile((e: ProcessEvent | StopEvent) => e.type === 'stdout' || e.type === 'stderr', true),
    mergeMap((e): Observable<ToolEmission> => {
      switch (e.type) {
        case 'stdout':
        case 'stderr': {
          const lines = out[e.type].push(e.chunk);
          return lines.length === 0 ? of() : of(lineUpdate(e.type, lines));
        }
        case 'exit': {
          const rest = (['stdout', 'stderr'] as const).flatMap((s) => {
            const lines = out[s].end();
            return lines.length === 0 ? [] : [lineUpdate(s, lines)];
          });
          const code = e.code ?? (e.signal ? 128 + signalNumber(e.signal) : -1);
          return of(
            ...rest,
            toolProgress(`Command exited with code ${code}`),
            exitResult(out, code, e.signal, spec.scheduler.now() - started),
          );
        }
        case 'timeout':
          return of(timeoutResult(out, spec.timeoutMs, spec.scheduler.now() - started));
        case 'aborted':
          return throwError(() => new ToolError('cancelled', `Command aborted: ${spec.command}`));
      }
    }),
  );
}

function lineUpdate(stream: 'stdout' | 'stderr', lines: string[]): ToolEmission {
  return toolUpdate({ content: [text(lines.join('\n'))], details: { stream, lines } });
}

/** Keeps the first `max` bytes of a stream and counts the rest. */
function capture(max: number) {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let totalBytes = 0;
  let streamed = 0;
  const splitter = lineSplitter();
  return {
    /** Records a chunk; returns the complete lines to stream, none once past the limit. */
    push(chunk: Buffer): string[] {
      totalBytes += chunk.length;
      const room = max - keptBytes;
      if (room > 0) {
        const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
        kept.push(part);
        keptBytes += part.length;
      }
      if (streamed >= max) return [];
      streamed += chunk.length;
      return splitter.push(chunk);
    },
    end: (): string[] => splitter.end(),
    get text(): string {
      return Buffer.concat(kept).toString('utf8');
    },
    get totalBytes(): number {
      return totalBytes;
    },
    get keptBytes(): number {
      return keptBytes;
    },
    get truncated(): boolean {
      return totalBytes > keptBytes;
    },
  };
}

type Capture = ReturnType<typeof capture>;

function exitResult(
  out: { stdout: Capture; stderr: Capture },
  exitCode: number,
  signal: NodeJS.Signals | null,
  durationMs: number,
): ToolResult {
  return {
    content: [text(`${formatOutput(out)}\nExit code: ${exitCode}`)],
    details: { exitCode, signal, timedOut: false, durationMs, ...outputDetails(out) },
  };
}

function timeoutResult(out: { stdout: Capture; stderr: Capture }, timeoutMs: number, durationMs: number): ToolResult {
  return {
    isError: true,
    content: [text(`${formatOutput(out)}\nCommand timed out after ${timeoutMs / 1000} s; its process group was killed.`)],
    details: { exitCode: null, signal: null, timedOut: true, durationMs, ...outputDetails(out) },
  };
}

function outputDetails(out: { stdout: Capture; stderr: Capture }) {
  return {
    stdoutBytes: out.stdout.totalBytes,
    stderrBytes: out.stderr.totalBytes,
    truncated: out.stdout.truncated || out.stderr.truncated,
  };
}

function formatOutput(out: { stdout: Capture; stderr: Capture }): string {
  const parts: string[] = [];
  if (out.stdout.totalBytes > 0) parts.push(withMarker('stdout', out.stdout));
  if (out.stderr.totalBytes > 0) parts.push(`[stderr]\n${withMarker('stderr', out.stderr)}`);
  return parts.length === 0 ? '(no output)' : parts.join('\n');
}

function withMarker(name: string, c: Capture): string {
  const body = c.text.replace(/\n$/, '');
  if (!c.truncated) return body;
  return `${body}\n[${name} truncated: showing the first ${formatBytes(c.keptBytes)} of ${formatBytes(c.totalBytes)}]`;
}

/** Shells report death by signal N as exit code 128 + N; so do we. */
const signalNumber = (signal: NodeJS.Signals): number => constants.signals[signal] ?? 0;
