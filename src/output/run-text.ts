import { concatMap, defer, type Observable, type OperatorFunction } from 'rxjs';
import type { AgentEndEvent, AgentEvent } from '../types/events.js';
import type { AssistantMessage } from '../types/message.js';
import { runToEnd, toAsyncIterable } from '../sources/interop.js';

/**
 * A run that did not end with an answer: the provider failed (`stopReason: 'error'`), it was
 * aborted, or an input filter rejected the prompt. Thrown by the text conveniences (`run`,
 * `runText`, `textStream`); the AgentEnd stays on `end` for anyone who wants the details.
 */
export class AgentRunError extends Error {
  override readonly name = 'AgentRunError';
  constructor(
    /** The run's AgentEnd event: messages, usage, stop reason. */
    readonly end: AgentEndEvent,
  ) {
    super(describeFailure(end));
  }
}

function describeFailure(end: AgentEndEvent): string {
  if (end.rejection !== undefined) return `The prompt was rejected: ${end.rejection}`;
  if (end.stopReason === 'aborted') return 'The agent run was aborted';
  if (!isFailedEnd(end)) return `The agent run ended without a structured output to give (it stopped with reason "${end.stopReason}")`;
  const error = lastAssistant(end)?.errorMessage;
  return `The agent run failed: ${error ?? `it stopped with reason "${end.stopReason}"`}`;
}

/** Whether a run's end is a failure the text conveniences throw for. */
export function isFailedEnd(end: AgentEndEvent): boolean {
  return end.rejection !== undefined || end.stopReason === 'error' || end.stopReason === 'aborted';
}

function lastAssistant(end: AgentEndEvent): AssistantMessage | undefined {
  for (let i = end.messages.length - 1; i >= 0; i--) {
    const message = end.messages[i]!;
    if (message.role === 'assistant') return message;
  }
  return undefined;
}

/** The text of the run's last assistant message (its text parts joined); `''` when it has none. */
export function finalText(end: AgentEndEvent): string {
  const message = lastAssistant(end);
  if (!message) return '';
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/**
 * Runs `run$` to its end and resolves the final answer's text; rejects with an
 * {@link AgentRunError} when the run failed, was aborted or its prompt was rejected.
 *
 * @example
 * const answer = await runText(agentLoop([userMessage('What is 2+2?')], context, config));
 */
export async function runText(run$: Observable<AgentEvent>): Promise<string> {
  const end = await runToEnd(run$);
  if (isFailedEnd(end)) throw new AgentRunError(end);
  return finalText(end);
}

/**
 * The text deltas of a run's own assistant messages (sub-agents' and parallel children's left
 * out); errors with an {@link AgentRunError} when the run fails.
 *
 * ```
 * run$:   --S--U(Hel)--U(lo)--E(stop)--|
 * result: -----Hel-----lo-------------|
 * ```
 *
 * @example
 * agent.prompt('Tell me a story').pipe(textDeltas()).subscribe((chunk) => process.stdout.write(chunk));
 */
export function textDeltas(): OperatorFunction<AgentEvent, string> {
  return (run$) =>
    defer(() => {
      // Loops started by this run on behalf of a parent loop (sub-agents, parallel children).
      const children = new Set<string>();
      return run$.pipe(
        concatMap((event): string[] => {
          if (event.type === 'AgentStart' && event.parentLoopId !== undefined) children.add(event.loopId);
          if (event.type === 'AgentEnd' && !children.has(event.loopId) && isFailedEnd(event)) throw new AgentRunError(event);
          if (event.type !== 'MessageUpdate' || event.delta.type !== 'text' || children.has(event.loopId)) return [];
          return [event.delta.delta];
        }),
      );
    });
}

/**
 * `for await` over just the text of a run, chunk by chunk. Breaking out of the loop cancels the run.
 *
 * @example
 * for await (const chunk of textStream(agent.prompt('Tell me a story'))) process.stdout.write(chunk);
 */
export function textStream(run$: Observable<AgentEvent>): AsyncIterable<string> {
  return toAsyncIterable(run$.pipe(textDeltas()));
}
