import type { AgentEvent, MessageUpdateEvent } from '../types/events.js';

/**
 * An event as it crosses the wire: a `MessageUpdate` carries only its delta (the receiver
 * rebuilds the partial message), so a streamed reply costs bytes linear in its length.
 */
export type WireEvent = Exclude<AgentEvent, MessageUpdateEvent> | Omit<MessageUpdateEvent, 'message'>;

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

/** The wire form of an event: a MessageUpdate without its partial message. */
export function toWireEvent(event: AgentEvent): WireEvent {
  if (event.type !== 'MessageUpdate') return event;
  const { message: _partial, ...rest } = event;
  return rest;
}

/**
 * One SSE frame: `id:` (monotonic per run), `event:` the type, compact JSON `data:` on one line
 * (JSON.stringify escapes every line break inside strings).
 */
export function encodeSseEvent(id: number, event: AgentEvent): string {
  return `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(toWireEvent(event))}\n\n`;
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
    readonly code: TransportErrorData['code'] | 'Http' | 'BadFrame' | 'Disconnected',
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
