import { Observable, type Observer, type Subscriber, type SubjectLike, type Unsubscribable } from 'rxjs';
import type { AgentEvent, MessageUpdateEvent } from '../types/events.js';
import type { AssistantMessage } from '../types/message.js';
import { DeltaRun } from './delta-run.js';
import { deepFreeze, FREEZE_EVENTS } from '../loop/freeze-events.js';

/**
 * A copy of a streamed message as it starts, down to what a provider may change in place while it
 * streams (the content array, its blocks, a tool call's arguments, the usage): a structured clone
 * of each of a run's messages cost more than the rest of the replay.
 */
function copyOfStart(message: AssistantMessage): AssistantMessage {
  const content = message.content.map((block) => (block.type === 'toolCall' ? { ...block, arguments: { ...block.arguments } } : { ...block }));
  return { ...message, content, usage: { ...message.usage } };
}

/**
 * The events of one run, kept for a later subscriber: every event as it was, but consecutive deltas
 * to one block as one {@link DeltaRun} (see {@link RunReplay}, which extends it: the log's fields sit
 * in the replay itself, one object fewer read per event).
 */
class EventLog {
  private entries: Array<AgentEvent | DeltaRun> = [];
  /** The run of deltas being gathered: the last entry, while only its deltas came since. */
  private run: DeltaRun | undefined;

  protected push(event: AgentEvent): void {
    if (event.type === 'MessageUpdate') {
      // The hot path: one more delta to the block of the one before (nothing else read, nothing kept).
      if (this.run?.add(event) === true) return;
      this.entries.push((this.run = DeltaRun.of(event)));
      return;
    }
    this.run = undefined;
    this.entries.push(event);
  }

  /** Keeps a delta of `run`, a run of deltas its caller gathers and shares (see {@link DeltaRun}), which `started` with it. */
  protected pushRun(event: MessageUpdateEvent, run: DeltaRun, started: boolean): void {
    if (run === this.run) return; // the hot path: kept already, it grows by itself
    if (started) this.entries.push((this.run = run));
    else this.push(event); // a run that began before it was kept here: the rest of it is gathered here
  }

  /** Drops everything kept (no one can ask for it any more). */
  protected forget(): void {
    this.entries = [];
    this.run = undefined;
  }

  /** Delivers every entry kept so far (and any kept while it delivers), a run of deltas as its one update. */
  protected replay(to: { next(event: AgentEvent): void; readonly closed: boolean }): void {
    // What arrives while it delivers is kept apart from the run it delivered: it reaches `to` too.
    this.run?.close();
    this.run = undefined;
    const entries = this.entries;
    for (let i = 0; i < entries.length && !to.closed; i++) {
      const entry = entries[i]!;
      to.next(entry.type === 'DeltaRun' ? entry.update() : entry);
    }
  }
}

/**
 * The subject behind a shared run ({@link shareRun}): every subscriber first catches up on what it
 * missed, then gets the live events — like a `ReplaySubject`, but without holding every update
 * alive. A streamed message's `MessageUpdate` events each carry a snapshot; keeping thousands of
 * them for a subscriber that may never come is what made a hot run slow (they all outlive the
 * young generation), and a subscriber that comes late wants the text so far, not every step of
 * it. So consecutive deltas to one block of a message are kept as one {@link DeltaRun} (nothing
 * per delta) and caught up on as one update: its delta the text of them all, its message the last
 * snapshot, its time the last one's. Every other event is replayed as it was, in order. An
 * assistant `MessageStart` is passed on (and kept) with its message copied, as it was when
 * emitted, so that a late fold of the deltas does not count them twice.
 */
export class RunReplay extends EventLog implements SubjectLike<AgentEvent> {
  /** The subscribers following live; replaced, never changed in place, so that a delivery can go on over the list it began with. */
  private live: ReadonlyArray<Subscriber<AgentEvent>> = [];
  /** The one live subscriber, while there is exactly one (an event then reads no array). */
  private only: Subscriber<AgentEvent> | undefined;
  private ending: { error: unknown } | 'complete' | undefined;
  /** Whether events are still kept for a later subscriber (see `handle`). */
  private keeping = true;

  /**
   * `handle`: what only the shared run's Observable holds, held weakly. Once it is collected no later
   * subscriber can come, so nothing more is kept and what was is dropped (looked at with each event
   * but the deltas). Without one, everything is kept.
   */
  constructor(private readonly handle?: WeakRef<object>) {
    super();
  }

  next(value: AgentEvent): void {
    if (this.ending) return;
    // The hot path (a delta) reads nothing but this object; other events also check whether to keep on keeping.
    if (value.type !== 'MessageUpdate') return this.nextOther(value);
    if (this.keeping) this.push(value);
    this.deliver(value);
  }

  /** `next` for a delta of `run`, a run of deltas the caller gathers and shares, which `started` with it: the delta is not looked at here. */
  nextDelta(value: MessageUpdateEvent, run: DeltaRun, started: boolean): void {
    if (this.ending) return;
    if (this.keeping) this.pushRun(value, run, started);
    this.deliver(value);
  }

  private nextOther(value: AgentEvent): void {
    let event = value;
    if (this.keeping && this.handle !== undefined && this.handle.deref() === undefined) {
      this.keeping = false;
      this.forget();
    } else if (this.keeping) {
      if (value.type === 'MessageStart' && value.message.role === 'assistant') {
        event = { ...value, message: copyOfStart(value.message as AssistantMessage) };
        if (FREEZE_EVENTS) deepFreeze(event); // the copy goes out in its place: the development check, as in `runLoop`
      }
      this.push(event);
    }
    this.deliver(event);
  }

  private deliver(event: AgentEvent): void {
    const only = this.only;
    if (only !== undefined) return only.next(event);
    const live = this.live;
    for (let i = 0; i < live.length; i++) live[i]!.next(event);
  }

  error(err: unknown): void {
    if (this.ending) return;
    this.ending = { error: err };
    const live = this.following([]);
    for (const subscriber of live) subscriber.error(err);
  }

  complete(): void {
    if (this.ending) return;
    this.ending = 'complete';
    const live = this.following([]);
    for (const subscriber of live) subscriber.complete();
  }

  /** Whether the run has completed or failed. */
  get ended(): boolean {
    return this.ending !== undefined;
  }

  subscribe(observer: Partial<Observer<AgentEvent>>): Unsubscribable {
    return new Observable<AgentEvent>((subscriber) => {
      this.attach(subscriber);
      return () => this.detach(subscriber);
    }).subscribe(observer);
  }

  /** Replays what `subscriber` missed, then ends it (the run has ended) or follows the run live. */
  attach(subscriber: Subscriber<AgentEvent>): void {
    this.replay(subscriber);
    if (subscriber.closed) return;
    const ending = this.ending;
    if (ending === 'complete') subscriber.complete();
    else if (ending) subscriber.error(ending.error);
    else this.following([...this.live, subscriber]);
  }

  detach(subscriber: Subscriber<AgentEvent>): void {
    if (this.live.includes(subscriber)) this.following(this.live.filter((s) => s !== subscriber));
  }

  /** Makes `live` the subscribers following; returns those who were. */
  private following(live: ReadonlyArray<Subscriber<AgentEvent>>): ReadonlyArray<Subscriber<AgentEvent>> {
    const was = this.live;
    this.live = live;
    this.only = live.length === 1 ? live[0] : undefined;
    return was;
  }
}

