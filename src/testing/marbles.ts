import { map, type OperatorFunction } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { AgentEvent, AgentEventType } from '../types/events.js';
import { assertDeepEqual } from './deep-equal.js';

/** One letter per event type, for compact marble diagrams of whole runs. */
export const EVENT_LETTERS: Readonly<Record<AgentEventType, string>> = {
  AgentStart: 'A',
  AgentEnd: 'Z',
  TurnStart: 'T',
  TurnEnd: 't',
  MessageStart: 'M',
  MessageUpdate: 'u',
  MessageReset: 'w',
  MessageEnd: 'm',
  ToolExecutionStart: 'X',
  ToolExecutionUpdate: 'p',
  ToolExecutionEnd: 'x',
  ProgressMessage: 'g',
  InputRejected: 'R',
  ParallelLoopStart: 'P',
  ParallelLoopEnd: 'Q',
  CompactionStart: 'C',
  CompactionEnd: 'c',
  RetryScheduled: 'r',
  ModelFallback: 'F',
  GuardrailTripped: 'G',
  HookError: 'H',
  ToolApprovalRequested: 'V',
  ToolApprovalResolved: 'v',
  Handoff: 'O',
};

/** Maps events to their letters, so `expectObservable(run$.pipe(eventLetters())).toBe('(ATMm...)')` reads as a diagram. */
export function eventLetters(): OperatorFunction<AgentEvent, string> {
  return map((e) => EVENT_LETTERS[e.type]);
}

/** Maps events to `Type` or `Type:detail` strings, for readable sequence assertions. */
export function eventTrace(): OperatorFunction<AgentEvent, string> {
  return map(describeEvent);
}

export function describeEvent(e: AgentEvent): string {
  switch (e.type) {
    case 'MessageStart':
    case 'MessageEnd':
      return `${e.type}:${e.message.role}`;
    case 'ToolExecutionStart':
    case 'ToolExecutionEnd':
    case 'ToolExecutionUpdate':
    case 'ToolApprovalRequested':
      return `${e.type}:${e.toolName}`;
    case 'ToolApprovalResolved':
      return `${e.type}:${e.toolName}:${e.approved ? 'approved' : 'denied'}`;
    case 'TurnStart':
      return `TurnStart:${e.turnIndex}`;
    case 'AgentEnd':
      return `AgentEnd:${e.stopReason}`;
    case 'ModelFallback':
      return `ModelFallback:${e.from.id}>${e.to.id}`;
    case 'Handoff':
      return `Handoff:${e.from}>${e.to}`;
    case 'GuardrailTripped':
      return `GuardrailTripped:${e.guardrail}`;
    default:
      return e.type;
  }
}

/**
 * A TestScheduler that compares structurally (see {@link assertDeepEqual}): works under any test
 * framework, in Node or a browser.
 *
 * @example
 * const scheduler = agentTestScheduler();
 * scheduler.run(({ expectObservable }) => {
 *   const provider = scriptedProvider([{ text: 'Hi there' }]); // two deltas of four characters
 *   const context = { systemPrompt: 'Be brief.', messages: [], tools: [] };
 *   // The loop runs on the test scheduler: the whole run happens in virtual frame 0.
 *   expectObservable(agentLoop('hi', context, { model: scriptedModel(), provider, scheduler }).pipe(eventLetters())).toBe('(ATMmMuumtZ|)');
 * });
 */
export function agentTestScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => assertDeepEqual(actual, expected));
}
