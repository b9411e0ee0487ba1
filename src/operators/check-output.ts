import { asyncScheduler, concatMap, from, map, type Observable, of, type SchedulerLike } from 'rxjs';
import type { AgentMessage, AssistantMessage, UserMessage } from '../types/message.js';
import {
  type OutputIssue, type OutputSchema, type OutputSpec, type OutputValidation, outputSpecOf,
} from '../agent/output-spec.js';
import type { LoopStage, LoopState } from './loop-state.js';

export interface CheckOutputOptions {
  /** Clock for the corrective message's timestamp (default asyncScheduler). */
  scheduler?: SchedulerLike;
}

/**
 * The structured-output check at the end of a run: parses the last assistant message's text as
 * JSON and validates it against the output schema. Valid: the state leaves with `output`
 * `{ status: 'valid', value }` (the schema's output value). Invalid (bad JSON, or issues): the
 * first time, a corrective user message listing the issues (path and message) goes to `pending`,
 * so the run takes one more turn, and `output` is `retrying`; the second time `output` is
 * `invalid` with the issues and the raw text, and the run ends. A state that has ended, or has
 * pending messages, passes through. It emits no events: the corrective message is announced when
 * the next turn adds it.
 *
 * ```
 * source:   --a--------b--------c--|    (a: answer {"age":"x"}; b: then {"age":3}; c: answer "oops" after a retry)
 * checkOutput(z.object({ age: z.number() }))
 * output:   --a'-------b'-------c'-|    (a': pending [fix $.age], retrying; b': valid {age: 3}; c': invalid)
 * ```
 *
 * @example
 * const atEnd = checkOutput(z.object({ city: z.string(), temperature: z.number() }));
 * of(state).pipe(atEnd).subscribe((s) => isLoopState(s) && console.log(s.output));
 */
export function checkOutput(output: OutputSchema, options: CheckOutputOptions = {}): LoopStage {
  const spec = outputSpecOf(output);
  const scheduler = options.scheduler ?? asyncScheduler;
  return concatMap((state: LoopState) => {
    if (state.ended || state.pending.length > 0 || state.output?.status === 'valid' || state.output?.status === 'invalid') return of(state);
    const text = answerText(state.messages);
    return validateText(spec, text).pipe(
      map((result): LoopState => {
        if (!result.issues) return { ...state, output: { status: 'valid', value: result.value } };
        if (state.output?.status !== 'retrying') {
          return { ...state, pending: [...state.pending, correction(result.issues, scheduler.now())], output: { status: 'retrying', issues: result.issues } };
        }
        return { ...state, output: { status: 'invalid', failure: { message: failureMessage(result.issues), issues: result.issues, text } } };
      }),
    );
  });
}

/**
 * Parses an answer's text as JSON (the whole text, or the one fenced ```json block it consists
 * of) and validates it; bad JSON is one issue at `$`.
 */
export function validateText<T>(spec: OutputSpec<T>, text: string): Observable<OutputValidation<T>> {
  let value: unknown;
  try {
    value = JSON.parse(unfenced(text));
  } catch (e) {
    const reason = text.trim() === '' ? 'the answer is empty, expected a JSON object' : `not valid JSON (${(e as Error).message})`;
    return of({ issues: [{ path: '$', message: reason }] });
  }
  const result = spec.validate(value);
  return result instanceof Promise ? from(result) : of(result);
}

const FENCED = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

function unfenced(text: string): string {
  const trimmed = text.trim();
  return FENCED.exec(trimmed)?.[1] ?? trimmed;
}

/** The text of the last assistant message (its text parts joined). */
function answerText(messages: readonly AgentMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant') return (m as AssistantMessage).content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  }
  return '';
}

function issueLines(issues: readonly OutputIssue[]): string {
  return issues.map((i) => `- ${i.path}: ${i.message}`).join('\n');
}

function failureMessage(issues: readonly OutputIssue[]): string {
  return `The answer did not match the output schema after a corrective turn:\n${issueLines(issues)}`;
}

function correction(issues: readonly OutputIssue[], timestamp: number): UserMessage {
  const text = `Your answer did not match the required output schema:\n${issueLines(issues)}\nAnswer again with only the corrected JSON object.`;
  return { role: 'user', content: [{ type: 'text', text }], timestamp };
}
