import { Observable, type OperatorFunction } from 'rxjs';
import type { StreamEvent } from '../types/provider.js';
import type { StreamReset } from './resume-retry.js';
import type { AgentEvent, StreamDelta } from '../types/events.js';
import type { AssistantMessage } from '../types/message.js';

export interface ToMessageEventsOptions {
  loopId: string;
  now(): number;
  /** Receives each snapshot of the message so far as it streams (for error and abort recovery). */
  onPartial?(partial: AssistantMessage): void;
  /** Receives the final message of `done`, just before its MessageEnd is emitted. */
  onEnd?(message: AssistantMessage): void;
}

/**
 * Turns a provider stream into the assistant message's lifecycle events: one MessageStart,
 * a MessageUpdate per delta, one MessageEnd with the final message. Each event carries the
 * message as the provider's stream event does: from phi-rx's providers an immutable snapshot.
 * A stream that is retried
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
  return (source) => new Observable<AgentEvent>((subscriber) => {
    const push = messageEventsOf(options, (event) => subscriber.next(event));
    // A throw in a callback (onPartial, onEnd) fails the stream, as in any RxJS operator.
    const guardedNext = (e: StreamEvent | StreamReset): void => {
      try {
        push(e);
      } catch (error) {
        subscriber.error(error);
      }
    };
    return source.subscribe({ next: guardedNext, error: (error: unknown) => subscriber.error(error), complete: () => subscriber.complete() });
  });
}

/**
 * The mapping of {@link toMessageEvents} as a plain function over one stream: each stream event
 * pushed in hands its message events to `emit`, in order. The model-call stage calls it directly
 * (no subscriber hop per delta); it throws what `onPartial` / `onEnd` throw.
 */
export function messageEventsOf(options: ToMessageEventsOptions, emit: (event: AgentEvent) => void): (e: StreamEvent | StreamReset) => void {
  const events = new MessageEvents(options, { messageEvent: emit });
  return (e) => events.push(e);
}

/** Where {@link MessageEvents} hands its events (the model-call stage is one: no closure per call). */
export interface MessageEventTarget {
  messageEvent(event: AgentEvent): void;
}

/** The state of {@link messageEventsOf} over one message: one object, its `push` called per stream event. */
export class MessageEvents {
  private started = false;
  // The options' fields, read from this object: with hundreds of runs interleaved, every other
  // object a delta reads is a likely cache miss.
  private readonly loopId: string;
  /** Called as a plain function (not a method of this object), as given. */
  private readonly clock: () => number;
  private readonly onPartial: ((partial: AssistantMessage) => void) | undefined;
  private readonly onEnd: ((message: AssistantMessage) => void) | undefined;

  constructor(
    options: ToMessageEventsOptions,
    private readonly target: MessageEventTarget,
  ) {
    this.loopId = options.loopId;
    this.clock = options.now;
    this.onPartial = options.onPartial;
    this.onEnd = options.onEnd;
  }

  push(e: StreamEvent | StreamReset): void {
    switch (e.type) {
      case 'reset':
        // A retry diverged from what was shown (see resumeRetry): the UI starts over from e.message.
        if (!this.started) this.start(e.message);
        this.onPartial?.(e.message);
        this.target.messageEvent({ type: 'MessageReset', loopId: this.loopId, message: e.message, reason: e.reason, timestamp: this.now() });
        return;
      case 'start':
        this.start(e.partial);
        return;
      case 'done':
        if (!this.started) this.start(e.message);
        this.onPartial?.(e.message);
        this.onEnd?.(e.message);
        this.target.messageEvent({ type: 'MessageEnd', loopId: this.loopId, message: e.message, timestamp: this.now() });
        return;
      case 'textDelta':
      case 'thinkingDelta':
      case 'toolCallStart':
      case 'toolCallDelta':
        if (!this.started) this.start(e.partial);
        this.onPartial?.(e.partial);
        this.target.messageEvent({ type: 'MessageUpdate', loopId: this.loopId, message: e.partial, delta: deltaOf(e), timestamp: this.now() });
        return;
    }
  }

  private now(): number {
    const clock = this.clock;
    return clock();
  }

  private start(partial: AssistantMessage): void {
    this.onPartial?.(partial);
    if (this.started) return;
    this.started = true;
    this.target.messageEvent({ type: 'MessageStart', loopId: this.loopId, message: partial, timestamp: this.now() });
  }
}

/** What a delta event says changed, as `MessageUpdate.delta` carries it. */
function deltaOf(e: Extract<StreamEvent, { type: 'textDelta' | 'thinkingDelta' | 'toolCallStart' | 'toolCallDelta' }>): StreamDelta {
  switch (e.type) {
    case 'textDelta':
      return { type: 'text', contentIndex: e.contentIndex, delta: e.delta };
    case 'thinkingDelta':
      return { type: 'thinking', contentIndex: e.contentIndex, delta: e.delta };
    case 'toolCallStart':
      return { type: 'toolCall', contentIndex: e.contentIndex, delta: '', id: e.id, name: e.name };
    case 'toolCallDelta':
      return { type: 'toolCall', contentIndex: e.contentIndex, delta: e.delta };
  }
}
