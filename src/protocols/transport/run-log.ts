import { concat, defer, EMPTY, from, type Observable, type SchedulerLike, Subject, type Subscription, throwError } from 'rxjs';
import { coalesceDeltas } from './coalesce-deltas.js';
import type { AgentEvent } from '../../types/events.js';
import { createWireEncoder, encodeSseEvent, encodeTransportFrame, EventStreamError, TRANSPORT_EVENTS } from './wire.js';
import { RunSnapshot } from './run-snapshot.js';

const encoder = new TextEncoder();
/** UTF-8 length of a frame (frames are mostly ASCII: the length, unless a code unit is not). */
const byteLength = (text: string): number => (/^[\x00-\x7f]*$/.test(text) ? text.length : encoder.encode(text).length);

export interface RunLogOptions {
  /** Merge consecutive deltas of one block arriving within this many ms into one frame (default 0: those of one burst); `false`: one frame per event. */
  coalesceDeltasMs?: number | false;
  /** Time source of the coalescing window (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** The replay buffer holds at most this many bytes of frames too (default 32 MiB; the newest frame is always kept). */
  maxBytes?: number;
}

/** One serialized frame of a run, with its id. */
export interface LoggedFrame {
  readonly id: number;
  readonly text: string;
}

/**
 * A run's events, serialized as they happen into SSE frames with ids 1, 2, 3 ..., kept in a
 * bounded replay buffer (the last `capacity` frames, at most `maxBytes`) for resuming clients.
 * Subscribes to the run at once: the run is hot and runs once however many clients watch it. A
 * run that fails gets a `phi-rx:error` frame (`RunFailed`); every run ends with a `phi-rx:end`
 * frame. A client from the start, once the first frames fell out of the buffer, gets the run
 * from a snapshot instead: its events so far without the deltas of messages already ended
 * (the transcript), then the live frames.
 */
export class RunLog {
  private frames: LoggedFrame[] = [];
  private first = 0; // index in `frames` of the oldest frame kept
  private bytes = 0; // of the kept frames
  private readonly maxBytes: number;
  private readonly live = new Subject<LoggedFrame>();
  private nextId = 1;
  private ended = false;
  private readonly subscription: Subscription;
  private readonly snapshot = new RunSnapshot();
  private lastEventId = 0; // id of the last frame that was an event (not a transport frame)

  constructor(
    events$: Observable<AgentEvent>,
    private readonly capacity = 10_000,
    options: RunLogOptions = {},
  ) {
    if (!(capacity >= 1)) throw new RangeError(`RunLog: capacity must be at least 1, got ${capacity}`);
    this.maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
    if (!(this.maxBytes >= 1)) throw new RangeError(`RunLog: maxBytes must be at least 1, got ${options.maxBytes}`);
    const coalesce = options.coalesceDeltasMs ?? 0;
    const source = coalesce === false ? events$ : events$.pipe(coalesceDeltas(coalesce, options.scheduler));
    const encode = createWireEncoder();
    this.subscription = source.subscribe({
      next: (event) => {
        this.snapshot.add(event);
        this.lastEventId = this.nextId;
        this.append(encodeSseEvent(this.nextId, encode(event)));
      },
      error: (error: unknown) => {
        this.append(encodeTransportFrame(TRANSPORT_EVENTS.error, { code: 'RunFailed', message: `the run failed: ${error instanceof Error ? error.message : String(error)}` }, this.nextId));
        this.finish();
      },
      complete: () => this.finish(),
    });
  }

  /** True once the run completed or failed. */
  get isOver(): boolean {
    return this.ended;
  }

  /** Id of the last frame written (0 before the first). */
  get lastId(): number {
    return this.nextId - 1;
  }

  /** Bytes of the frames in the replay buffer. */
  get bufferedBytes(): number {
    return this.bytes;
  }

  /**
   * The frames after `afterId` (0: from the start), then the live ones until the run is over.
   * From the start once the first frames fell out of the buffer: the run's snapshot (frames whose
   * `id` is the snapshot's, only the last one saying it on the wire), then the frames after it.
   * Fails with an EventStreamError `ResumeGap` when frames after `afterId` > 0 fell out of the buffer.
   */
  framesAfter(afterId: number): Observable<LoggedFrame> {
    return defer(() => {
      const start = this.startAfter(afterId);
      if (start instanceof EventStreamError) return throwError(() => start);
      return concat(from(start.frames), this.ended ? EMPTY : this.live.asObservable());
    });
  }

  /**
   * Where a client starts, at once: the frames after `afterId` that are kept (or, from the start
   * once the first frames fell out, the snapshot's frames and the kept ones after it), and the id
   * they reach (`cursor`: go on with {@link framesSince}). An EventStreamError `ResumeGap` when it cannot.
   */
  startAfter(afterId: number): { frames: LoggedFrame[]; cursor: number } | EventStreamError {
    const oldest = this.frames[this.first]?.id ?? this.nextId;
    if (!Number.isInteger(afterId) || afterId < 0 || afterId > this.lastId) {
      return new EventStreamError('ResumeGap', `Last-Event-ID ${afterId} is not an event of this run (its ids are 1..${this.lastId})`);
    }
    if (afterId === 0 && oldest > 1) {
      const at = this.lastEventId;
      return { frames: [...this.snapshot.frames(at), ...this.framesSince(at, Infinity)!], cursor: this.lastId };
    }
    const backlog = this.framesSince(afterId, Infinity);
    if (!backlog) {
      return new EventStreamError('ResumeGap', `cannot resume after event ${afterId}: events ${afterId + 1}..${oldest - 1} fell out of the replay buffer (it holds ${oldest}..${this.lastId}); reload the run`);
    }
    return { frames: backlog, cursor: this.lastId };
  }

  /** Up to `max` kept frames after `afterId` (none when it is the last); undefined when frames after it fell out of the buffer. */
  framesSince(afterId: number, max = 256): LoggedFrame[] | undefined {
    const oldest = this.frames[this.first]?.id ?? this.nextId;
    if (afterId + 1 < oldest) return undefined;
    const start = this.first + (afterId + 1 - oldest);
    return this.frames.slice(start, start + max);
  }

  /** Calls `listener` after each frame appended and once the run is over; returns what stops it. */
  onAppend(listener: () => void): () => void {
    if (this.ended) return () => undefined;
    const subscription = this.live.subscribe({ next: listener, complete: listener });
    return () => subscription.unsubscribe();
  }

  /** Stops the run (unsubscribes from it) if it is still going. */
  dispose(): void {
    this.subscription?.unsubscribe();
    this.finish();
  }

  private append(text: string): void {
    const frame = { id: this.nextId++, text };
    this.frames.push(frame);
    this.bytes += byteLength(text);
    while (this.frames.length - this.first > 1 && (this.frames.length - this.first > this.capacity || this.bytes > this.maxBytes)) {
      this.bytes -= byteLength(this.frames[this.first]!.text);
      this.first++;
    }
    // the array is compacted in batches: the dropped head never holds more than the kept frames
    if (this.first > 1024 && this.first * 2 > this.frames.length) {
      this.frames = this.frames.slice(this.first);
      this.first = 0;
    }
    this.live.next(frame);
  }

  private finish(): void {
    if (this.ended) return;
    this.append(encodeTransportFrame(TRANSPORT_EVENTS.end, {}, this.nextId));
    this.ended = true;
    this.live.complete();
  }
}
