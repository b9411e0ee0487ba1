import {
  asyncScheduler, concat, concatMap, defer, EMPTY, from, identity, Observable, type Observer, of, type SchedulerLike, type TeardownLogic,
} from 'rxjs';
import type { ToolCall } from '../../types/content.js';
import type { AgentEvent } from '../../types/events.js';
import type { ToolResultMessage, TurnId } from '../../types/message.js';
import type { AnyTool, ToolResult } from '../../types/tool.js';
import type { HookResult, PreDispatchPolicy, PreDispatchVerdict } from '../../types/hooks.js';
import { errorMessage } from '../../types/errors.js';
import { callHookSafely } from '../../sources/hook-result.js';
import { cancelledText, runToolForwarding, startTool, TOOL_TEXTS, type RunToolOptions } from '../../sources/tool-run.js';
import { approvalGate } from '../request-approval.js';
import { resultOfTurn, toolResultMessage } from './tool-result-message.js';
import { CallCancellations } from './call-cancellations.js';
import { SteeringInterrupts } from './steering-interrupts.js';
import type { DispatchToolsOptions } from '../dispatch-tools.js';

/** The state of a dispatch: which tools exist, whether the rest is skipped, and why (for `directDispatch`, of every message of a loop). */
export class ToolDispatcher {
  /** The tools by name, made on first look-up of a long list. */
  private byName: Map<string, AnyTool> | undefined;
  private readonly scheduler: SchedulerLike;
  private readonly now: () => number;
  private skipText: string | undefined;
  private readonly interrupts: SteeringInterrupts | undefined;
  /** No policy, hook or result stage to wait for: a call's events go straight through, with no inner Observables. */
  private readonly direct: boolean;
  /** Single-call cancellations, when the loop has a `cancelToolCalls` source. */
  readonly cancels: CallCancellations | undefined;
  /** The turn of the calls being dispatched: their result messages carry it from their first event on. */
  private turnId: TurnId | undefined;

  constructor(private readonly o: DispatchToolsOptions) {
    this.cancels = o.cancel$ ? new CallCancellations() : undefined;
    this.scheduler = o.scheduler ?? asyncScheduler;
    this.now = o.now ?? (() => this.scheduler.now());
    this.turnId = o.turnId;
    const h = o.hooks;
    this.direct =
      (o.preDispatch ?? []).length === 0 &&
      !o.toolResults && !o.approval &&
      !h?.beforeToolExecution && !h?.afterToolExecution && !h?.beforeToolExecutionUpdate && !h?.afterToolExecutionUpdate;
    if (o.steering) this.interrupts = new SteeringInterrupts(o.steering);
  }

  /** A steering checkpoint: with steering queued and a policy other than `wait`, the rest is skipped. */
  checkpoint(): Observable<never> {
    return defer(() => {
      this.checkpointNow();
      return EMPTY;
    });
  }

  private checkpointNow(): void {
    const s = this.o.steering;
    if (this.skipText === undefined && s?.pending()) {
      const policy = s.policy();
      if (policy === 'skip') this.skipText = TOOL_TEXTS.skippedBySteering;
      if (policy === 'interrupt') this.skipText = TOOL_TEXTS.interrupted;
    }
  }

  one(call: ToolCall): Observable<AgentEvent> {
    // Decided when the call is reached, not when it is mapped: a checkpoint may have set skipText since.
    return new Observable<AgentEvent>((subscriber) => {
      const early = this.endsEarly(call);
      if (early) return early.subscribe(subscriber);
      if (this.direct) return this.runDirect(call, subscriber);
      const policies = this.o.preDispatch ?? [];
      if (policies.length === 0) return this.dispatch(call, call.arguments).subscribe(subscriber);
      return this.preDispatch(call, policies).subscribe(subscriber);
    });
  }

  /** The tool called `name` (the last of that name, as a Map by name has it): a short list is searched, with no Map per run. */
  private toolNamed(name: string): AnyTool | undefined {
    const tools = this.o.tools;
    if (tools.length > 8) return (this.byName ??= new Map(tools.map((t) => [t.name, t]))).get(name);
    for (let i = tools.length - 1; i >= 0; i--) if (tools[i]!.name === name) return tools[i];
    return undefined;
  }

  isDirect(): boolean {
    return this.direct;
  }

  /** A call that ends before it runs: the rest is skipped, the run was aborted, or the call was cancelled before it was reached. */
  private endsEarly(call: ToolCall): Observable<AgentEvent> | undefined {
    if (this.skipText !== undefined) return this.immediate(call, this.skipText, true);
    if (this.o.signal?.aborted) return this.immediate(call, TOOL_TEXTS.aborted, true);
    const cancelled = this.cancels?.before(call.id);
    if (cancelled) return this.immediate(call, cancelledText(cancelled.reason), true);
    return undefined;
  }

  /** The dispatch of one message's calls (of turn `turnId`) begins (direct configurations): nothing skipped yet; cancellations are heard until it ends. */
  private begin(turnId: TurnId | undefined): (() => void) | undefined {
    this.skipText = undefined;
    this.turnId = turnId;
    return this.cancels && this.o.cancel$ ? this.cancels.connect(this.o.cancel$) : undefined;
  }

  /** Every call started at once, as `mergeMap` would (direct configurations only). */
  parallel(calls: readonly ToolCall[], out: Observer<AgentEvent>, turnId?: TurnId): () => void {
    const listening = this.begin(turnId);
    let open = calls.length;
    const end = (): void => {
      listening?.();
      out.complete();
    };
    if (open === 0) end();
    const callDone: CallObserver = { next: (e) => out.next(e), complete: () => --open === 0 && end() };
    const teardowns: TeardownLogic[] = [];
    for (const call of calls) teardowns.push(this.directOne(call, callDone));
    return () => {
      listening?.();
      for (const teardown of teardowns) unsubscribeFrom(teardown);
    };
  }

  /**
   * Each call once the one before has ended, with a steering checkpoint after each, as `concatMap`
   * would (direct configurations only). Calls that end synchronously follow in a loop: a flat stack.
   */
  sequential(calls: readonly ToolCall[], out: Observer<AgentEvent>, turnId?: TurnId): () => void {
    const listening = this.begin(turnId);
    let index = 0;
    let closed = false;
    let looping = false;
    let settled = false;
    let teardown: TeardownLogic;
    const advance = (): void => {
      if (looping) {
        settled = true;
        return;
      }
      looping = true;
      while (!closed) {
        if (index === calls.length) {
          closed = true;
          listening?.();
          out.complete();
          break;
        }
        settled = false;
        teardown = this.directOne(calls[index++]!, callDone);
        if (!settled) break; // still running: its end calls advance() again
      }
      looping = false;
    };
    const callDone: CallObserver = {
      next: (e) => out.next(e),
      complete: () => {
        this.checkpointNow();
        advance();
      },
    };
    advance();
    return () => {
      closed = true;
      listening?.();
      unsubscribeFrom(teardown);
    };
  }

  /** One call of a direct configuration: what `one` does, with no Observable of its own. */
  private directOne(call: ToolCall, out: CallObserver): TeardownLogic {
    const early = this.endsEarly(call);
    return early ? early.subscribe(out) : this.runDirect(call, out);
  }

  /** `dispatch` + `execute` + `finish` for a configuration without hooks, policies or stages. */
  private runDirect(call: ToolCall, subscriber: CallObserver): TeardownLogic {
    const tool = this.toolNamed(call.name);
    if (!tool) return this.immediate(call, `Tool not found: ${call.name}`, true).subscribe(subscriber);
    let args: unknown = call.arguments;
    if (tool.validate) {
      const checked = tool.validate(args);
      if (!checked.ok) return this.invalid(call, checked.error).subscribe(subscriber);
      args = checked.value;
    }
    subscriber.next(this.startEvent(call, call.arguments));
    return startTool(tool, args, this.toolOptions(tool, call), {
      update: (partial) => subscriber.next(this.updateEvent(call, partial)),
      progress: (text) => subscriber.next(this.progressEvent(call, text)),
      event: (event) => subscriber.next(event),
      result: (result, isError) => {
        const message = toolResultMessage(call, result, isError, this.now(), this.turnId);
        subscriber.next(this.endEvent(call, result, message));
        for (const e of this.messageEvents(message)) subscriber.next(e);
        subscriber.complete();
      },
    });
  }

  private preDispatch(call: ToolCall, policies: readonly PreDispatchPolicy[]): Observable<AgentEvent> {
    const hookErrors: AgentEvent[] = [];
    let args = call.arguments;
    return from(policies).pipe(
      concatMap((policy) =>
        this.safe(
          'preDispatch',
          () => policy({ ...call, arguments: args }, { messages: this.o.messages?.() ?? [] }),
          undefined,
          hookErrors,
        ),
      ),
      // Evaluate policies in order; the first verdict other than continue decides.
      (verdicts$) =>
        new Observable<PreDispatchVerdict>((sub) =>
          verdicts$.subscribe({
            next(v) {
              if (!v || v.action === 'continue') {
                if (v?.arguments) args = v.arguments;
                return;
              }
              sub.next(v);
              sub.complete();
            },
            error: (e: unknown) => sub.error(e),
            complete: () => {
              sub.next({ action: 'continue', arguments: args });
              sub.complete();
            },
          }),
        ),
      concatMap((verdict) => {
        const before = from(hookErrors.splice(0));
        switch (verdict.action) {
          case 'skip':
            return concat(before, this.immediate(call, verdict.reason, true));
          case 'stop':
            this.o.onStop?.(verdict.reason);
            this.skipText = `Skipped: ${verdict.reason}`;
            return concat(before, this.immediate(call, this.skipText, true));
          case 'inject':
            this.o.onInject?.(verdict.messages);
            return concat(before, this.dispatch(call, args));
          default:
            return concat(before, this.dispatch(call, verdict.arguments ?? args));
        }
      }),
    );
  }

  /** Validation, approval, the before-hook, Start, the run, End, the after-hook, the result message. */
  private dispatch(call: ToolCall, args: Record<string, unknown>, approved = false): Observable<AgentEvent> {
    const tool = this.toolNamed(call.name);
    if (!tool) return this.immediate(call, `Tool not found: ${call.name}`, true);
    let validArgs: unknown = args;
    if (tool.validate) {
      const checked = tool.validate(args);
      if (!checked.ok) return this.invalid(call, checked.error);
      validArgs = checked.value;
    }
    if (!approved && this.o.approval) {
      const cancels = this.cancels;
      const gate$ = approvalGate({ ...call, arguments: args }, tool, {
        ...this.o.approval, loopId: this.o.loopId, now: this.now, ...(this.o.signal ? { signal: this.o.signal } : {}),
        ...(cancels ? { cancelOf: (id: string) => cancels.of(id) } : {}),
      }, { run: (approvedArgs) => this.dispatch(call, approvedArgs, true), end: (text) => this.immediate(call, text, true) }, validArgs);
      if (gate$) return gate$;
    }
    const before = this.o.hooks?.beforeToolExecution;
    // No gate to wait for: Start and the run follow at once (the common case, on every tool call).
    if (!before) return concat(of(this.startEvent(call, args)), this.execute(tool, call, validArgs));
    const events: AgentEvent[] = [];
    const gate$ = this.safe('beforeToolExecution', () => before(call.name, call.id, args), true, events);
    return gate$.pipe(
      concatMap((allowed) => {
        const errors = from(events.splice(0));
        if (allowed === false) return concat(errors, this.finish(call, { content: [{ type: 'text', text: TOOL_TEXTS.skippedByHook }] }, true));
        return concat(errors, of(this.startEvent(call, args)), this.execute(tool, call, validArgs));
      }),
    );
  }

  private invalid(call: ToolCall, error: string): Observable<AgentEvent> {
    return this.immediate(call, `Invalid arguments for tool "${call.name}": ${error}`, true);
  }

  private toolOptions(tool: AnyTool, call: ToolCall): RunToolOptions {
    const options: RunToolOptions = { toolCallId: call.id, loopId: this.o.loopId, scheduler: this.scheduler, approval: this.o.approval };
    if (this.o.signal) options.signal = this.o.signal;
    const timeoutMs = tool.timeoutMs ?? this.o.timeoutMs;
    if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
    if (this.interrupts) options.watchInterrupt = this.interrupts.watch;
    const cancels = this.cancels;
    if (cancels) options.watchCancel = (cut) => cancels.watch(call.id, cut);
    return options;
  }

  private execute(tool: AnyTool, call: ToolCall, args: unknown): Observable<AgentEvent> {
    return runToolForwarding(tool, args, this.toolOptions(tool, call)).pipe(
      concatMap((e) => {
        if (e.kind === 'progress') return of(this.progressEvent(call, e.text));
        if (e.kind === 'update') return this.update(call, e.partial);
        if (e.kind === 'event') return of(e.event);
        return this.finish(call, e.result, e.isError);
      }),
    );
  }

  private progressEvent(call: ToolCall, text: string): AgentEvent {
    return { type: 'ProgressMessage', loopId: this.o.loopId, toolCallId: call.id, toolName: call.name, text, timestamp: this.now() };
  }

  private updateEvent(call: ToolCall, partial: ToolResult): AgentEvent {
    return { type: 'ToolExecutionUpdate', loopId: this.o.loopId, toolCallId: call.id, toolName: call.name, partialResult: partial, timestamp: this.now() };
  }

  private update(call: ToolCall, partial: ToolResult): Observable<AgentEvent> {
    const hooks = this.o.hooks ?? {};
    const text = partial.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    const event = this.updateEvent(call, partial);
    if (!hooks.beforeToolExecutionUpdate && !hooks.afterToolExecutionUpdate) return of(event);
    const sink: AgentEvent[] = [];
    const before = hooks.beforeToolExecutionUpdate;
    const after = hooks.afterToolExecutionUpdate;
    const gate$ = before ? this.safe('beforeToolExecutionUpdate', () => before(call.name, call.id, text), true, sink) : of(true as boolean | void);
    return gate$.pipe(
      concatMap((allowed) => {
        if (allowed === false) return from(sink.splice(0));
        const afterHook$ = after ? this.safe('afterToolExecutionUpdate', () => after(call.name, call.id, text), undefined, sink) : EMPTY;
        return concat(from(sink.splice(0)), of(event), afterHook$.pipe(concatMap(() => from(sink.splice(0)))));
      }),
    );
  }

  /** A call that never runs: Start (when `started`) and End with an error result. */
  private immediate(call: ToolCall, text: string, withStart: boolean): Observable<AgentEvent> {
    return concat(
      withStart ? of(this.startEvent(call, call.arguments)) : EMPTY,
      this.finish(call, { content: [{ type: 'text', text }] }, true),
    );
  }

  private startEvent(call: ToolCall, args: Record<string, unknown>): AgentEvent {
    return { type: 'ToolExecutionStart', loopId: this.o.loopId, toolCallId: call.id, toolName: call.name, args, timestamp: this.now() };
  }

  private finish(call: ToolCall, result: ToolResult, isError: boolean): Observable<AgentEvent> {
    const message = toolResultMessage(call, result, isError, this.now(), this.turnId);
    const stage = this.o.toolResults;
    const after = this.o.hooks?.afterToolExecution;
    // Neither a result stage nor an after-hook: the three events are known now (every tool call pays this path).
    if (!stage && !after) return from([this.endEvent(call, result, message), ...this.messageEvents(message)]);
    return of(message).pipe(
      stage ?? identity,
      concatMap((staged) => {
        const final = resultOfTurn(staged, this.turnId);
        const sink: AgentEvent[] = [];
        const end = this.endEvent(call, result, final);
        const afterHook$ = after ? this.safe('afterToolExecution', () => after(call.name, call.id, final.isError), undefined, sink) : EMPTY;
        return concat(
          of(end),
          afterHook$.pipe(concatMap(() => from(sink.splice(0)))),
          defer(() => from(sink.splice(0))),
          defer(() => from(this.messageEvents(final))),
        );
      }),
    );
  }

  /** ToolExecutionEnd, carrying the content of the final result message (a `toolResults` stage may have rewritten it). */
  private endEvent(call: ToolCall, result: ToolResult, final: ToolResultMessage): AgentEvent {
    return {
      type: 'ToolExecutionEnd',
      loopId: this.o.loopId,
      toolCallId: call.id,
      toolName: call.name,
      result: { ...result, content: final.content },
      isError: final.isError,
      ...(result.childLoopId ? { childLoopId: result.childLoopId } : {}),
      timestamp: this.now(),
    };
  }

  private messageEvents(message: ToolResultMessage): AgentEvent[] {
    return [
      { type: 'MessageStart', loopId: this.o.loopId, message, timestamp: this.now() },
      { type: 'MessageEnd', loopId: this.o.loopId, message, timestamp: this.now() },
    ];
  }

  /** Calls a hook or policy; a throw is reported as a HookError event into `sink` and read as `fallback`. */
  private safe<T>(hook: string, call: () => HookResult<T | void>, fallback: T, sink: AgentEvent[]): Observable<T> {
    return callHookSafely(call, fallback, (e) =>
      sink.push({ type: 'HookError', loopId: this.o.loopId, hook, message: errorMessage(e), timestamp: this.now() }),
    );
  }
}

/** Where one call's events go: its events, then `complete`. */
type CallObserver = Pick<Observer<AgentEvent>, 'next' | 'complete'>;

function unsubscribeFrom(teardown: TeardownLogic): void {
  if (typeof teardown === 'function') teardown();
  else teardown?.unsubscribe();
}
