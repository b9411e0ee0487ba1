import { isObservable, Observable, type SchedulerLike, type Subscription, type Unsubscribable } from 'rxjs';
import type { AnyTool, ToolContext, ToolEmission, ToolExecution, ToolResult } from '../types/tool.js';
import type { AgentEvent } from '../types/events.js';
import type { ToolApprovalConfig } from '../operators/request-approval.js';
import { isFinalToolResult, toolProgress, toolUpdate } from '../types/tool.js';
import { ToolError, errorMessage } from '../types/errors.js';
import { linkedAbortController, onAbort } from './cancellation.js';

export type ToolRunEmission =
  | { kind: 'update'; partial: ToolResult }
  | { kind: 'progress'; text: string }
  | { kind: 'result'; result: ToolResult; isError: boolean };

/** An event of a loop a call started (`ctx.emit`: an agent tool's child run), for the run's stream as it is. */
export interface ToolEventEmission {
  kind: 'event';
  event: AgentEvent;
}

/** Why a running tool was cut short. */
export type ToolCutReason = 'aborted' | 'interrupted' | 'timeout' | 'cancelled';

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
  /** Emits (with the reason, if any) when this one call is cancelled: its signal aborts, its result says "cancelled". */
  cancel$?: Observable<string | undefined>;
  /**
   * `interrupt$` as a plain callback registration: calls `cut` when steering interrupts (at once,
   * if it already has) and returns what stops watching. What a dispatch uses: no subscription per call.
   */
  watchInterrupt?: (cut: () => void) => () => void;
  /** `cancel$` as a plain callback registration: calls `cut` with the reason when this call is cancelled; returns what stops watching. */
  watchCancel?: (cut: (reason: string | undefined) => void) => () => void;
  /** The run's approval config, handed to the tool (`ctx.approval`) for loops it starts. */
  approval?: ToolApprovalConfig;
}

/** The error result of a call cancelled on its own (`agent.cancelToolCall`), which the model reads. */
export function cancelledText(reason: string | undefined): string {
  return `Tool call cancelled${reason ? `: ${reason}` : '.'}`;
}

/** Where a started tool run reports to (what `runTool` turns into emissions). */
export interface ToolRunSink {
  update(partial: ToolResult): void;
  progress(text: string): void;
  /** An event of a loop the call started (`ctx.emit`); without it, the tool's context has no `emit`. */
  event?(event: AgentEvent): void;
  /** Called exactly once, unless the run is stopped first. */
  result(result: ToolResult, isError: boolean): void;
}

const textResult = (text: string): ToolResult => ({ content: [{ type: 'text', text }] });

/**
 * Runs one tool call as an Observable: its updates and progress as they come, then exactly one
 * result. Whatever happens — a throw, an erroring Observable, a timeout, an abort, an interrupt —
 * the caller gets a result, never an error. Unsubscribing aborts the tool's signal.
 */
export function runTool(tool: AnyTool, args: unknown, options: RunToolOptions): Observable<ToolRunEmission> {
  return toolRun(tool, args, options, false) as Observable<ToolRunEmission>;
}

/**
 * {@link runTool} whose tool may send events of loops it starts (`ctx.emit`), emitted as they come
 * (`{ kind: 'event' }`): how the loop's tool dispatch runs a call.
 */
export function runToolForwarding(tool: AnyTool, args: unknown, options: RunToolOptions): Observable<ToolRunEmission | ToolEventEmission> {
  return toolRun(tool, args, options, true);
}

function toolRun(tool: AnyTool, args: unknown, options: RunToolOptions, forwarding: boolean): Observable<ToolRunEmission | ToolEventEmission> {
  return new Observable<ToolRunEmission | ToolEventEmission>((subscriber) =>
    startTool(tool, args, options, {
      update: (partial) => subscriber.next({ kind: 'update', partial }),
      progress: (text) => subscriber.next({ kind: 'progress', text }),
      ...(forwarding ? { event: (event: AgentEvent) => subscriber.next({ kind: 'event', event }) } : {}),
      result: (result, isError) => {
        subscriber.next({ kind: 'result', result, isError });
        subscriber.complete();
      },
    }),
  );
}

/**
 * `runTool` without the Observable around it: starts the tool now and reports to `sink`; the
 * returned function stops it (the tool's signal aborts unless it already finished). The tool dispatcher calls
 * this once per tool call, so a plain run costs no subscriptions: the tool's AbortController is
 * made only when the tool reads `ctx.signal`, and abort, interrupt and timeout are watched only
 * when configured.
 */
export function startTool(tool: AnyTool, args: unknown, options: RunToolOptions, sink: ToolRunSink): () => void {
  return new ToolRun(tool, options, sink).start(args);
}

/** The state of one started tool call. */
class ToolRun {
  private finished = false;
  private cut: ToolCutReason | undefined;
  /** Made on first read of `ctx.signal`: most tools never look at it. */
  private link: ReturnType<typeof linkedAbortController> | undefined;
  /** Why the signal must read aborted if it is made only now. */
  private abortReason: unknown;
  private execution: Unsubscribable | undefined;
  private watchers: Unsubscribable[] | undefined;
  private removeAbortListener: (() => void) | undefined;
  private result: ToolResult | undefined;
  private cancelReason: string | undefined;

  constructor(
    private readonly tool: AnyTool,
    private readonly options: RunToolOptions,
    private readonly sink: ToolRunSink,
  ) {}

  start(args: unknown): () => void {
    this.watch();
    if (this.cut === undefined) this.execute(args);
    return () => this.stop();
  }

  /** Abort, interrupt and timeout, in that order of precedence when several fire at once. */
  private watch(): void {
    const { signal, interrupt$, cancel$, watchInterrupt, watchCancel, timeoutMs, scheduler } = this.options;
    if (signal) {
      if (signal.aborted) return this.cutShort('aborted');
      this.removeAbortListener = onAbort(signal, () => this.cutShort('aborted'));
    }
    if (interrupt$) {
      const interrupt = interrupt$.subscribe(() => this.cutShort('interrupted'));
      if (this.cut !== undefined) return interrupt.unsubscribe();
      (this.watchers ??= []).push(interrupt);
    }
    if (cancel$) {
      const cancel = cancel$.subscribe((reason) => this.cancelled(reason));
      if (this.cut !== undefined) return cancel.unsubscribe();
      (this.watchers ??= []).push(cancel);
    }
    if (watchInterrupt && this.keep(watchInterrupt(() => this.cutShort('interrupted')))) return;
    if (watchCancel && this.keep(watchCancel((reason) => this.cancelled(reason)))) return;
    if (timeoutMs !== undefined) (this.watchers ??= []).push(scheduler.schedule(() => this.cutShort('timeout'), timeoutMs));
  }

  /** Keeps a callback watch until the run ends; true (and stopped at once) when it already cut the run short. */
  private keep(stop: () => void): boolean {
    if (this.cut !== undefined) {
      stop();
      return true;
    }
    (this.watchers ??= []).push({ unsubscribe: stop });
    return false;
  }

  private cancelled(reason: string | undefined): void {
    this.cancelReason = reason;
    this.cutShort('cancelled');
  }

  private context(): ToolContext {
    return new ToolRunContext(this, this.tool.name, this.options);
  }

  /** From `ctx.onUpdate`; dropped once the result is in (or the run was stopped). */
  update(partial: ToolResult | string): void {
    if (!this.finished) this.sink.update(toolUpdate(partial).partial);
  }

  /** From `ctx.onProgress`; dropped likewise. */
  progress(text: string): void {
    if (!this.finished) this.sink.progress(text);
  }

  /** Whether the sink takes events of loops the tool starts (`ctx.emit`). */
  get forwards(): boolean {
    return this.sink.event !== undefined;
  }

  /** From `ctx.emit`; dropped likewise. */
  event(event: AgentEvent): void {
    if (!this.finished) this.sink.event?.(event);
  }

  /** The tool's AbortSignal, made on first read (most tools never look at it). */
  signal(): AbortSignal {
    if (!this.link) {
      // Once finished, the tool's signal is no longer tied to the run (a later abort must not reach it).
      this.link = linkedAbortController(this.finished ? undefined : this.options.signal);
      if (this.abortReason !== undefined) this.link.controller.abort(this.abortReason);
    }
    return this.link.controller.signal;
  }

  private execute(args: unknown): void {
    let out: ToolExecution;
    try {
      out = this.tool.execute(args, this.context());
    } catch (e) {
      return this.fail(e);
    }
    if (isObservable(out)) {
      const subscription = (out as Observable<ToolEmission | string>).subscribe({
        next: (e) => this.emission(e),
        error: (e: unknown) => this.fail(e),
        complete: () => this.completed(),
      });
      // A tool that finished synchronously has nothing left to tear down.
      if (this.finished) subscription.unsubscribe();
      else this.execution = subscription;
      return;
    }
    if (isThenable(out)) {
      (out as PromiseLike<ToolResult | string>).then(
        (value) => {
          if (this.finished) return;
          this.emission(value);
          this.completed();
        },
        (e: unknown) => {
          if (!this.finished) this.fail(e);
        },
      );
      return;
    }
    this.emission(out as ToolResult | string);
    this.completed();
  }

  private emission(e: ToolEmission | string): void {
    if (this.finished) return;
    if (typeof e === 'string') this.result = textResult(e);
    else if (isFinalToolResult(e)) this.result = e;
    else if (e.kind === 'update') this.sink.update(e.partial);
    else this.sink.progress(e.text);
  }

  private completed(): void {
    const result = this.result;
    if (result !== undefined) this.finish(result, result.isError === true);
    else this.finish(textResult(`Tool "${this.tool.name}" finished without a result.`), true);
  }

  private fail(e: unknown): void {
    this.finish(textResult(failureText(this.tool.name, e)), true);
  }

  /** The tool's signal aborts first (it may still report from its abort handler), then its run is dropped. */
  private cutShort(reason: ToolCutReason): void {
    if (this.finished || this.cut !== undefined) return;
    this.cut = reason;
    if (reason === 'cancelled') {
      // The cancellation is the result, whatever the tool reports from its abort handler; then its signal aborts.
      this.finish(textResult(cancelledText(this.cancelReason)), true);
      this.abort(new ToolError('cancelled', this.cancelReason ?? 'cancelled'));
      this.execution?.unsubscribe();
      return;
    }
    // An abort of the run reaches the tool with the run's own reason, as a linked signal would.
    const runSignal = this.options.signal;
    this.abort(reason === 'aborted' && runSignal ? runSignal.reason : new ToolError(reason === 'timeout' ? 'timeout' : 'cancelled', reason));
    this.execution?.unsubscribe();
    this.finish(textResult(cutText(this.tool, reason, this.options.timeoutMs)), true);
  }

  private abort(reason: unknown): void {
    if (this.abortReason === undefined) this.abortReason = reason;
    this.link?.controller.abort(reason);
  }

  private finish(result: ToolResult, isError: boolean): void {
    if (this.finished) return;
    this.finished = true;
    this.release();
    this.sink.result(result, isError);
  }

  /** Stops a run from outside (unsubscribe): the tool is told through its signal and torn down. */
  private stop(): void {
    this.execution?.unsubscribe();
    if (!this.finished) {
      this.finished = true;
      this.abort(new ToolError('cancelled', 'unsubscribed'));
    }
    this.release();
  }

  private release(): void {
    this.removeAbortListener?.();
    this.removeAbortListener = undefined;
    if (this.watchers) for (const w of this.watchers.splice(0)) w.unsubscribe();
    this.link?.dispose();
  }
}

/**
 * The `ctx` a tool gets. `signal` is a getter on the prototype: reading it is what makes the
 * AbortController. (An object literal with a getter would do the same, but V8 gives each such
 * literal its own accessor pair in old space, which keeps every call's garbage alive across
 * young-generation collections.)
 */
class ToolRunContext implements ToolContext {
  readonly toolCallId: string;
  readonly loopId: string;
  readonly scheduler: SchedulerLike;
  readonly onUpdate: (partial: ToolResult | string) => void;
  readonly onProgress: (text: string) => void;
  readonly emit?: (event: AgentEvent) => void;
  readonly approval?: ToolApprovalConfig;

  constructor(
    private readonly run: ToolRun,
    readonly toolName: string,
    options: RunToolOptions,
  ) {
    this.toolCallId = options.toolCallId;
    this.loopId = options.loopId;
    this.scheduler = options.scheduler;
    // Own functions, not methods: tools may pass them around unbound (`const { onUpdate } = ctx`).
    this.onUpdate = (partial) => run.update(partial);
    this.onProgress = (text) => run.progress(text);
    if (run.forwards) this.emit = (event) => run.event(event);
    if (options.approval) this.approval = options.approval;
  }

  get signal(): AbortSignal {
    return this.run.signal();
  }
}

function isThenable(out: unknown): boolean {
  return out instanceof Promise || (typeof out === 'object' && out !== null && 'then' in out);
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
