import { Observable } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import { createParser } from 'eventsource-parser';
import { ProviderError } from '../../types/errors.js';
import { excerpt, redactSecrets } from './errors.js';
import { boundedDecode } from './bounded-decode.js';
import { httpStream } from './request.js';
import type { HttpRequestInit, HttpStreamOptions } from './request.js';

/** One Server-Sent Event. `event` is undefined when the server sent no `event:` line. */
export interface SseEvent {
  event?: string | undefined;
  data: string;
  id?: string | undefined;
}

/**
 * The `event` of a line that is not SSE at all (e.g. a bare JSON error body sent with status
 * 200). Its `data` is the line; providers may try to read it as an error object.
 */
export const SSE_INVALID_LINE = 'phi-rx:invalid-line';

/**
 * Decodes a byte stream into Server-Sent Events with eventsource-parser. UTF-8 is decoded with
 * a streaming TextDecoder, so a character split across two chunks comes out whole; CR, LF and
 * CRLF line ends and `:` comment lines are handled by the parser. When the body ends with a
 * complete line but no blank line, the last event is still delivered; a body cut inside a line
 * drops that partial line (it cannot be trusted). It holds the line and event in progress, so
 * bound it with {@link boundedDecode} (as {@link sseStream} and every built-in provider do).
 *
 * ```
 * bytes:  --"data: {\"a\""--":1}\n\nda"--"ta: [DONE]\n\n"--|
 * events: -------------------{data:'{"a":1}'}-{data:'[DONE]'}--|
 * ```
 *
 * @example
 * httpStream(url, init, { provider: 'openai' }).pipe(decodeSse()).subscribe((e) => console.log(e.event, e.data));
 */
export function decodeSse(): OperatorFunction<Uint8Array, SseEvent> {
  return (source) =>
    new Observable<SseEvent>((subscriber) => {
      const decoder = new TextDecoder('utf-8');
      let lastChar = '\n';
      const parser = createParser({
        onEvent: (message) => subscriber.next({ event: message.event, data: message.data, id: message.id }),
        onError: (error) => {
          if (error.type === 'unknown-field' && error.line !== undefined) {
            subscriber.next({ event: SSE_INVALID_LINE, data: error.line });
          }
        },
      });
      const feed = (text: string) => {
        if (text === '') return;
        lastChar = text[text.length - 1]!;
        parser.feed(text);
      };
      return source.subscribe({
        next: (chunk) => feed(decoder.decode(chunk, { stream: true })),
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          feed(decoder.decode());
          // A last line that ended cleanly but lacks the blank line still makes an event.
          if (lastChar === '\n' || lastChar === '\r') parser.feed('\n\n');
          subscriber.complete();
        },
      });
    });
}

export interface SseStreamOptions extends HttpStreamOptions {
  /** Most bytes between two events (one SSE line or event) before the call fails. Default 8 MiB. */
  maxEventBytes?: number | undefined;
}

/**
 * {@link httpStream} piped through {@link decodeSse}: a cold POST whose SSE events are emitted
 * as they arrive. Unsubscribing aborts the request. An event (or line) over `maxEventBytes` or a
 * body over `maxResponseBytes` fails it with a non-retryable ProviderError and closes the socket.
 */
export function sseStream(url: string, init: HttpRequestInit, options: SseStreamOptions): Observable<SseEvent> {
  return httpStream(url, init, options).pipe(boundedDecode(decodeSse(), options.provider, options.maxEventBytes));
}

/**
 * Parses an event's JSON data. Malformed data fails with ProviderError `other` naming the
 * provider and quoting (a truncated, redacted excerpt of) the offending data.
 */
export function parseSseJson<T = unknown>(data: string, provider: string, secrets?: readonly string[]): T {
  try {
    return JSON.parse(data) as T;
  } catch (e) {
    throw ProviderError.other(
      redactSecrets(`${provider} sent a malformed JSON chunk (${(e as Error).message}): ${excerpt(data)}`, secrets),
      { provider },
    );
  }
}

/** A ProviderError for a stream that ended before its terminal event; retryable (`network`). */
export function streamEndedEarly(provider: string, terminal: string): ProviderError {
  return ProviderError.network(`${provider} stream ended before ${terminal}`, { provider });
}
