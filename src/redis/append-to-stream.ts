import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { seqKeyOf, XADD_NUMBERED, XADD_NUMBERED_SHA, type RedisCommander } from './commands.js';

export interface AppendToStreamOptions {
  /** The stream keeps about this many newest entries (`XADD … MAXLEN ~ n`). Default 10 000. */
  maxLen?: number;
}

/** Error thrown into the run when an `XADD` fails: names the stream and the event. */
export class StreamAppendError extends Error {
  override name = 'StreamAppendError';
  constructor(
    readonly streamKey: string,
    readonly eventType: string,
    options: { cause: unknown },
  ) {
    super(`XADD to Redis stream "${streamKey}" failed for ${eventType}: ${String((options.cause as Error)?.message ?? options.cause)}`, options);
  }
}

/**
 * Appends every event of a run to a Redis stream and passes it on unchanged. Each event becomes
 * one entry `{ seq, kind: 'event', data: <JSON> }`, `seq` counting the stream's entries (kept in
 * `<streamKey>:seq`, so a worker continuing the run goes on counting) so readers detect gaps; when the run completes an entry `{ kind: 'complete' }`
 * is appended, when it errors `{ kind: 'error', data: <message> }` — and the run completes (or
 * errors) downstream only once those are stored. The stream is bounded with `MAXLEN ~ maxLen`.
 *
 * Appends are sent as events arrive, without waiting for each reply: the client's one connection
 * keeps them in order (one `EVALSHA` each; the script is loaded when the run is subscribed). A failed `XADD` errors the run with StreamAppendError (nothing is skipped).
 * Unsubscribing (a worker stopping a run) appends nothing: another worker may continue the stream.
 *
 * ```
 * run:     -a-b-c-|
 * appendToStream(redis, 'run:1')
 * result:  -a-b-c-|      (the stream holds a, b, c, complete)
 * ```
 *
 * @example
 * agent.prompt('Hello').pipe(appendToStream(redis, `run:${runId}`, { maxLen: 5000 })).subscribe();
 */
export function appendToStream(client: RedisCommander, streamKey: string, options: AppendToStreamOptions = {}): MonoTypeOperatorFunction<AgentEvent> {
  const maxLen = String(options.maxLen ?? 10_000);
  if (!/^[1-9]\d*$/.test(maxLen)) throw new TypeError(`appendToStream: maxLen must be a positive integer, got ${String(options.maxLen)}`);
  const xadd = (fields: string[]): Promise<unknown> =>
    client.sendCommand(['EVALSHA', XADD_NUMBERED_SHA, '2', streamKey, seqKeyOf(streamKey), maxLen, ...fields]);

  return (source) =>
    new Observable<AgentEvent>((subscriber) => {
      // Loaded once per run, sent ahead of the first EVALSHA on the same connection.
      let last: Promise<unknown> = client.sendCommand(['SCRIPT', 'LOAD', XADD_NUMBERED]);
      last.catch((cause: unknown) => subscriber.error(new StreamAppendError(streamKey, 'SCRIPT LOAD', { cause })));
      const append = (fields: string[], what: string): Promise<unknown> => {
        last = xadd(fields);
        last.catch((cause: unknown) => subscriber.error(new StreamAppendError(streamKey, what, { cause })));
        return last;
      };
      const finish = (fields: string[], what: string, done: () => void): void => {
        append(fields, what).then(done, () => undefined);
      };
      return source.subscribe({
        next: (event) => {
          append(['kind', 'event', 'data', JSON.stringify(event)], event.type).catch(() => undefined);
          subscriber.next(event);
        },
        complete: () => finish(['kind', 'complete'], 'the end of the run', () => subscriber.complete()),
        error: (err: unknown) =>
          finish(['kind', 'error', 'data', err instanceof Error ? err.message : String(err)], 'the run error', () => subscriber.error(err)),
      });
    });
}
