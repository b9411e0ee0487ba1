import { asyncScheduler, from, type SchedulerLike } from 'rxjs';
import type { AgentMessage, AssistantMessage, UserMessage } from '../../types/message.js';
import {
  type OutputIssue, type OutputSchema, type OutputSpec, type OutputValidation, outputSpecOf,
} from '../../output/output-spec.js';
import { type LoopStage, loopStage, type LoopState, signalOf } from '../kernel/loop-state.js';
import { stateWith } from '../kernel/state-with.js';

export interface CheckOutputOptions {
  /** Clock for the corrective message's timestamp (default asyncScheduler). */
  scheduler?: SchedulerLike;
  /** The caller's abort signal: an aborted run's answer is not checked (default: the state's `run.signal`). */
  signal?: AbortSignal;
}

/**
 * The structured-output check where the run would end. Put it right after `decideNext`: a state
 * that ended by itself (`ended` is `stop` or `length`, no stop requested, not aborted) has its
 * last assistant message's text parsed as JSON and validated against the output schema. Valid:
 * the state leaves with `output` `{ status: 'valid', value }` (the schema's output value, transforms
 * applied). Invalid (bad JSON, or schema issues), the first time: the run is reopened (`ended`
 * cleared) with a corrective user message listing the issues (path and message) in `pending`,
 * so it takes one more turn, and `output` is `retrying`; the second time, `output` is `invalid`
 * with the issues and the raw text, and the run ends. Every other state (still running, failed,
 * aborted, stopped by a limit or a policy) passes through. No events of its own: the corrective
 * message is announced when the next turn adds it, the output goes on `AgentEnd` (`endRun`).
 *
 * ```
 * source:   --a--------b--------c--|    (ended by themselves; a: answer {"age":"x"}; b: {"age":3}; c: "oops", after a retry)
 * checkOutput(z.object({ age: z.number() }))
 * output:   --a'-------b'-------c'-|    (a': reopened, pending [fix $.age], retrying; b': valid {age: 3}; c': invalid)
 * ```
 *
 * @example
 * const turn = loopStages(startTurn(), buildRequest({ model, systemPrompt, responseFormat: responseFormatOf(Weather) }),
 *   callModel({ provider }), settleCall({ model }), recordAssistant(), endTurn({ recorded: true }), decideNext(), checkOutput(Weather));
 */
export function checkOutput(output: OutputSchema, options: CheckOutputOptions = {}): LoopStage {
  const spec = outputSpecOf(output);
  const scheduler = options.scheduler ?? asyncScheduler;
  return loopStage((state) => {
    if (!endedByItself(state, signalOf(options, state)) || state.output?.status === 'valid' || state.output?.status === 'invalid') return state;
    const text = answerText(state.messages);
    const verdict = (result: OutputValidation<unknown>): LoopState => {
      if (!result.issues) return stateWith(state, { output: { status: 'valid', value: result.value } });
      if (state.output?.status !== 'retrying') {
        return stateWith(state, { ended: undefined, pending: [...state.pending, correction(result.issues, scheduler.now())], output: { status: 'retrying', issues: result.issues } });
      }
      return stateWith(state, { output: { status: 'invalid', failure: { message: failureMessage(result.issues), issues: result.issues, text } } });
    };
    const result = validateText(spec, text);
    return result instanceof Promise ? from(result.then(verdict)) : verdict(result);
  });
}

function endedByItself(state: LoopState, signal: AbortSignal | undefined): boolean {
  return (state.ended === 'stop' || state.ended === 'length') && state.stopRequested === undefined && !signal?.aborted;
}

/**
 * Parses an answer's text as JSON (the whole text, or the one fenced ```json block it consists
 * of) and validates it; bad JSON is one issue at `$`.
 */
export function validateText<T>(spec: OutputSpec<T>, text: string): OutputValidation<T> | Promise<OutputValidation<T>> {
  let value: unknown;
  try {
    value = JSON.parse(unfenced(text));
  } catch (e) {
    const reason = text.trim() === '' ? 'the answer is empty, expected a JSON object' : `not valid JSON (${(e as Error).message})`;
    return { issues: [{ path: '$', message: reason }] };
  }
  return spec.validate(value);
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
