import { from, isObservable, merge, Observable, type SchedulerLike, take, takeUntil, tap, timer, map, EMPTY } from 'rxjs';
import type { AnyTool, ToolContext, ToolEmission, ToolExecution, ToolResult } from '../types/tool.js';
import { isFinalToolResult, toolProgress, toolUpdate } from '../types/tool.js';
import { ToolError, errorMessage } from '../types/errors.js';
import { linkedAbortController } from './cancellation.js';

export type ToolRunEmission =
  | { kind: 'update'; partial: ToolResult }
  | { kind: 'progress'; text: string }
  | { kind: 'result'; result: ToolResult; isError: boolean };

/** Why a running tool was cut short. */
export type ToolCutReason = 'aborted' | 'interrupted' | 'timeout';

export const TOOL_TEXTS = {
  skippedBySteering: 'Skipped due to queued user message.',
  skippedByHook: 'Tool execution skipped by before_tool_execution hook.',
  interrupted: 'tool call cancelled: user requested steering interrupt',
  aborted: 'Tool execution aborted.',
  truncated:
    'Tool call not executed: the response was cut off (stop reason: length) before its arguments were complete. Retry with a shorter call.',
} as const;

export interface RunToolOptions {
  toolCallId: string;
  loopId: string;
  scheduler: SchedulerLike;
  /** The run's signal; the tool's own signal is linked to it. */
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Emits when steering interrupts running tools. */
  interrupt$?: Observable<unknown>;
}

const textResult = (text: string): ToolResult => ({ content: [{ type: 'text', text }] });

/**
 * Runs one tool call as an Observable: its updates and progress as they come, then exactly one
 * result. Whatever happens — a throw, an erroring Observable, a timeout, an abort, an interrupt —
 * the caller gets a result, never an error. Unsubscribing aborts the tool's signal.
 */
export function runTool(tool: AnyTool, args: unknown, options: RunToolOptions): Observable<ToolRunEmission> {
  return new Observable<ToolRunEmission>((subscriber) => {
    const link = linkedAbortController(options.signal);
    let cut: ToolCutReason | undefined;
    let finished = false;
    const finish = (result: ToolResult, isError: boolean): void => {
      if (finished) return;
      finished = true;
      subscriber.next({ kind: 'result', result, isError });
      subscriber.complete();
    };
    const ctx: ToolContext = {
      toolCallId: options.toolCallId,
      toolName: tool.name,
      signal: link.controller.signal,
      loopId: options.loopId,
      scheduler: options.scheduler,
      onUpdate: (partial) => {
        if (!finished) subscriber.next({ kind: 'update', partial: toolUpdate(partial).partial });
      },
      onProgress: (text) => {
        if (!finished) subscriber.next({ kind: 'progress', text });
      },
    };

    const cut$ = merge(
      options.signal ? fromSignal(options.signal).pipe(map(() => 'aborted' as const)) : EMPTY,
      options.interrupt$ ? options.interrupt$.pipe(map(() => 'interrupted' as const)) : EMPTY,
      options.timeoutMs !== undefined ? timer(options.timeoutMs, options.scheduler).pipe(map(() => 'timeout' as const)) : EMPTY,
    ).pipe(
      take(1),
      tap((reason) => {
        cut = reason;
        link.controller.abort(new ToolError(reason === 'timeout' ? 'timeout' : 'cancelled', reason));
      }),
    );

    const execution = emissionsOf(() => tool.execute(args, ctx));
    let result: ToolResult | undefined;
    const inner = execution.pipe(takeUntil(cut$)).subscribe({
      next(e) {
        if (finished) return;
        if (typeof e === 'string') result = textResult(e);
        else if (isFinalToolResult(e)) result = e;
        else if (e.kind === 'update') subscriber.next({ kind: 'update', partial: e.partial });
        else subscriber.next({ kind: 'progress', text: e.text });
      },
      error(e: unknown) {
        finish(textResult(failureText(tool.name, e)), true);
      },
      complete() {
        if (cut !== undefined) finish(textResult(cutText(tool, cut, options.timeoutMs)), true);
        else if (result !== undefined) finish(result, result.isError === true);
        else finish(textResult(`Tool "${tool.name}" finished without a result.`), true);
      },
    });
    return () => {
      inner.unsubscribe();
      if (!finished) link.controller.abort(new ToolError('cancelled', 'unsubscribed'));
      link.dispose();
    };
  });
}

function fromSignal(signal: AbortSignal): Observable<void> {
  return new Observable<void>((s) => {
    const fire = (): void => {
      s.next();
      s.complete();
    };
    if (signal.aborted) fire();
    else signal.addEventListener('abort', fire, { once: true });
    return () => signal.removeEventListener('abort', fire);
  });
}

function emissionsOf(execute: () => ToolExecution): Observable<ToolEmission | string> {
  return new Observable<ToolEmission | string>((subscriber) => {
    let out: ToolExecution;
    try {
      out = execute();
    } catch (e) {
      subscriber.error(e);
      return undefined;
    }
    if (isObservable(out)) return (out as Observable<ToolEmission | string>).subscribe(subscriber);
    if (out instanceof Promise || (typeof out === 'object' && out !== null && 'then' in out)) {
      return from(out as Promise<ToolResult | string>).subscribe(subscriber);
    }
    subscriber.next(out as ToolResult | string);
    subscriber.complete();
    return undefined;
  });
}

function failureText(name: string, e: unknown): string {
  if (e instanceof ToolError && e.kind === 'invalidArgs') return `Invalid arguments for tool "${name}": ${e.message}`;
  return `Tool "${name}" failed: ${errorMessage(e)}`;
}

function cutText(tool: AnyTool, reason: ToolCutReason, timeoutMs: number | undefined): string {
  if (reason === 'timeout') return `Tool "${tool.name}" timed out after ${timeoutMs}ms.`;
  if (reason === 'interrupted') return TOOL_TEXTS.interrupted;
  return TOOL_TEXTS.aborted;
}

export { toolProgress, toolUpdate };
