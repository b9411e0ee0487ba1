import type { AgentEvent, MessageUpdateEvent, TurnEndEvent } from '../../types/events.js';
import type { AgentMessage, AssistantMessage } from '../../types/message.js';
import { applyDelta, type PartialMessage, startPartial } from '../../view/partial-message.js';
import type { WireEvent } from './wire.js';

/**
 * The receiving side of {@link WireEvent}s: gives every `MessageUpdate` back its partial message,
 * rebuilt from the deltas per loop (immutable snapshots; unchanged blocks reference-equal).
 * A `MessageUpdate` whose loop has no message started fails with an error naming the loop.
 */
export function createEventRebuilder(): (event: WireEvent) => AgentEvent {
  const partials = new Map<string, PartialMessage>();
  const ended = new Map<string, AgentMessage[]>(); // per loop: each MessageEnd message
  const known = (loopId: string, what: string): AgentMessage[] => {
    const messages = ended.get(loopId);
    if (!messages) throw new Error(`${what} of loop ${loopId} refers to MessageEnd events this client never received (it joined mid-run): connect from the start`);
    return messages;
  };
  return (event) => {
    switch (event.type) {
      case 'AgentStart':
        ended.set(event.loopId, []);
        return event;
      case 'TurnEnd': {
        if (event.message) return event as TurnEndEvent;
        const { messagePatch, ...rest } = event;
        const message = known(event.loopId, 'TurnEnd').at(-1);
        if (!message) throw new Error(`TurnEnd of loop ${event.loopId} has no message and no MessageEnd came before it`);
        return { ...rest, message: (messagePatch ? { ...message, ...messagePatch } : message) as AgentMessage };
      }
      case 'MessageStart':
        if (event.message.role === 'assistant') partials.set(event.loopId, startPartial(event.message as AssistantMessage));
        return event;
      case 'MessageReset': // a retry diverged: following deltas build on the message it carries
        partials.set(event.loopId, startPartial(event.message));
        return event;
      case 'MessageUpdate': {
        const current = partials.get(event.loopId);
        if (!current) throw new Error(`MessageUpdate for loop ${event.loopId} arrived before its MessageStart`);
        const next = applyDelta(current, event.delta);
        partials.set(event.loopId, next);
        return { ...event, message: next.message } satisfies MessageUpdateEvent;
      }
      case 'MessageEnd': {
        const { messagePatch, ...rest } = event;
        const partial = partials.get(event.loopId);
        partials.delete(event.loopId);
        if (!event.message && !partial) throw new Error(`MessageEnd of loop ${event.loopId} has no message and no MessageStart came before it`);
        const message = event.message ?? ({ ...partial!.message, ...messagePatch } as AgentMessage);
        ended.get(event.loopId)?.push(message);
        return { ...rest, message };
      }
      case 'AgentEnd': {
        partials.delete(event.loopId);
        const { messagePatches, ...rest } = event;
        const base = event.messages ?? known(event.loopId, 'AgentEnd');
        ended.delete(event.loopId);
        const messages = messagePatches ? base.map((m, i) => ({ ...m, ...messagePatches[i] }) as AgentMessage) : base;
        return { ...rest, messages };
      }
      default:
        return event;
    }
  };
}
