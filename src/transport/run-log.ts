import { concat, defer, EMPTY, from, type Observable, type SchedulerLike, Subject, type Subscription, throwError } from 'rxjs';
import { coalesceDeltas } from './coalesce-deltas.js';
import type { AgentEvent } from '../types/events.js';
import { createWireEncoder, encodeSseEvent, encodeTransportFrame, EventStreamError, TRANSPORT_EVENTS } from './wire.js';

export interface RunLogOptions {
  /** Merge consecutive deltas of one block arriving within this many ms into one frame (default 0: those of one burst); `false`: one frame per event. */
  coalesceDeltasMs?: number | false;
  /** Time source of the coalescing window (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
}

/** One serialized frame of a run, with its id. */
export interface LoggedFrame {
  readonly id: number;
  readonly text: string;
}

/**
 * A run's events, serialized as they happen into SSE frames with ids 1, 2, 3 ..., kept in a
 * bounded replay buffer (the last `capacity` frames) for resuming clients. Subscribes to the
 * run at once: the run is hot and runs once however many clients watch it. A run that fails
 * gets a `phi-rx:error` frame (`RunFailed`); every run ends with a `phi-rx:end` frame.
 */
export class RunLog {
  private readonly frames: LoggedFrame[] = [];
  private readonly live = new Subject<LoggedFrame>();
  private nextId = 1;
  private ended = false;
  private readonly subscription: Subscription;

  constructor(
    events$: Observable<AgentEvent>,
    private readonly capacity = 10_000,
    options: RunLogOptions = {},
  ) {
    if (!(capacity >= 1)) throw new RangeError(`RunLog: capacity must be at least 1, got ${capacity}`);
    const coalesce = options.coalesceDeltasMs ?? 0;
    const source = coalesce === false ? events$ : events$.pipe(coalesceDeltas(coalesce, options.scheduler));
    const encode = createWireEncoder();
    this.subscription = source.subscribe({
      next: (event) => this.append(encodeSseEvent(this.nextId, encode(event))),
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

  /**
   * The frames after `afterId` (0: from the start), then the live ones until the run is over.
   * Fails with an EventStreamError `ResumeGap` when frames after `afterId` fell out of the buffer.
   */
  framesAfter(afterId: number): Observable<LoggedFrame> {
    return defer(() => {
      const kept = this.frames.slice(Math.max(0, this.frames.length - this.capacity));
      const oldest = kept[0]?.id ?? this.nextId;
      if (!Number.isInteger(afterId) || afterId < 0 || afterId > this.lastId) {
        return throwError(() => new EventStreamError('ResumeGap', `Last-Event-ID ${afterId} is not an event of this run (its ids are 1..${this.lastId})`));
      }
      if (afterId + 1 < oldest) {
        return throwError(
          () => new EventStreamError('ResumeGap', `cannot resume after event ${afterId}: events ${afterId + 1}..${oldest - 1} fell out of the replay buffer (it holds ${oldest}..${this.lastId}); reload the run`),
        );
      }
      const backlog = kept.slice(afterId + 1 - oldest);
      const rest: Observable<LoggedFrame> = this.ended ? EMPTY : this.live.asObservable();
      return concat(from(backlog), rest);
    });
  }

  /** Stops the run (unsubscribes from it) if it is still going. */
  dispose(): void {
    this.subscription?.unsubscribe();
    this.finish();
  }

  private append(text: string): void {
    const frame = { id: this.nextId++, text };
    this.frames.push(frame);
    // trimmed in batches (the array holds up to twice the capacity; only the last `capacity` count)
    if (this.frames.length >= 2 * this.capacity) this.frames.splice(0, this.frames.length - this.capacity);
    this.live.next(frame);
  }

  private finish(): void {
    if (this.ended) return;
    this.append(encodeTransportFrame(TRANSPORT_EVENTS.end, {}, this.nextId));
    this.ended = true;
    this.live.complete();
  }
}
