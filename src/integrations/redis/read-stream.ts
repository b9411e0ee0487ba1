import { Observable } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { checkStreamId, entriesOfXRead, seqField, seqOfEntry, type RedisCommander, type StreamEntry } from './commands.js';

/** An event read from a run's stream, with the stream id to resume after (`Last-Event-ID`). */
export interface StreamedEvent {
  readonly id: string;
  readonly event: AgentEvent;
}

export interface ReadStreamOptions {
  /** Read the entries after this id: `'0'` (the default) for the whole stream, or the last id a client saw. */
  after?: string;
  /** How long one `XREAD BLOCK` waits, in ms; also how long an unsubscribed reader may hold its connection. Default 1000. */
  blockMs?: number;
  /** Entries per `XREAD`. Default 500. */
  count?: number;
  /** Awaited before each read after the first: the consumer's backpressure (e.g. until a client's socket drained). */
  pace?: () => Promise<void>;
}

/** The run's stream lost entries the reader had not read yet (MAXLEN trimmed them): resuming would skip events. */
export class StreamTrimmedError extends Error {
  override name = 'StreamTrimmedError';
  constructor(
    readonly streamKey: string,
    readonly after: string,
    readonly detail: string,
  ) {
    super(`Redis stream "${streamKey}": entries after ${after} were trimmed before they were read (${detail}); raise appendToStream maxLen or read sooner`);
  }
}

/** The worker appended an error entry: the run failed there. */
export class RemoteRunError extends Error {
  override name = 'RemoteRunError';
  constructor(
    readonly streamKey: string,
    readonly entryId: string,
    detail: string,
  ) {
    super(`Run on Redis stream "${streamKey}" failed (entry ${entryId}): ${detail}`);
  }
}

/**
 * The events a worker appends with `appendToStream`, read with `XREAD BLOCK` from `after` on, each
 * with its stream id. Completes at the run's `complete` entry, errors with RemoteRunError at an
 * `error` entry, with StreamTrimmedError when entries it had still to read were trimmed (a gap in
 * the entries' `seq`, or `after` no longer in the stream), and with
 * a TypeError naming the entry when an entry is not an event. Waits across worker restarts: a
 * run continued by another worker on the same stream key simply goes on.
 *
 * The reader holds its connection while blocked: give it one of its own (`client.duplicate()`).
 *
 * ```
 * stream:  a--b----c--complete
 * readStream(redis, 'run:1', { after: id(a) })
 * result:  ---b----c--|
 * ```
 *
 * @example
 * // A web process serving a reconnecting browser:
 * readStream(reader, `run:${runId}`, { after: req.headers['last-event-id'] ?? '0' })
 *   .subscribe(({ id, event }) => res.write(`id: ${id}\ndata: ${JSON.stringify(event)}\n\n`));
 */
export function readStream(client: RedisCommander, streamKey: string, options: ReadStreamOptions = {}): Observable<StreamedEvent> {
  const after = checkStreamId(options.after ?? '0', `readStream("${streamKey}") after`);
  const blockMs = String(options.blockMs ?? 1000);
  const count = String(options.count ?? 500);
  return new Observable<StreamedEvent>((subscriber) => {
    let last = after;
    let expectedSeq = 1;
    const readBatch = async (): Promise<StreamEntry[]> => {
      const reply = await client.sendCommand(['XREAD', 'COUNT', count, 'BLOCK', blockMs, 'STREAMS', streamKey, last]);
      return entriesOfXRead(reply, streamKey);
    };
    /** Emits one entry; true when it ended the stream. */
    const deliver = (entry: StreamEntry): boolean => {
      const seq = seqField(streamKey, entry);
      if (seq !== expectedSeq) throw new StreamTrimmedError(streamKey, last, `expected entry number ${expectedSeq}, found ${seq} at ${entry.id}`);
      expectedSeq = seq + 1;
      last = entry.id;
      const { kind, data } = entry.fields;
      if (kind === 'complete') {
        subscriber.complete();
        return true;
      }
      if (kind === 'error') {
        subscriber.error(new RemoteRunError(streamKey, entry.id, data ?? 'no detail'));
        return true;
      }
      subscriber.next({ id: entry.id, event: decodeEvent(streamKey, entry) });
      return false;
    };
    const loop = async (): Promise<void> => {
      if (after !== '0' && after !== '0-0') {
        const seq = await seqOfEntry(client, streamKey, after);
        if (seq === undefined) throw new StreamTrimmedError(streamKey, after, `entry ${after} itself is gone, so what followed it cannot be checked`);
        expectedSeq = seq + 1;
      }
      for (let first = true; !subscriber.closed; first = false) {
        if (options.pace && !first) await options.pace();
        if (subscriber.closed) return;
        const entries = await readBatch();
        for (const entry of entries) {
          if (subscriber.closed || deliver(entry)) return;
        }
      }
    };
    loop().catch((e: unknown) => subscriber.error(e));
  });
}

function decodeEvent(streamKey: string, entry: StreamEntry): AgentEvent {
  const where = `Redis stream "${streamKey}" entry ${entry.id}`;
  if (entry.fields['kind'] !== 'event') throw new TypeError(`${where}: unknown kind ${JSON.stringify(entry.fields['kind'])}`);
  let event: unknown;
  try {
    event = JSON.parse(entry.fields['data'] ?? '');
  } catch (e) {
    throw new TypeError(`${where}: data is not JSON (${(e as Error).message})`);
  }
  if (typeof event !== 'object' || event === null || typeof (event as { type?: unknown }).type !== 'string') {
    throw new TypeError(`${where}: data is not an agent event (no string "type")`);
  }
  return event as AgentEvent;
}
