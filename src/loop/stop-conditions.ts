import { concatMap, type Observable, of } from 'rxjs';
import type { AgentMessage, AssistantMessage, ToolResultMessage } from '../types/message.js';
import { textOf, toolCallsOf } from '../types/message.js';
import type { HookResult } from '../types/hooks.js';
import { Usage } from '../types/usage.js';
import { fromHookResult, isSyncResult } from '../sources/hook-result.js';

/** What a stop condition is asked after a turn (the `stopWhen` stage builds it). */
export interface StopContext {
  /** The turns run so far, the one that just ended included. */
  readonly turns: number;
  /** The index of the turn that just ended. */
  readonly turnIndex: number;
  /** That turn's assistant message. */
  readonly assistant: AssistantMessage | undefined;
  /** That turn's tool results. */
  readonly toolResults: readonly ToolResultMessage[];
  /** The context as it stands. */
  readonly messages: readonly AgentMessage[];
  /** Every message the run added so far. */
  readonly newMessages: readonly AgentMessage[];
  /** The usage of the run's assistant messages so far. */
  readonly usage: Usage;
  /** The run's cost so far in USD, at the model's prices (0 when the model has none). */
  readonly cost: number;
}

/**
 * Whether the run stops after this turn: a predicate over the {@link StopContext}, answering now,
 * with a Promise or with an Observable (its first value). `label` names it on `AgentEnd.stoppedBy`
 * (the ready-made conditions name themselves: `turnCount(3)`).
 */
export interface StopCondition {
  (ctx: StopContext): HookResult<boolean>;
  readonly label?: string;
}

/** A condition with its label (what `AgentEnd.stoppedBy.condition` says when it holds). */
export function labelled(condition: (ctx: StopContext) => HookResult<boolean>, label: string): StopCondition {
  return Object.assign((ctx: StopContext) => condition(ctx), { label });
}

/** The label of a condition: its own, else its function name, else `stopWhen[index]`. */
export function labelOf(condition: StopCondition, index: number): string {
  return condition.label ?? (condition.name !== '' ? condition.name : `stopWhen[${index}]`);
}

/**
 * Holds once `n` turns have run (`turnCount(1)`: after the first). Unlike `limits.maxTurns`, no
 * message is added: the run ends with the turn's results as they are.
 *
 * @example
 * agentLoop(prompt, context, { model, stopWhen: turnCount(5) });
 */
export function turnCount(n: number): StopCondition {
  checkCount('turnCount', n);
  return labelled((ctx) => ctx.turns >= n, `turnCount(${n})`);
}

/**
 * Holds when the turn's message called the tool `name` (the run ends once that call has its result).
 *
 * @example
 * agentLoop(prompt, context, { model, stopWhen: toolCalled('submitAnswer') });
 */
export function toolCalled(name: string): StopCondition {
  if (typeof name !== 'string' || name === '') throw new TypeError(`toolCalled: expected a tool name, got ${JSON.stringify(name)}`);
  return labelled((ctx) => ctx.assistant !== undefined && toolCallsOf(ctx.assistant).some((c) => c.name === name), `toolCalled(${name})`);
}

/**
 * Holds once the run's cost is over `usd`, at the prices of the model (`model.cost`; a chain: each
 * turn's model). A model without prices costs 0, so the condition never holds.
 *
 * @example
 * agentLoop(prompt, context, { model, stopWhen: costOver(0.25) });
 */
export function costOver(usd: number): StopCondition {
  checkCount('costOver', usd);
  return labelled((ctx) => ctx.cost > usd, `costOver(${usd})`);
}

/**
 * Holds once the run's tokens (input, output, cache reads and writes) are over `n`.
 *
 * @example
 * agentLoop(prompt, context, { model, stopWhen: tokensOver(50_000) });
 */
export function tokensOver(n: number): StopCondition {
  checkCount('tokensOver', n);
  return labelled((ctx) => Usage.tokensOf(ctx.usage) > n, `tokensOver(${n})`);
}

/**
 * Holds when the text of the turn's message matches `pattern` (a string is found as is; a RegExp's
 * `g` / `y` flags and `lastIndex` do not matter).
 *
 * @example
 * agentLoop(prompt, context, { model, stopWhen: textMatches(/FINAL ANSWER:/) });
 */
export function textMatches(pattern: RegExp | string): StopCondition {
  if (typeof pattern !== 'string' && !(pattern instanceof RegExp)) throw new TypeError('textMatches: expected a RegExp or a string');
  const found = (text: string): boolean => (typeof pattern === 'string' ? text.includes(pattern) : new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '')).test(text));
  return labelled((ctx) => ctx.assistant !== undefined && found(textOf(ctx.assistant)), `textMatches(${String(pattern)})`);
}

/**
 * Holds when any of `conditions` holds (asked in order, the rest not asked once one holds); what an
 * array given to `stopWhen` means too.
 *
 * @example
 * stopWhen: anyOf(turnCount(10), allOf(toolCalled('search'), tokensOver(20_000)))
 */
export function anyOf(...conditions: StopCondition[]): StopCondition {
  return labelled((ctx) => decide(conditions, 0, ctx, true), `anyOf(${conditions.map(labelOf).join(', ')})`);
}

/**
 * Holds when every one of `conditions` holds (asked in order, the rest not asked once one does not).
 *
 * @example
 * stopWhen: allOf(toolCalled('search'), turnCount(3))
 */
export function allOf(...conditions: StopCondition[]): StopCondition {
  return labelled((ctx) => decide(conditions, 0, ctx, false), `allOf(${conditions.map(labelOf).join(', ')})`);
}

/** `any`: the first that holds decides (true); else the first that does not (false). Answers now while every answer is synchronous. */
function decide(conditions: readonly StopCondition[], from: number, ctx: StopContext, any: boolean): HookResult<boolean> {
  for (let i = from; i < conditions.length; i++) {
    const answer = conditions[i]!(ctx);
    if (isSyncResult(answer)) {
      if (answer === any) return any;
      continue;
    }
    return fromHookResult(answer).pipe(concatMap((a): Observable<boolean> => (a === any ? of(any) : asObservable(decide(conditions, i + 1, ctx, any)))));
  }
  return !any;
}

function asObservable(answer: HookResult<boolean>): Observable<boolean> {
  return isSyncResult(answer) ? of(answer) : fromHookResult(answer).pipe(concatMap((a) => of(a === true)));
}

function checkCount(name: string, n: number): void {
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new RangeError(`${name}: expected a finite number >= 0, got ${String(n)}`);
}
