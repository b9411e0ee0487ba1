import { BehaviorSubject, Observable, type Observer, Subscription, type Unsubscribable } from 'rxjs';
import { Broadcast } from '../sources/broadcast.js';
import type { AgentEvent, MessageUpdateEvent } from '../types/events.js';
import { RunReplay } from './run-replay.js';
import { DeltaRun } from './delta-run.js';
import { emptyFold, reduceTranscript, type Transcript, type TranscriptFold } from '../view/transcript-state.js';

/**
 * Makes one run hot where a UI needs it: the first subscriber starts it, every later subscriber
 * — a `runToEnd` next to a `subscribe`, a component mounted mid-run — shares that one run and
 * first catches up on the events it missed: each as it was, but consecutive deltas to one block
 * as one update (their text, the last snapshot and time: see {@link RunReplay}), so that a page
 * mounted after thousands of deltas renders the text so far once. When every subscriber has
 * unsubscribed the run is torn down (cancelled) as before; once it has ended, a new subscriber
 * catches up on the whole run. An assistant `MessageStart` is passed on as it was when emitted
 * (its message copied), so a late fold of the deltas does not count them twice.
 *
 * `connect` starts the run when the first subscriber comes (again after a cancellation): it hands
 * every event of the run to `sink` (a plain callback per event: no operator between the run and its
 * subscribers) and returns what cancels it. What it throws is the run's error, shared like one.
 * (`share` with a `RunReplay` connector, without its two subscriber hops per event.)
 *
 * What is kept for later subscribers is kept only while one can come: once nothing holds the
 * returned Observable any more (`agent.prompt(x).subscribe(render)` keeps none), the GC collects
 * it and the run's log is dropped at its next event that is not a delta. Nothing is kept per delta.
 */
export function shareRun(connect: (sink: Observer<AgentEvent>) => Unsubscribable): Observable<AgentEvent> {
  let replay: RunReplay | undefined;
  let connection: Subscription | undefined;
  let subscribers = 0;
  // The replay keeps the run's events only while this Observable can still be subscribed to (its token held weakly: see SharedRun).
  let handle: WeakRef<object> | undefined;
  const run$ = new SharedRun((subscriber) => {
    subscribers++;
    const target = (replay ??= new RunReplay(handle));
    subscriber.add(() => {
      target.detach(subscriber);
      // The last subscriber left a run still going: cancel it; the next subscriber starts a new one.
      if (--subscribers === 0 && !target.ended) {
        const cancelled = connection;
        connection = undefined;
        replay = undefined;
        cancelled?.unsubscribe();
      }
    });
    target.attach(subscriber);
    if (!connection) {
      const opened = (connection = new Subscription());
      try {
        opened.add(connect(target));
      } catch (e) {
        target.error(e);
      }
    }
  });
  handle = new WeakRef(run$.token);
  return run$;
}

/**
 * A shared run's Observable, and the token its replay log holds weakly: the token is reachable
 * while the Observable is, and from nothing else. A `WeakRef` to the Observable itself would keep
 * it — and all a run reaches through it: its agent, its replay log — alive to the end of the current
 * job (a `WeakRef`'s target is kept so until the job ends), which is every run of the job when a
 * provider's parts come as microtasks.
 */
class SharedRun extends Observable<AgentEvent> {
  readonly token: object = {};
}

/** Entries kept unfolded while nobody watches the state, at most (then they are folded). */
const MAX_PENDING = 4096;

/**
 * An agent's view state: the {@link Transcript} of its runs, with a current value. While `state$`
 * has subscribers every event is folded as it arrives (one snapshot per event, as a UI wants);
 * while it has none, events wait and are folded when the state is next read — so an agent nobody
 * renders does not pay a snapshot per delta. Waiting, consecutive deltas to one block are gathered
 * into one delta (a {@link DeltaRun}: nothing kept per delta), and the deltas of a message that has ended are dropped
 * (its MessageEnd replaces what they streamed), so what waits is a few entries per message.
 * It also hands every event to the agent's `events$`, while that has subscribers.
 */
export class TranscriptStore {
  private fold: TranscriptFold = emptyFold;
  private pending: Array<AgentEvent | DeltaRun> = [];
  /** Where the deltas of the message streaming now begin in `pending` (no other event since). */
  private updatesFrom: number | undefined;
  /** The delta run being gathered: the last entry of `pending`, while only its deltas came since. */
  private gathering: DeltaRun | undefined;
  /** The state for `state$`'s subscribers: made when the first comes (an agent nobody renders has none). */
  private subject: BehaviorSubject<Transcript> | undefined;
  /** Subscribers of `state$` and `events$`, counted here: `push` reads them for every event (the store is in cache then, its Broadcast may not be). */
  private watchers = 0;
  private eventWatchers = 0;
  private readonly events = new Broadcast<AgentEvent>();
  /** Every event pushed, hot (the agent's `events$`); nothing is handed over while nobody watches. */
  readonly events$: Observable<AgentEvent> = new Observable<AgentEvent>((subscriber) => {
    this.eventWatchers++;
    const stop = this.events.listen((event) => subscriber.next(event));
    return () => {
      this.eventWatchers--;
      stop();
    };
  });
  /** The current state first, then each change. */
  readonly state$: Observable<Transcript> = new Observable<Transcript>((subscriber) => {
    this.catchUp();
    this.watchers++;
    const watching = (this.subject ??= new BehaviorSubject(this.fold.view)).subscribe(subscriber);
    return () => {
      this.watchers--;
      watching.unsubscribe();
    };
  });

  get value(): Transcript {
    this.catchUp();
    return this.fold.view;
  }

  push(event: AgentEvent): void {
    this.take(event);
    if (this.eventWatchers > 0) this.events.next(event);
  }

  /** Folds `event` now (state$ is watched) or keeps it waiting. */
  private take(event: AgentEvent): void {
    if (this.watchers > 0) {
      this.catchUp();
      this.apply(event);
      return;
    }
    if (event.type === 'MessageUpdate') return this.wait(event);
    this.gathering = undefined;
    if (event.type === 'MessageEnd' && this.updatesFrom !== undefined && this.sameLoop(event.loopId)) {
      // The message's deltas only moved `streaming`, which its MessageEnd clears: they need no fold.
      this.pending.length = this.updatesFrom;
      this.updatesFrom = undefined;
      this.pending.push(event);
    } else {
      this.updatesFrom = undefined;
      this.pending.push(event);
    }
    if (this.pending.length >= MAX_PENDING) this.catchUp();
  }

  reset(): void {
    this.pending = [];
    this.updatesFrom = undefined;
    this.gathering = undefined;
    this.fold = emptyFold;
    this.subject?.next(emptyFold.view);
  }

  /**
   * A delta of the run of deltas `run` (gathered by the caller, who shares it: see {@link DeltaRun}),
   * which `started` with it. While nobody watches, a run is kept as it grows: the delta itself needs
   * no work here.
   */
  pushDelta(event: MessageUpdateEvent, run: DeltaRun, started: boolean): void {
    if (this.watchers > 0) {
      this.catchUp();
      this.apply(event);
    } else if (run !== this.gathering) {
      // (The hot path is the run gathered already: nothing to do.) A run that began while the state was watched: the rest of it is gathered here.
      if (started) this.waitFor(run);
      else this.wait(event);
    }
    if (this.eventWatchers > 0) this.events.next(event);
  }

  private wait(event: MessageUpdateEvent): void {
    // The hot path: one more delta to the block being gathered (nothing kept).
    if (this.gathering?.add(event) !== true) this.waitFor(DeltaRun.of(event));
  }

  private waitFor(run: DeltaRun): void {
    const pending = this.pending;
    this.updatesFrom ??= pending.length;
    pending.push((this.gathering = run));
    if (pending.length >= MAX_PENDING) this.catchUp();
  }

  /** Whether every waiting delta of the streaming message is of loop `loopId`. */
  private sameLoop(loopId: string): boolean {
    const pending = this.pending;
    for (let i = this.updatesFrom!; i < pending.length; i++) {
      const entry = pending[i]!;
      if ((entry as DeltaRun).loopId !== loopId) return false;
    }
    return true;
  }

  private apply(event: AgentEvent): void {
    const previous = this.fold;
    const next = reduceTranscript(previous, event);
    if (next === previous) return;
    this.fold = next;
    if (next.view !== previous.view) this.subject?.next(next.view);
  }

  /** Folds the waiting entries: a run of deltas as one delta. */
  private catchUp(): void {
    const entries = this.pending;
    if (entries.length === 0) return;
    this.pending = [];
    this.updatesFrom = undefined;
    // A run gathered here is folded as it is now; the rest of it, if it goes on, is gathered here anew (it may be shared, see DeltaRun).
    this.gathering = undefined;
    for (const entry of entries) this.apply(entry.type === 'DeltaRun' ? entry.update() : entry);
  }
}
