/**
 * What the AG-UI tests check every output with: AG-UI's own verifier (`verifyEvents` of
 * `@ag-ui/client`, the event-order rules its clients enforce) and its schemas (`EventSchemas` of
 * `@ag-ui/core/schemas`), plus a letter per event type for marbles.
 */
import { from, lastValueFrom, map, type Observable, type OperatorFunction, toArray } from 'rxjs';
import { verifyEvents, type BaseEvent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { AgentEvent } from '../../../src/index.js';
import type { AgUiEvent } from '../../../src/protocols/ag-ui/index.js';

/** Every event parses with AG-UI's schema and the sequence passes `verifyEvents`; resolves the events, else rejects saying which failed. */
export async function checkAgUi(events: readonly AgUiEvent[]): Promise<AgUiEvent[]> {
  events.forEach((e, i) => {
    const parsed = EventSchemas.safeParse(e);
    if (!parsed.success) throw new Error(`event #${i} (${e.type}) fails AG-UI's schema: ${JSON.stringify(parsed.error.issues)}`);
  });
  // @ag-ui/client has its own rxjs: its operator is called as a function, its Observable subscribed.
  const verified$ = verifyEvents()(from(events) as unknown as Parameters<ReturnType<typeof verifyEvents>>[0]);
  return new Promise<AgUiEvent[]>((resolve, reject) => {
    const out: AgUiEvent[] = [];
    verified$.subscribe({ next: (e: BaseEvent) => out.push(e as unknown as AgUiEvent), error: reject, complete: () => resolve(out) });
  });
}

/** The events of a run through `op`, all of them. */
export function eventsOf(run$: Observable<AgentEvent>, op: OperatorFunction<AgentEvent, AgUiEvent>): Promise<AgUiEvent[]> {
  return lastValueFrom(run$.pipe(op, toArray()));
}

const LETTERS: Record<string, string> = {
  RUN_STARTED: 'R', RUN_FINISHED: 'D', RUN_ERROR: 'X', STEP_STARTED: 'S', STEP_FINISHED: 'F',
  TEXT_MESSAGE_START: 'b', TEXT_MESSAGE_CONTENT: 'c', TEXT_MESSAGE_END: 'e',
  REASONING_START: 'r', REASONING_MESSAGE_START: 'g', REASONING_MESSAGE_CONTENT: 'h', REASONING_MESSAGE_END: 'i', REASONING_ENCRYPTED_VALUE: 'v', REASONING_END: 'j',
  TOOL_CALL_START: 'T', TOOL_CALL_ARGS: 'a', TOOL_CALL_END: 'E', TOOL_CALL_RESULT: 'O',
  MESSAGES_SNAPSHOT: 'M', STATE_SNAPSHOT: 'Z', CUSTOM: 'C', ACTIVITY_SNAPSHOT: 'A',
};

/** One letter per AG-UI event (see LETTERS), for marbles. */
export const agUiLetters = (): OperatorFunction<AgUiEvent, string> => map((e) => LETTERS[e.type] ?? '?');

/** The events as a string of letters. */
export const lettersOf = (events: readonly AgUiEvent[]): string => events.map((e) => LETTERS[e.type] ?? '?').join('');
