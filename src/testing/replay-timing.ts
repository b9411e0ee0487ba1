import type { LoopRecord, RecordedEvent } from '../session/model.js';
import type { AgentMessage, AssistantMessage } from '../types/message.js';

/** When a recorded answer streamed, relative to its request (the message's own timestamp). */
export interface RecordedTiming {
  /** ms from the request to the first event (the recorded MessageStart). */
  startAfter: number;
  /** ms from the request to `done` (the recorded MessageEnd). */
  endAfter: number;
  /** When the recorded MessageStart and MessageEnd came (the recording's clock). */
  startAt: number;
  endAt: number;
}

/**
 * The model latency of each assistant message of a loop, read from its recorded MessageStart and
 * MessageEnd events. Every provider stamps an assistant message with the time of its request, so
 * `MessageStart.timestamp - message.timestamp` is the wait for the first event and
 * `MessageEnd.timestamp - message.timestamp` the time to the end of the answer. A message is
 * matched to the MessageEnd that carries it (same timestamp and content), and to the last
 * assistant MessageStart before that. Messages without such events get no timing.
 */
export function recordedTimings(loop: Pick<LoopRecord, 'events'>, messages: readonly AgentMessage[]): Map<AgentMessage, RecordedTiming> {
  const timings = new Map<AgentMessage, RecordedTiming>();
  const used = new Set<number>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    const endIndex = loop.events.findIndex((e, i) => !used.has(i) && e.type === 'MessageEnd' && sameAnswer(e, message));
    if (endIndex < 0) continue;
    used.add(endIndex);
    let startAt: number | undefined;
    for (let i = endIndex - 1; i >= 0; i--) {
      const e = loop.events[i]!;
      if (e.type === 'MessageStart' && e.message.role === 'assistant') {
        startAt = e.timestamp;
        break;
      }
    }
    const endAt = loop.events[endIndex]!.timestamp;
    const startAfter = Math.max(0, (startAt ?? endAt) - message.timestamp);
    timings.set(message, { startAfter, endAfter: Math.max(startAfter, endAt - message.timestamp), startAt: startAt ?? endAt, endAt });
  }
  return timings;
}

function sameAnswer(event: RecordedEvent, message: AssistantMessage): boolean {
  if (event.type !== 'MessageEnd' || event.message.role !== 'assistant') return false;
  return event.message.timestamp === message.timestamp && JSON.stringify(event.message.content) === JSON.stringify(message.content);
}
