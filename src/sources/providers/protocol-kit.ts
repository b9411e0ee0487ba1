import { Observable } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import type { ModelConfig, StreamEvent } from '../../types/provider.js';
import type { AssistantMessage, ToolResultMessage } from '../../types/message.js';
import type { ImageContent } from '../../types/content.js';
import type { AssistantMessageBuilder } from './message-builder.js';
import { ProviderError } from '../../types/errors.js';

/**
 * Turns a protocol's decoded wire events (SSE JSON chunks, AWS event-stream messages) into
 * StreamEvents. `push` may throw a ProviderError (a mid-stream error event, a malformed chunk);
 * `end` is called when the body ends before `push` produced `done`, and must either produce it
 * or throw (typically "stream ended before <terminal event>", retryable).
 */
export interface WireParser<T> {
  push(event: T, emit: (event: StreamEvent) => void): void;
  end(emit: (event: StreamEvent) => void): void;
}

/**
 * Runs a {@link WireParser} over a stream of wire events: `start` before the first event's
 * output, then the parser's events, exactly one `done`. Once `done` is out the message is whole:
 * later wire events are ignored and a transport error after it (a reset while draining a
 * trailing `[DONE]`) no longer fails the stream. Completion waits for the body's end rather than
 * unsubscribing at `done`, so the connection goes back to the keep-alive pool instead of being
 * destroyed by an abort.
 *
 * ```
 * wire:    --a--b--c--|        --a--b--|            --a--X
 * output:  --(s a)-b-(c done)| --(s a)-b-#early     --(s a)-#X
 * ```
 *
 * @example
 * sseStream(url, init, http).pipe(map((e) => JSON.parse(e.data)), parseWire(builder, new MyParser(builder)))
 */
export function parseWire<T>(builder: AssistantMessageBuilder, parser: WireParser<T>): OperatorFunction<T, StreamEvent> {
  return (source) =>
    new Observable<StreamEvent>((subscriber) => {
      let started = false;
      let done = false;
      const emit = (event: StreamEvent): void => {
        if (done) return;
        if (!started) {
          started = true;
          subscriber.next(builder.start());
        }
        if (event.type === 'done') done = true;
        subscriber.next(event);
      };
      const settle = (run: () => void): boolean => {
        try {
          run();
          return true;
        } catch (error) {
          subscriber.error(error);
          return false;
        }
      };
      const subscription = source.subscribe({
        next: (event) => {
          if (!done) settle(() => parser.push(event, emit));
        },
        error: (error: unknown) => (done ? subscriber.complete() : subscriber.error(error)),
        complete: () => {
          if (!done && !settle(() => parser.end(emit))) return;
          if (!done) {
            subscriber.error(ProviderError.other(`${builder.partial.provider} stream produced no final message`, { provider: builder.partial.provider }));
            return;
          }
          subscriber.complete();
        },
      });
      return subscription;
    });
}

/**
 * True when an assistant message was produced by the same provider as the model about to be
 * called, so that its thinking signatures can be echoed back; otherwise thinking travels as text.
 */
export function isOwnMessage(message: AssistantMessage, model: ModelConfig): boolean {
  return message.provider === model.provider;
}

/** Base64 image blocks of a tool result. */
export function toolResultImages(message: ToolResultMessage): ImageContent[] {
  const images: ImageContent[] = [];
  for (const c of message.content) if (c.type === 'image') images.push(c);
  return images;
}

/** `undefined` fields dropped, so request bodies stay minimal and comparable. */
export function compact<T extends Record<string, unknown>>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v;
  return out as T;
}
