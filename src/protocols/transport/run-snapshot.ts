import type { AgentEvent } from '../../types/events.js';
import { createWireEncoder } from './wire.js';

/** A frame of a run as {@link RunLog} serves it: its id and its SSE text. */
interface Frame {
  readonly id: number;
  readonly text: string;
}

/**
 * A run's events so far, compacted to what a client needs to rebuild its view from nothing: every
 * event except the `MessageUpdate`s of messages that already ended (their `MessageEnd` carries the
 * whole message); a message still streaming keeps its updates since its `MessageStart` (or
 * `MessageReset`), so that the live deltas after the snapshot apply to exactly what the client
 * rebuilt. Grows with the transcript, not with the deltas.
 */
export class RunSnapshot {
  private readonly events: AgentEvent[] = [];
  private readonly streaming = new Map<string, AgentEvent[]>(); // per loop: the updates of its message in progress

  add(event: AgentEvent): void {
    switch (event.type) {
      case 'MessageUpdate': {
        const updates = this.streaming.get(event.loopId);
        if (updates) updates.push(event);
        else this.streaming.set(event.loopId, [event]);
        return;
      }
      case 'MessageStart':
      case 'MessageReset':
      case 'MessageEnd':
      case 'AgentEnd':
        this.streaming.delete(event.loopId);
        break;
      default:
        break;
    }
    this.events.push(event);
  }

  /**
   * The snapshot as SSE frames, encoded afresh (a client's decoder starts with them); only the
   * last says `id: lastId`, so that a client resuming later resumes after the snapshot.
   */
  frames(lastId: number): Frame[] {
    const encode = createWireEncoder();
    const events = [...this.events, ...[...this.streaming.values()].flat()];
    return events.map((event, i) => {
      const wire = encode(event);
      const id = i === events.length - 1 ? `id: ${lastId}\n` : '';
      return { id: lastId, text: `${id}event: ${wire.type}\ndata: ${JSON.stringify(wire)}\n\n` };
    });
  }
}
