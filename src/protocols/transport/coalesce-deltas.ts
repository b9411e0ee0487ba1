import { asyncScheduler, type MonoTypeOperatorFunction, Observable, type SchedulerLike } from 'rxjs';
import type { AgentEvent, MessageUpdateEvent, StreamDelta } from '../../types/events.js';

/**
 * Merges runs of `MessageUpdate`s that extend the same block (same loop, delta type and content
 * index; a tool-call delta that names a new call starts a run of its own) into one update whose
 * delta is their concatenation, carrying the last one's message and timestamp. A run is flushed
 * when any other event arrives (so order is kept), `windowMs` after its first delta, on
 * completion and before an error. Nothing is lost: the text of the merged deltas is the text of
 * the originals. The transport applies it so that a reply costs a few frames, not one per token.
 *
 * ```
 * source:             -a-b-c-X--d-|       (a b c d: text deltas of one block, X: another event)
 * coalesceDeltas(10): -------(aX)-(d|)     (a: the deltas a+b+c merged)
 * ```
 *
 * @example
 * run$.pipe(coalesceDeltas(16), toSseFrames()).subscribe((frame) => res.write(frame));
 */
export function coalesceDeltas(windowMs = 0, scheduler: SchedulerLike = asyncScheduler): MonoTypeOperatorFunction<AgentEvent> {
  return (source) =>
    new Observable<AgentEvent>((subscriber) => {
      let waiting: MessageUpdateEvent | undefined;
      let timer: { unsubscribe(): void } | undefined;
      const flush = () => {
        timer?.unsubscribe();
        timer = undefined;
        if (waiting) {
          const event = waiting;
          waiting = undefined;
          subscriber.next(event);
        }
      };
      const inner = source.subscribe({
        next: (event) => {
          if (event.type !== 'MessageUpdate') {
            flush();
            subscriber.next(event);
          } else if (waiting && extendsBlock(waiting.delta, event.delta) && waiting.loopId === event.loopId) {
            waiting = { ...event, delta: { ...waiting.delta, delta: waiting.delta.delta + event.delta.delta } };
          } else {
            flush();
            waiting = event;
            timer = scheduler.schedule(flush, windowMs);
          }
        },
        error: (error: unknown) => {
          flush();
          subscriber.error(error);
        },
        complete: () => {
          flush();
          subscriber.complete();
        },
      });
      return () => {
        timer?.unsubscribe();
        inner.unsubscribe();
      };
    });
}

function extendsBlock(first: StreamDelta, next: StreamDelta): boolean {
  if (first.type !== next.type || first.contentIndex !== next.contentIndex) return false;
  return next.type !== 'toolCall' || (next.id === undefined && next.name === undefined);
}
