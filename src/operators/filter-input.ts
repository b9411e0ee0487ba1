import { catchError, concatMap, from, map, type Observable, type OperatorFunction, of, reduce, takeWhile } from 'rxjs';
import type { AgentMessage } from '../types/message.js';
import type { InputFilter, InputVerdict } from '../types/hooks.js';
import { errorMessage } from '../types/errors.js';
import { fromHookResult } from '../sources/hook-result.js';

/** The outcome of filtering one batch of incoming messages. */
export type FilteredInput =
  | { action: 'pass'; messages: AgentMessage[]; warnings: string[] }
  | { action: 'reject'; reason: string; message: AgentMessage };

/**
 * Runs input filters over each batch of incoming messages (prompts, steering, follow-ups).
 * Filters run in order on every user message; the first Reject wins and the batch is refused
 * (later filters are not consulted for that message, nor later messages of the batch);
 * a Warn appends "[Warning: msg]" to that message's text; non-user messages pass untouched.
 * A filter that throws counts as a rejection naming the error: an unsafe input never slips by.
 *
 * ```
 * source:        --a--b--|         (a, b: batches of user messages)
 * filterInput([noSecrets])
 * output:        --A--R--|         (A: pass with warnings, R: reject with reason)
 * ```
 *
 * @example
 * of([userMessage('hello')]).pipe(
 *   filterInput([(m) => textOf(m).includes('password') ? InputVerdict.reject('no secrets') : InputVerdict.pass()]),
 * );
 */
export function filterInput(filters: readonly InputFilter[]): OperatorFunction<readonly AgentMessage[], FilteredInput> {
  return (batches) => batches.pipe(concatMap((batch) => filterBatch(batch, filters)));
}

function filterBatch(batch: readonly AgentMessage[], filters: readonly InputFilter[]): Observable<FilteredInput> {
  return from(batch).pipe(
    concatMap((message) => filterMessage(message, filters)),
    takeWhile((one) => one.action !== 'reject', true),
    reduce<FilteredOne, FilteredInput>(
      (acc, one) => {
        if (acc.action === 'reject') return acc;
        if (one.action === 'reject') return one;
        acc.messages.push(one.message);
        acc.warnings.push(...one.warnings);
        return acc;
      },
      { action: 'pass', messages: [], warnings: [] },
    ),
  );
}

type FilteredOne = { action: 'pass'; message: AgentMessage; warnings: string[] } | { action: 'reject'; reason: string; message: AgentMessage };

function filterMessage(message: AgentMessage, filters: readonly InputFilter[]): Observable<FilteredOne> {
  if (message.role !== 'user' || filters.length === 0) return from([{ action: 'pass' as const, message, warnings: [] }]);
  return from(filters).pipe(
    concatMap((filter) => safeVerdict(filter, message)),
    // The first Reject short-circuits: later filters are never called.
    takeWhile((v) => v.action !== 'reject', true),
    reduce<InputVerdict, InputVerdict[]>((all, v) => (all.push(v), all), []),
    map((verdicts): FilteredOne => {
      const rejected = verdicts.find((v): v is Extract<InputVerdict, { action: 'reject' }> => v.action === 'reject');
      if (rejected) return { action: 'reject', reason: rejected.reason, message };
      const warnings = verdicts.flatMap((v) => (v.action === 'warn' ? [v.message] : []));
      return { action: 'pass', message: withWarnings(message, warnings), warnings };
    }),
  );
}

function safeVerdict(filter: InputFilter, message: AgentMessage): Observable<InputVerdict> {
  const failed = (e: unknown): InputVerdict => ({ action: 'reject', reason: `Input filter failed: ${errorMessage(e)}` });
  let result;
  try {
    result = filter(message);
  } catch (e) {
    return of(failed(e));
  }
  // An async filter fails by rejecting its Promise or erroring its Observable: that is a throw too.
  return fromHookResult(result).pipe(
    map((v) => v ?? { action: 'pass' as const }),
    catchError((e: unknown) => of(failed(e))),
  );
}

function withWarnings(message: AgentMessage, warnings: string[]): AgentMessage {
  if (warnings.length === 0 || message.role !== 'user') return message;
  const note = warnings.map((w) => `[Warning: ${w}]`).join('\n');
  const content = [...message.content];
  const lastText = content.map((c) => c.type).lastIndexOf('text');
  if (lastText >= 0) {
    const block = content[lastText] as { type: 'text'; text: string };
    content[lastText] = { type: 'text', text: `${block.text}\n${note}` };
  } else content.push({ type: 'text', text: note });
  return { ...message, content };
}
