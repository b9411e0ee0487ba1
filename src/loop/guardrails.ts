import { catchError, defer, first, map, merge, type MonoTypeOperatorFunction, type Observable, of, concatMap, throwError } from 'rxjs';
import type { ToolCall } from '../types/content.js';
import type { AgentEvent, GuardrailKind } from '../types/events.js';
import { type AgentMessage, type AssistantMessage, type ToolResultMessage, toolCallsOf } from '../types/message.js';
import type { HookResult, PreDispatchPolicy, PreDispatchVerdict } from '../types/hooks.js';
import { AgentError, errorMessage } from '../types/errors.js';
import { fromHookResult } from '../sources/hook-result.js';
import { directStage, type LoopStage, type LoopState, runStage } from './kernel/loop-state.js';

/** What a guardrail says: `tripwire: true` trips it; `info` is carried on `GuardrailTripped`; `message` is what the model is told when a tool guardrail rejects a call. */
export interface GuardrailVerdict {
  readonly tripwire: boolean;
  readonly info?: unknown;
  readonly message?: string;
}

/**
 * A named check. Input guardrails run `parallel` (default: beside the first model call, which a
 * trip cancels) or `blocking` (before it); the mode of the other kinds does not matter.
 */
export interface Guardrail<C> {
  readonly name: string;
  check(ctx: C): HookResult<GuardrailVerdict>;
  readonly mode?: 'parallel' | 'blocking';
}

/** What an input guardrail checks: the run's prompts, and the context they joined. */
export interface InputGuardrailContext {
  readonly prompts: readonly AgentMessage[];
  readonly messages: readonly AgentMessage[];
}

/** What an output guardrail checks: the final answer, its text and the structured output (when `config.output` validated one). */
export interface OutputGuardrailContext {
  readonly answer: AssistantMessage;
  readonly text: string;
  readonly output?: unknown;
  readonly messages: readonly AgentMessage[];
}

/** What a tool-input guardrail checks: the call about to run. */
export interface ToolInputGuardrailContext {
  readonly call: ToolCall;
  readonly messages: readonly AgentMessage[];
}

/** What a tool-output guardrail checks: a call's result, before the model sees it. */
export interface ToolOutputGuardrailContext {
  readonly call: { readonly id: string; readonly name: string };
  readonly result: ToolResultMessage;
}

/** `config.guardrails`: the checks of each kind, and what a check that throws or fails counts as. */
export interface LoopGuardrails {
  /** Checked on the run's first model call: a trip ends the run (`guardRail`). */
  input?: readonly Guardrail<InputGuardrailContext>[];
  /** Checked on the final answer before `AgentEnd`: a trip ends the run as `guardRail` and withholds `output`. */
  output?: readonly Guardrail<OutputGuardrailContext>[];
  /** Checked before each tool call: a trip rejects the call with a message to the model (the run goes on). */
  toolInput?: readonly Guardrail<ToolInputGuardrailContext>[];
  /** Checked on each tool result: a trip replaces it with a message to the model (the run goes on). */
  toolOutput?: readonly Guardrail<ToolOutputGuardrailContext>[];
  /** What a guardrail that throws, fails or answers no verdict counts as: `trip` (default) or `pass`. */
  onError?: 'trip' | 'pass';
}

/** A tripped guardrail: its name and verdict, or its failure (`error`) when a failure trips. */
export interface Trip {
  readonly guardrail: string;
  readonly info?: unknown;
  readonly message?: string;
  readonly error?: string;
}

/** How a guardrail failed: reported by the stage (as a `HookError`). */
export type GuardrailFailure = (kind: GuardrailKind, guardrail: string, message: string) => void;

/**
 * Runs every guardrail at once: the first trip (the others are then unsubscribed), or `undefined`
 * once all passed. A failure is handed to `failed` and, with `onError: 'trip'`, trips.
 */
export function firstTrip<C>(kind: GuardrailKind, guardrails: readonly Guardrail<C>[], ctx: C, onError: 'trip' | 'pass', failed: GuardrailFailure): Observable<Trip | undefined> {
  if (guardrails.length === 0) return of(undefined);
  return merge(...guardrails.map((g) => verdictOf(kind, g, ctx, onError, failed))).pipe(first((t): t is Trip => t !== undefined, undefined));
}

function verdictOf<C>(kind: GuardrailKind, g: Guardrail<C>, ctx: C, onError: 'trip' | 'pass', failed: GuardrailFailure): Observable<Trip | undefined> {
  const failure = (message: string): Observable<Trip | undefined> => {
    failed(kind, g.name, message);
    return of(onError === 'pass' ? undefined : { guardrail: g.name, error: message });
  };
  return defer(() => fromHookResult(g.check(ctx))).pipe(
    concatMap((v) => {
      if (v === null || typeof v !== 'object' || typeof v.tripwire !== 'boolean') return failure(`answered ${v === null ? 'null' : typeof v}, expected { tripwire: boolean }`);
      return of(v.tripwire ? trip(g.name, v) : undefined);
    }),
    catchError((e: unknown) => failure(errorMessage(e))),
  );
}

function trip(guardrail: string, v: GuardrailVerdict): Trip {
  return { guardrail, ...(v.info !== undefined ? { info: v.info } : {}), ...(v.message !== undefined ? { message: v.message } : {}) };
}

const KINDS = ['input', 'output', 'toolInput', 'toolOutput'] as const;

/**
 * Checks `config.guardrails`: an object of guardrail lists (each entry named, with a `check`
 * function and a known mode; no name twice in a list) and `onError`. Throws AgentError
 * ('InvalidConfig') naming the entry (`config.guardrails.input[1].check: expected a function`).
 */
export function checkGuardrails(guardrails: unknown): void {
  if (guardrails === undefined) return;
  if (guardrails === null || typeof guardrails !== 'object' || Array.isArray(guardrails)) throw invalid('', 'expected { input?, output?, toolInput?, toolOutput?, onError? }');
  const record = guardrails as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== 'onError' && !(KINDS as readonly string[]).includes(key)) throw invalid(`.${key}`, `unknown kind (expected ${KINDS.join(', ')} or onError)`);
  }
  if (record.onError !== undefined && record.onError !== 'trip' && record.onError !== 'pass') throw invalid('.onError', `expected 'trip' or 'pass', got ${JSON.stringify(record.onError)}`);
  for (const kind of KINDS) checkList(record[kind], `.${kind}`);
}

function checkList(list: unknown, at: string): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) throw invalid(at, 'expected an array of guardrails ({ name, check, mode? })');
  const names = new Set<string>();
  list.forEach((g: unknown, i) => {
    const r = g as Partial<Guardrail<unknown>> | null;
    const entry = `${at}[${i}]`;
    if (r === null || typeof r !== 'object') throw invalid(entry, 'expected { name, check, mode? }');
    if (typeof r.name !== 'string' || r.name === '') throw invalid(`${entry}.name`, 'expected a non-empty string');
    if (typeof r.check !== 'function') throw invalid(`${entry}.check`, 'expected a function');
    if (r.mode !== undefined && r.mode !== 'parallel' && r.mode !== 'blocking') throw invalid(`${entry}.mode`, `expected 'parallel' or 'blocking', got ${JSON.stringify(r.mode)}`);
    if (names.has(r.name)) throw invalid(`${entry}.name`, `"${r.name}" is used twice`);
    names.add(r.name);
  });
}

function invalid(at: string, reason: string): AgentError {
  return new AgentError('InvalidConfig', `config.guardrails${at}: ${reason}`);
}

/** The text a rejected call's result carries. */
export function rejectionText(verb: string, t: Trip): string {
  const why = t.message ?? (t.error !== undefined ? `the check failed: ${t.error}` : undefined);
  return `${verb} by guardrail "${t.guardrail}"${why ? `: ${why}` : ''}`;
}

/**
 * The tool-input guardrails as a pre-dispatch policy: a trip skips the call, whose result tells the
 * model `Rejected by guardrail "name": message`. With `reports`, the trip is a `GuardrailTripped`
 * event (kind `toolInput`, with the call's id) and a failing guardrail a `HookError` (hook
 * `guardrail`), among the events of the call; without, a failure with `onError: 'pass'` is reported
 * by the dispatch as a `HookError` (hook `preDispatch`).
 */
export function toolInputPolicy(guardrails: readonly Guardrail<ToolInputGuardrailContext>[], onError: 'trip' | 'pass', reports?: ToolGuardrailReports): PreDispatchPolicy {
  return (call, { messages }) => {
    const failures: string[] = [];
    const failed: GuardrailFailure = (kind, name, message) => {
      if (reports) reports.failed(call.id, `${kind} guardrail "${name}" failed: ${message}`);
      else failures.push(`${kind} guardrail "${name}" failed: ${message}`);
    };
    return firstTrip('toolInput', guardrails, { call, messages }, onError, failed).pipe(
      concatMap((t): Observable<PreDispatchVerdict | undefined> => {
        if (t) {
          reports?.tripped(call.id, 'toolInput', t);
          return of({ action: 'skip', reason: rejectionText('Rejected', t) });
        }
        return failures.length > 0 ? throwError(() => new Error(failures.join('; '))) : of(undefined);
      }),
    );
  };
}

/**
 * The tool-output guardrails as a tool-result stage: a trip replaces the result's content with
 * `Withheld by guardrail "name": message` (an error result). With `reports`, the trip is a
 * `GuardrailTripped` event (kind `toolOutput`) and a failing guardrail a `HookError`, among the
 * events of the call.
 */
export function toolOutputStage(guardrails: readonly Guardrail<ToolOutputGuardrailContext>[], onError: 'trip' | 'pass', reports?: ToolGuardrailReports): MonoTypeOperatorFunction<ToolResultMessage> {
  return concatMap((result) => {
    const failed: GuardrailFailure = (kind, name, message) => reports?.failed(result.toolCallId, `${kind} guardrail "${name}" failed: ${message}`);
    return firstTrip('toolOutput', guardrails, { call: { id: result.toolCallId, name: result.toolName }, result }, onError, failed).pipe(
      map((t): ToolResultMessage => {
        if (!t) return result;
        reports?.tripped(result.toolCallId, 'toolOutput', t);
        return { ...result, content: [{ type: 'text', text: rejectionText('Withheld', t) }], isError: true };
      }),
    );
  });
}

/**
 * Where the tool guardrails' trips and failures go: out with the events of the tool stage that
 * runs the call (`around(dispatch)`), found by the call's id, so that interleaved runs sharing one
 * composition each hear of their own calls.
 */
export class ToolGuardrailReports {
  private readonly byCall = new Map<string, { readonly state: LoopState; readonly event: (event: AgentEvent) => void }>();
  constructor(private readonly now: () => number) {}

  /** The tool stage, with the calls of the state's message heard while it runs them. */
  around(stage: LoopStage): LoopStage {
    return directStage((state, sink) => {
      const ids = state.assistant ? toolCallsOf(state.assistant).map((c) => c.id) : [];
      const entry = { state, event: sink.event };
      for (const id of ids) this.byCall.set(id, entry);
      const forget = (): void => {
        for (const id of ids) if (this.byCall.get(id) === entry) this.byCall.delete(id);
      };
      const stop = runStage(stage, state, {
        event: sink.event, state: sink.state,
        error: (e) => (forget(), sink.error(e)),
        done: (left) => (forget(), sink.done(left)),
      });
      return () => {
        forget();
        if (stop) stop();
      };
    });
  }

  tripped(toolCallId: string, kind: 'toolInput' | 'toolOutput', t: Trip): void {
    const to = this.byCall.get(toolCallId);
    to?.event({
      type: 'GuardrailTripped', loopId: to.state.loopId, turnIndex: to.state.turnIndex, guardrail: t.guardrail, kind, toolCallId, timestamp: this.now(),
      ...(t.info !== undefined ? { info: t.info } : {}), ...(t.error !== undefined ? { error: t.error } : {}),
    });
  }

  failed(toolCallId: string, message: string): void {
    const to = this.byCall.get(toolCallId);
    to?.event({ type: 'HookError', loopId: to.state.loopId, hook: 'guardrail', message, timestamp: this.now() });
  }
}
