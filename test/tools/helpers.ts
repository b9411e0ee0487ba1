import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { asyncScheduler, isObservable } from 'rxjs';
import type { Tool, ToolContext, ToolEmission, ToolResult } from '../../src/types/tool.js';

/** Everything one tool call produced, the way the loop would see it. */
export interface ToolRun {
  /** The final result, when the call ended with one. */
  result?: ToolResult;
  /** What the call threw or errored with, when it did. */
  error?: unknown;
  /** Validation failure text, when the arguments were refused before execute. */
  invalid?: string;
  updates: ToolResult[];
  progress: string[];
}

const asResult = (value: ToolResult | string): ToolResult =>
  typeof value === 'string' ? { content: [{ type: 'text', text: value }] } : value;

/**
 * Validates raw arguments, then runs `execute` to its end, whatever it returned (a value,
 * a Promise or an Observable of emissions), collecting updates and progress lines.
 */
export async function runTool<A>(tool: Tool<A>, rawArgs: unknown, signal = new AbortController().signal): Promise<ToolRun> {
  const run: ToolRun = { updates: [], progress: [] };
  let args = rawArgs as A;
  if (tool.validate) {
    const checked = tool.validate(rawArgs);
    if (!checked.ok) return { ...run, invalid: checked.error };
    args = checked.value;
  }
  const ctx: ToolContext = {
    toolCallId: 'call-1',
    toolName: tool.name,
    signal,
    loopId: 'test.loop.1',
    scheduler: asyncScheduler,
    onUpdate: (partial) => run.updates.push(asResult(partial)),
    onProgress: (text) => run.progress.push(text),
  };
  try {
    const execution = tool.execute(args, ctx);
    if (isObservable(execution)) {
      await new Promise<void>((resolve, reject) => {
        execution.subscribe({
          next: (e: ToolEmission | string) => {
            if (typeof e === 'string') run.result = asResult(e);
            else if (!('kind' in e)) run.result = e;
            else if (e.kind === 'update') run.updates.push(e.partial);
            else run.progress.push(e.text);
          },
          error: reject,
          complete: resolve,
        });
      });
    } else {
      run.result = asResult(await execution);
    }
  } catch (e) {
    run.error = e;
  }
  return run;
}

/** The text blocks of a result, joined. */
export function textOf(result: ToolResult | undefined): string {
  return (result?.content ?? [])
    .map((c) => (c.type === 'text' ? c.text : ''))
    .join('\n');
}

/** The message of what a run failed with (error or invalid arguments), or '' when it did not fail. */
export function failureOf(run: ToolRun): string {
  if (run.invalid !== undefined) return run.invalid;
  if (run.error instanceof Error) return run.error.message;
  return run.error === undefined ? '' : String(run.error);
}

/** A fresh temp directory; call the returned `remove` in afterEach/afterAll. */
export async function tempDir(prefix = 'phi-rx-tools-'): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Creates files (and, for keys ending in "/", empty directories) under `root`. */
export async function tree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    if (rel.endsWith('/')) {
      await mkdir(file, { recursive: true });
    } else {
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
    }
  }
}
