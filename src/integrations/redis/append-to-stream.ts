import { Observable, type MonoTypeOperatorFunction } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { seqKeyOf, XADD_NUMBERED, XADD_NUMBERED_SHA, type RedisCommander } from './commands.js';

export interface AppendToStreamOptions {
  /** The stream keeps about this many newest entries (`XADD … MAXLEN ~ n`). Default 10 000. */
  maxLen?: number;
  /** At most this many entries per script call. Default 500. */
  maxBatch?: number;
}

/** Error thrown into the run when appending fails: names the stream and the first event not stored. */
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

/** One entry waiting to be appended: its fields and what to call it in an error. */
interface Pending {
  readonly fields: readonly string[];
  readonly what: string;
}

/**
 * Appends every event of a run to a Redis stream and passes it on unchanged, at once. Each event
 * becomes one entry `{ seq, kind: 'event', data: <JSON> }`, `seq` counting the stream's entries
 * (kept in `<streamKey>:seq`, so a worker continuing the run goes on counting) so that readers
 * detect gaps; when the run completes an entry `{ kind: 'complete' }` is appended, when it errors
 * `{ kind: 'error', data: <message> }` — and the run completes (or errors) downstream only once
 * those are stored. The stream is bounded with `MAXLEN ~ maxLen`.
 *
 * One script call is in flight at a time; events that arrive meanwhile go in the next call, as one
 * batch (up to `maxBatch`), so a fast run costs few round trips and order is kept. A failed append
 * errors the run with StreamAppendError (nothing is skipped). Unsubscribing (a worker stopping a
 * run) appends nothing more: another worker may continue the stream.
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
  const maxLen = positive('maxLen', options.maxLen ?? 10_000);
  const maxBatch = positive('maxBatch', options.maxBatch ?? 500);
  const send = (batch: readonly Pending[]): Promise<unknown> =>
    client.sendCommand([
      'EVALSHA', XADD_NUMBERED_SHA, '2', streamKey, seqKeyOf(streamKey), String(maxLen),
      ...batch.flatMap((p) => [String(p.fields.length), ...p.fields]),
    ]);

  return (source) =>
    new Observable<AgentEvent>((subscriber) => {
      let queue: Pending[] = [];
      let busy = true; // until the script is loaded
      let ended: (() => void) | undefined;
      const fail = (what: string) => (cause: unknown) => subscriber.error(new StreamAppendError(streamKey, what, { cause }));
      const pump = (): void => {
        if (subscriber.closed) return;
        if (queue.length === 0) {
          busy = false;
          ended?.();
          return;
        }
        busy = true;
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        send(batch).then(pump, fail(batch[0]!.what));
      };
      const enqueue = (entry: Pending): void => {
        queue.push(entry);
        if (!busy) pump();
      };
      const finish = (entry: Pending, done: () => void): void => {
        ended = () => {
          ended = undefined;
          done();
        };
        enqueue(entry);
      };
      client.sendCommand(['SCRIPT', 'LOAD', XADD_NUMBERED]).then(pump, fail('SCRIPT LOAD'));
      const subscription = source.subscribe({
        next: (event) => {
          enqueue({ fields: ['kind', 'event', 'data', JSON.stringify(event)], what: event.type });
          subscriber.next(event);
        },
        complete: () => finish({ fields: ['kind', 'complete'], what: 'the end of the run' }, () => subscriber.complete()),
        error: (err: unknown) =>
          finish({ fields: ['kind', 'error', 'data', err instanceof Error ? err.message : String(err)], what: 'the run error' }, () => subscriber.error(err)),
      });
      return () => subscription.unsubscribe();
    });
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`appendToStream: ${name} must be a positive integer, got ${String(value)}`);
  return value;
}
