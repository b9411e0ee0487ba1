import { type MonoTypeOperatorFunction, Observable } from 'rxjs';
import type { AgentEvent } from '../types/events.js';

/** What `recordSession` feeds: a `SessionRecorder`, or anything else that takes events. */
export interface AgentEventSink {
  onEvent(event: AgentEvent): void;
  /**
   * `false` when the sink ignores `MessageUpdate` events (a `SessionRecorder` that does not record
   * streaming events): `recordSession` then does not hand it the deltas at all. Read when the
   * stream is subscribed. Default: it does.
   */
  readonly recordsStreamingEvents?: boolean;
}

export interface RecordSessionOptions {
  /** Told when the sink throws; the event still goes through and the stream goes on. */
  onError?: (error: unknown, event: AgentEvent) => void;
}

/**
 * Records the agent event stream into a session recorder and passes every event through
 * unchanged (the same objects, at the same time). Errors and completion pass through too. A
 * recorder that throws never breaks the stream. It does not flush the recorder when the stream
 * ends: call `recorder.flush()` (or `checkpoint()`) when you want the sessions closed.
 *
 * ```
 * events:        --a--b--c--|
 * recordSession(recorder)
 * output:        --a--b--c--|      recorder.onEvent(a), (b), (c), each as it passes
 * ```
 *
 * @example
 * const recorder = new SessionRecorder();
 * agentLoop(prompts, context, config)
 *   .pipe(recordSession(recorder))
 *   .subscribe({ complete: () => store.save(recorder.getSession(sessionId)!) });
 */
export function recordSession(recorder: AgentEventSink, options: RecordSessionOptions = {}): MonoTypeOperatorFunction<AgentEvent> {
  const { onError } = options;
  const record = (event: AgentEvent): void => {
    try {
      recorder.onEvent(event);
    } catch (e) {
      try {
        onError?.(e, event);
      } catch {
        // The stream belongs to the agent; a failing observer of the recorder must not end it.
      }
    }
  };
  // Its own subscriber rather than `tap`: a call site of its own per event (tap's is shared by every tap in the process).
  return (source) =>
    new Observable<AgentEvent>((subscriber) => {
      const recordsUpdates = recorder.recordsStreamingEvents !== false;
      return source.subscribe({
        next: (event) => {
          // The hot path: ~10^4 deltas per run that a recorder keeping no streaming events drops.
          if (event.type !== 'MessageUpdate' || recordsUpdates) record(event);
          subscriber.next(event);
        },
        error: (err: unknown) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}
