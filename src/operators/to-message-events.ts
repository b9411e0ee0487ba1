import type { OperatorFunction } from 'rxjs';
// RxJS's own operator plumbing (public under `rxjs/internal/*`): the source is subscribed with an
// OperatorSubscriber, one call per delta instead of a SafeSubscriber and its observer wrapper.
import { createOperatorSubscriber } from 'rxjs/internal/operators/OperatorSubscriber';
import { operate } from 'rxjs/internal/util/lift';
import type { StreamEvent } from '../types/provider.js';
import type { StreamReset } from './resume-retry.js';
import type { AgentEvent, StreamDelta } from '../types/events.js';
import type { AssistantMessage } from '../types/message.js';

export interface ToMessageEventsOptions {
  loopId: string;
  now(): number;
  /** Receives the message so far whenever it changes owner (for error and abort recovery). */
  onPartial?(partial: AssistantMessage): void;
  /** Receives the final message of `done`, just before its MessageEnd is emitted. */
  onEnd?(message: AssistantMessage): void;
}

/**
 * Turns a provider stream into the assistant message's lifecycle events: one MessageStart,
 * a MessageUpdate per delta, one MessageEnd with the final message. A stream that is retried
 * (a second `start`) keeps the single lifecycle: the UI sees one message whose partial is
 * replaced; a `reset` from `resumeRetry` becomes a MessageReset. Per delta it allocates only the
 * event itself.
 *
 * ```
 * source:  -s-t-t-d|     (s: start, t: textDelta, d: done)
 * toMessageEvents({ loopId, now })
 * output:  -S-U-U-E|     (S: MessageStart, U: MessageUpdate, E: MessageEnd)
 * ```
 *
 * @example
 * provider(request, {}).pipe(toMessageEvents({ loopId, now: () => Date.now() })).subscribe(render);
 */
export function toMessageEvents(options: ToMessageEventsOptions): OperatorFunction<StreamEvent | StreamReset, AgentEvent> {
  const { loopId, now, onPartial, onEnd } = options;
  return operate<StreamEvent | StreamReset, AgentEvent>((source, subscriber) => {
      let started = false;
      const start = (partial: AssistantMessage): void => {
        onPartial?.(partial);
        if (started) return;
        started = true;
        subscriber.next({ type: 'MessageStart', loopId, message: partial, timestamp: now() });
      };
      const update = (message: AssistantMessage, delta: StreamDelta): void => {
        subscriber.next({ type: 'MessageUpdate', loopId, message, delta, timestamp: now() });
      };
      source.subscribe(
        createOperatorSubscriber(subscriber, (e: StreamEvent | StreamReset) => {
          switch (e.type) {
            case 'reset':
              // A retry diverged from what was shown (see resumeRetry): the UI starts over from e.message.
              if (!started) start(e.message);
              onPartial?.(e.message);
              subscriber.next({ type: 'MessageReset', loopId, message: e.message, reason: e.reason, timestamp: now() });
              return;
            case 'start':
              start(e.partial);
              return;
            case 'textDelta':
              if (!started) start(e.partial);
              update(e.partial, { type: 'text', contentIndex: e.contentIndex, delta: e.delta });
              return;
            case 'thinkingDelta':
              if (!started) start(e.partial);
              update(e.partial, { type: 'thinking', contentIndex: e.contentIndex, delta: e.delta });
              return;
            case 'toolCallStart':
              if (!started) start(e.partial);
              update(e.partial, { type: 'toolCall', contentIndex: e.contentIndex, delta: '', id: e.id, name: e.name });
              return;
            case 'toolCallDelta':
              if (!started) start(e.partial);
              update(e.partial, { type: 'toolCall', contentIndex: e.contentIndex, delta: e.delta });
              return;
            case 'done':
              if (!started) start(e.message);
              onPartial?.(e.message);
              onEnd?.(e.message);
              subscriber.next({ type: 'MessageEnd', loopId, message: e.message, timestamp: now() });
              return;
          }
        }),
      );
  });
}
