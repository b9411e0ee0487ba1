import { BehaviorSubject, defer, map, type Observable, ReplaySubject, share } from 'rxjs';
import type { AgentEvent, MessageUpdateEvent } from '../types/events.js';
import type { AssistantMessage } from '../types/message.js';
import { startPartial } from '../view/partial-message.js';
import { emptyFold, reduceTranscript, type Transcript, type TranscriptFold } from '../view/transcript-state.js';

/**
 * Makes one run hot where a UI needs it: the first subscriber starts it, every later subscriber
 * — a `runToEnd` next to a `subscribe`, a component mounted mid-run — shares that one run and
 * first gets the events it missed, replayed. When every subscriber has unsubscribed the run is
 * torn down (cancelled) as before; once it has ended, a new subscriber gets its events replayed.
 * An assistant `MessageStart` is replayed as it was when emitted (its message copied), so a late
 * fold of the deltas does not count them twice.
 */
export function shareRun(run$: Observable<AgentEvent>): Observable<AgentEvent> {
  return run$.pipe(
    map(snapshotMessageStart),
    share({ connector: () => new ReplaySubject<AgentEvent>(), resetOnError: false, resetOnComplete: false, resetOnRefCountZero: true }),
  );
}

function snapshotMessageStart(event: AgentEvent): AgentEvent {
  if (event.type !== 'MessageStart' || event.message.role !== 'assistant') return event;
  return { ...event, message: startPartial(event.message as AssistantMessage).message };
}

/** Events kept unfolded while nobody watches the state, at most (then they are folded). */
const MAX_PENDING = 4096;

/**
 * An agent's view state: the {@link Transcript} of its runs, with a current value. While `state$`
 * has subscribers every event is folded as it arrives (one snapshot per event, as a UI wants);
 * while it has none, events wait and are folded when the state is next read, runs of text
 * and thinking deltas to one block folded as one delta — so an agent nobody renders does not pay
 * a snapshot per delta.
 */
export class TranscriptStore {
  private fold: TranscriptFold = emptyFold;
  private pending: AgentEvent[] = [];
  private readonly subject = new BehaviorSubject<Transcript>(emptyFold.view);
  /** The current state first, then each change. */
  readonly state$: Observable<Transcript> = defer(() => {
    this.catchUp();
    return this.subject;
  });

  get value(): Transcript {
    this.catchUp();
    return this.subject.getValue();
  }

  push(event: AgentEvent): void {
    if (this.subject.observed) {
      this.catchUp();
      this.apply(event);
      return;
    }
    this.pending.push(event);
    if (this.pending.length >= MAX_PENDING) this.catchUp();
  }

  reset(): void {
    this.pending = [];
    this.fold = emptyFold;
    this.subject.next(emptyFold.view);
  }

  private apply(event: AgentEvent): void {
    const next = reduceTranscript(this.fold, event);
    if (next === this.fold) return;
    this.fold = next;
    if (next.view !== this.subject.getValue()) this.subject.next(next.view);
  }

  /** Folds the waiting events; consecutive text/thinking deltas to one block become one delta. */
  private catchUp(): void {
    const events = this.pending;
    if (events.length === 0) return;
    this.pending = [];
    let run: MessageUpdateEvent | undefined;
    let text = '';
    const flush = (): void => {
      if (!run) return;
      this.apply({ ...run, delta: { ...run.delta, delta: text } });
      run = undefined;
    };
    for (const event of events) {
      if (event.type === 'MessageUpdate' && (event.delta.type === 'text' || event.delta.type === 'thinking')) {
        if (run && run.loopId === event.loopId && run.delta.type === event.delta.type && run.delta.contentIndex === event.delta.contentIndex) {
          text += event.delta.delta;
          run = event; // the latest message, which holds every delta so far
          continue;
        }
        flush();
        run = event;
        text = event.delta.delta;
        continue;
      }
      flush();
      this.apply(event);
    }
    flush();
  }
}
