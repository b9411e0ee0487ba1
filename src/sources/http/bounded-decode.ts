import { defer, tap } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import { ProviderError } from '../../types/errors.js';

/**
 * Most bytes a provider stream may send between two decoded events (8 MiB): an SSE line or event,
 * or an AWS event-stream frame, past it fails the call. A decoder holds what it has not yet turned
 * into an event, so this bounds what one endpoint can make it buffer.
 */
export const DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024;

/**
 * Runs a byte decoder (`decodeSse()`, Bedrock's event-stream decoder) and fails once more than
 * `maxEventBytes` arrive without it producing an event: an unterminated SSE line, an event that
 * never ends, a frame that claims to be huge. What a decoder buffers is what it has not decoded
 * yet, so whatever the decoder, its buffer stays within the limit (give or take one chunk). The
 * error is a non-retryable ProviderError `other` ({@link eventTooLarge}); it unsubscribes from the
 * body, which aborts the request and closes the socket.
 *
 * ```
 * bytes:    --a--b--[8 MiB, no line end]-------
 * decoded:  --A--B--#  ProviderError(other): over maxEventBytes
 * ```
 *
 * @example
 * httpStream(url, init, { provider: 'example' }).pipe(boundedDecode(decodeSse(), 'example', 1024 * 1024))
 */
export function boundedDecode<T>(
  decode: OperatorFunction<Uint8Array, T>,
  provider: string,
  maxEventBytes: number = DEFAULT_MAX_EVENT_BYTES,
): OperatorFunction<Uint8Array, T> {
  return (source) =>
    defer(() => {
      let undecoded = 0;
      const counted = source.pipe(
        tap((chunk) => {
          undecoded += chunk.byteLength;
          if (undecoded > maxEventBytes) throw eventTooLarge(provider, maxEventBytes);
        }),
      );
      // An event out resets the count; what the same chunk carries after it is at most one chunk.
      return counted.pipe(
        decode,
        tap(() => {
          undecoded = 0;
        }),
      );
    });
}

/** The error of a stream that sent more than `maxEventBytes` without an event: not retried. */
export function eventTooLarge(provider: string, maxEventBytes: number): ProviderError {
  return ProviderError.other(
    `${provider} sent over ${maxEventBytes} bytes without completing an event (an SSE line or event, or a frame, over maxEventBytes): the request was aborted`,
    { provider },
  );
}
