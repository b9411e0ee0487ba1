import { defer, map, type OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { createWireEncoder, encodeSseEvent } from './wire.js';

export interface SseFramesOptions {
  /** The id of the first event (default 1); each next event gets the next integer. */
  firstId?: number;
}

/**
 * Serializes agent events to Server-Sent Event frames, one per event, at the moment it is
 * emitted (so a live partial message is captured as it was): `id:` counts up per event,
 * `event:` is the type, `data:` compact JSON; a `MessageUpdate` carries only its delta, and a
 * `TurnEnd` / `AgentEnd` leaves out messages already sent (see {@link createWireEncoder}).
 * Pair it with {@link withHeartbeats} for idle connections; the node handler in
 * `phi-rx/transport/node` adds resume on top.
 *
 * ```
 * events: --A--u--Z|
 * frames: --a--b--c|   (a: "id: 1\nevent: AgentStart\ndata: {...}\n\n", b: id 2, c: id 3)
 * ```
 *
 * @example
 * agent.prompt('Hi').pipe(toSseFrames()).subscribe((frame) => res.write(frame));
 */
export function toSseFrames(options: SseFramesOptions = {}): OperatorFunction<AgentEvent, string> {
  const first = options.firstId ?? 1;
  return (events) =>
    defer(() => {
      const encode = createWireEncoder();
      return events.pipe(map((event, index) => encodeSseEvent(first + index, encode(event))));
    });
}
