import { spawn } from 'node:child_process';
import type { AgentMessage } from '../types/message.js';
import type { LoopHooks } from '../types/hooks.js';
import type { Usage } from '../types/usage.js';

export interface ScriptHookOptions {
  /** Kill the script (its whole process group) after this long; default 10 s. */
  timeoutMs?: number;
  cwd?: string;
  /** Extra environment for the script, on top of the current one. */
  env?: Record<string, string>;
}

/** The JSON a script receives on stdin. */
export interface ScriptHookContext {
  hook: string;
  messageCount?: number;
  turnIndex?: number;
  loopIndex?: number;
  toolName?: string;
  toolCallId?: string;
  args?: Record<string, unknown>;
  isError?: boolean;
  text?: string;
  usage?: Usage;
  error?: string;
}

export class ScriptHookError extends Error {
  override readonly name = 'ScriptHookError';
}

/**
 * Runs `command` through `bash -c` with the hook context as JSON on stdin. Resolves `true` on exit
 * code 0 and `false` on any other exit code (a veto, for before-hooks). A script that cannot be
 * spawned, dies from a signal, or outlives `timeoutMs` rejects with a ScriptHookError; the loop
 * reports that as a HookError event and carries on as if the hook had said continue.
 */
export function runScriptHook(command: string, context: ScriptHookContext, options: ScriptHookOptions = {}): Promise<boolean> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise<boolean>((resolve, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env, PHI_RX_HOOK: context.hook },
      stdio: ['pipe', 'ignore', 'pipe'],
      detached: true, // its own process group, so a timeout kills what it started too
    });
    let stderr = '';
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      killGroup(child.pid);
      settle(() => reject(new ScriptHookError(`script hook "${command}" (${context.hook}) timed out after ${timeoutMs}ms`)));
    }, timeoutMs);
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4_000) stderr += d.toString();
    });
    child.on('error', (e) => settle(() => reject(new ScriptHookError(`script hook "${command}" could not start: ${e.message}`))));
    child.on('close', (code, signal) =>
      settle(() => {
        if (signal) reject(new ScriptHookError(`script hook "${command}" (${context.hook}) was killed by ${signal}${stderr ? `: ${stderr.trim()}` : ''}`));
        else resolve(code === 0);
      }),
    );
    child.stdin?.on('error', () => undefined); // a script that ignores stdin must not crash us
    child.stdin?.end(JSON.stringify(context));
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export type ScriptHookCommands = Partial<Record<keyof LoopHooks, string>>;

/**
 * Lifecycle hooks implemented as external commands (spec 003 "Script Callbacks").
 *
 * @example
 * agent.withHooks(scriptHooks({ beforeToolExecution: './scripts/guard.sh', afterTurn: 'python3 log_turn.py' }));
 */
export function scriptHooks(commands: ScriptHookCommands, options: ScriptHookOptions = {}): LoopHooks {
  const hooks: LoopHooks = {};
  const run = (hook: string, ctx: Omit<ScriptHookContext, 'hook'>) => runScriptHook(commands[hook as keyof LoopHooks]!, { hook, ...ctx }, options);
  const count = (m: readonly AgentMessage[]) => m.length;
  if (commands.beforeLoop) hooks.beforeLoop = (m, loopIndex) => run('beforeLoop', { messageCount: count(m), loopIndex });
  if (commands.afterLoop) hooks.afterLoop = async (m, usage) => void (await run('afterLoop', { messageCount: count(m), usage }));
  if (commands.beforeTurn) hooks.beforeTurn = (m, turnIndex) => run('beforeTurn', { messageCount: count(m), turnIndex });
  if (commands.afterTurn) hooks.afterTurn = async (m, usage) => void (await run('afterTurn', { messageCount: count(m), usage }));
  if (commands.onError) hooks.onError = async (error) => void (await run('onError', { error }));
  if (commands.beforeToolExecution) {
    hooks.beforeToolExecution = (toolName, toolCallId, args) => run('beforeToolExecution', { toolName, toolCallId, args });
  }
  if (commands.afterToolExecution) {
    hooks.afterToolExecution = async (toolName, toolCallId, isError) => void (await run('afterToolExecution', { toolName, toolCallId, isError }));
  }
  if (commands.beforeToolExecutionUpdate) {
    hooks.beforeToolExecutionUpdate = (toolName, toolCallId, text) => run('beforeToolExecutionUpdate', { toolName, toolCallId, text });
  }
  if (commands.afterToolExecutionUpdate) {
    hooks.afterToolExecutionUpdate = async (toolName, toolCallId, text) => void (await run('afterToolExecutionUpdate', { toolName, toolCallId, text }));
  }
  return hooks;
}
