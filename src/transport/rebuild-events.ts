import type { AgentEvent, MessageUpdateEvent } from '../types/events.js';
import type { AssistantMessage } from '../types/message.js';
import { applyDelta, type PartialMessage, startPartial } from '../view/partial-message.js';
import type { WireEvent } from './wire.js';

/**
 * The receiving side of {@link WireEvent}s: gives every `MessageUpdate` back its partial message,
 * rebuilt from the deltas per loop (immutable snapshots; unchanged blocks reference-equal).
 * A `MessageUpdate` whose loop has no message started fails with an error naming the loop.
 */
export function createEventRebuilder(): (event: WireEvent) => AgentEvent {
  const partials = new Map<string, PartialMessage>();
  return (event) => {
    switch (event.type) {
      case 'MessageStart':
        if (event.message.role === 'assistant') partials.set(event.loopId, startPartial(event.message as AssistantMessage));
        return event;
      // A MessageReset will be one more case here: `partials.set(event.loopId, startPartial(event.message))`.
      case 'MessageUpdate': {
        const current = partials.get(event.loopId);
        if (!current) throw new Error(`MessageUpdate for loop ${event.loopId} arrived before its MessageStart`);
        const next = applyDelta(current, event.delta);
        partials.set(event.loopId, next);
        return { ...event, message: next.message } satisfies MessageUpdateEvent;
      }
      case 'MessageEnd':
      case 'AgentEnd':
        partials.delete(event.loopId);
        return event;
      default:
        return event;
    }
  };
}
