import type { AgentEndEvent, AgentEvent, MessageEndEvent, MessageUpdateEvent, TurnEndEvent } from '../../types/events.js';
import type { AssistantMessage } from '../../types/message.js';
import { DeltaTracker } from './delta-tracker.js';

/** Top-level fields to set on a message already received (a `turnId` added after its MessageEnd). */
export type MessagePatch = Readonly<Record<string, unknown>>;

/**
 * An event as it crosses the wire: a `MessageUpdate` carries only its delta (the receiver
 * rebuilds the partial message), so a streamed reply costs bytes linear in its length. A
 * `MessageEnd` without `message` means the message rebuilt from its deltas with `messagePatch`
 * applied; a `TurnEnd` without `message` means its loop's last `MessageEnd` message with `messagePatch`
 * applied; an `AgentEnd` without `messages` means every `MessageEnd` message of its loop, in
 * order, each with its `messagePatches[i]` applied (the encoder leaves them out only when that
 * rebuilds them exactly).
 */
export type WireEvent =
  | Exclude<AgentEvent, MessageUpdateEvent | MessageEndEvent | TurnEndEvent | AgentEndEvent>
  | Omit<MessageUpdateEvent, 'message'>
  | (Omit<MessageEndEvent, 'message'> & { message?: MessageEndEvent['message']; messagePatch?: MessagePatch })
  | (Omit<TurnEndEvent, 'message'> & { message?: TurnEndEvent['message']; messagePatch?: MessagePatch })
  | (Omit<AgentEndEvent, 'messages'> & { messages?: AgentEndEvent['messages']; messagePatches?: MessagePatch[] });

/** SSE `event:` names the transport itself sends, next to the agent event types. */
export const TRANSPORT_EVENTS = {
  /** The stream cannot go on (`data`: `{ code, message }`): a resume gap, a failed run. */
  error: 'phi-rx:error',
  /** The run is over and every event has been sent. */
  end: 'phi-rx:end',
} as const;

/** What a `phi-rx:error` frame carries. */
export interface TransportErrorData {
  code: 'ResumeGap' | 'RunFailed' | 'UnknownRun';
  message: string;
}

/** The stateless wire form of an event: a MessageUpdate without its partial message. */
export function toWireEvent(event: AgentEvent): WireEvent {
  if (event.type !== 'MessageUpdate') return event;
  const { message: _partial, ...rest } = event;
  return rest;
}

/**
 * The wire form for one stream, from its first event: {@link toWireEvent}, and besides a
 * `TurnEnd` / `AgentEnd` sends of the message(s) the receiver already has from the loop's
 * `MessageEnd`s only the top-level fields that changed since (compared as JSON, so the receiver
 * rebuilds them exactly; anything else is sent in full).
 */
export function createWireEncoder(): (event: AgentEvent) => WireEvent {
  const ended = new Map<string, string[]>(); // per loop: the JSON of each MessageEnd message, as sent
  const partials = new Map<string, DeltaTracker>(); // per loop: the message as the receiver rebuilds it
  return (event) => {
    switch (event.type) {
      case 'AgentStart':
        ended.set(event.loopId, []);
        return event;
      case 'MessageStart':
        if (event.message.role === 'assistant') partials.set(event.loopId, new DeltaTracker(event.message as AssistantMessage));
        return event;
      case 'MessageReset':
        partials.set(event.loopId, new DeltaTracker(event.message));
        return event;
      case 'MessageUpdate':
        partials.get(event.loopId)?.apply(event.delta);
        return toWireEvent(event);
      case 'MessageEnd': {
        const json = JSON.stringify(event.message);
        ended.get(event.loopId)?.push(json);
        const partial = partials.get(event.loopId);
        partials.delete(event.loopId);
        const rebuilt = partial?.result();
        const patch = rebuilt && patchOf(JSON.stringify(rebuilt), event.message);
        if (!patch) return event;
        const { message: _rebuilt, ...rest } = event;
        return Object.keys(patch).length ? { ...rest, messagePatch: patch } : rest;
      }
      case 'TurnEnd': {
        const last = ended.get(event.loopId)?.at(-1);
        const patch = last === undefined ? undefined : patchOf(last, event.message);
        if (!patch) return event;
        const { message: _known, ...rest } = event;
        return Object.keys(patch).length ? { ...rest, messagePatch: patch } : rest;
      }
      case 'AgentEnd': {
        const sent = ended.get(event.loopId);
        ended.delete(event.loopId);
        if (!sent || sent.length !== event.messages.length) return event;
        const patches = event.messages.map((m, i) => patchOf(sent[i]!, m));
        if (patches.some((p) => p === undefined)) return event;
        const { messages: _known, ...rest } = event;
        return patches.some((p) => Object.keys(p!).length) ? { ...rest, messagePatches: patches as MessagePatch[] } : rest;
      }
      default:
        return toWireEvent(event);
    }
  };
}

/** The top-level fields of `value` that differ from the message sent as `sentJson`; undefined when a field was removed. */
function patchOf(sentJson: string, value: unknown): MessagePatch | undefined {
  const current = JSON.stringify(value);
  if (current === sentJson) return {};
  const sent = JSON.parse(sentJson) as Record<string, unknown>;
  const now = JSON.parse(current) as Record<string, unknown>;
  if (Object.keys(sent).some((k) => !(k in now))) return undefined;
  // the same message with fields added later (a turnId, the final usage); else it is sent in full
  if (JSON.stringify(now['role']) !== JSON.stringify(sent['role']) || JSON.stringify(now['content']) !== JSON.stringify(sent['content'])) return undefined;
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(now)) if (JSON.stringify(v) !== JSON.stringify(sent[k])) patch[k] = v;
  return patch;
}

/**
 * One SSE frame: `id:` (monotonic per run), `event:` the type, compact JSON `data:` on one line
 * (JSON.stringify escapes every line break inside strings).
 */
export function encodeSseEvent(id: number, event: WireEvent): string {
  return `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** A transport frame (`phi-rx:error` / `phi-rx:end`), with an id when it belongs to the run's sequence. */
export function encodeTransportFrame(event: string, data: unknown, id?: number): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** An SSE comment: keeps proxies and load balancers from closing an idle stream. */
export const HEARTBEAT_FRAME = ': heartbeat\n\n';

/** The error a stream fails with when the server sends `phi-rx:error`, or the connection cannot be made. */
export class EventStreamError extends Error {
  override readonly name = 'EventStreamError';
  constructor(
    readonly code: TransportErrorData['code'] | 'Http' | 'BadFrame' | 'Disconnected' | 'TooLarge',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A non-2xx response's message: the `error` field of a JSON body, else the body text (cut at 200 chars). */
export async function responseErrorText(response: Response): Promise<string> {
  const body = await response.text().catch(() => '');
  try {
    const error = (JSON.parse(body) as { error?: unknown }).error;
    if (typeof error === 'string') return error;
  } catch {
    // not JSON: the text itself
  }
  return body.slice(0, 200);
}
