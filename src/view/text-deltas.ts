import { filter, map, type OperatorFunction, pipe } from 'rxjs';
import type { AgentEvent, MessageUpdateEvent } from '../types/events.js';

/**
 * Just the assistant's streamed text: the text delta of every `MessageUpdate`, in order
 * (thinking and tool-call argument deltas are left out).
 *
 * ```
 * events:     --M--u(text 'Hel')--u(thinking)--u(text 'lo')--m|
 * textDeltas: -----'Hel'-----------------------'lo'------------|
 * ```
 *
 * @example
 * agent.prompt('Hi').pipe(textDeltas()).subscribe((chunk) => process.stdout.write(chunk));
 */
export function textDeltas(): OperatorFunction<AgentEvent, string> {
  return pipe(
    filter((e): e is MessageUpdateEvent => e.type === 'MessageUpdate' && e.delta.type === 'text'),
    map((e) => e.delta.delta),
  );
}
