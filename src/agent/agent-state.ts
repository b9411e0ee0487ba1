import { BehaviorSubject, map, type Observable, ReplaySubject, share } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
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

/** An agent's view state: the {@link Transcript} of its runs, with a current value. */
export class TranscriptStore {
  private fold: TranscriptFold = emptyFold;
  private readonly subject = new BehaviorSubject<Transcript>(emptyFold.view);
  /** The current state first, then each change. */
  readonly state$: Observable<Transcript> = this.subject.asObservable();

  get value(): Transcript {
    return this.subject.getValue();
  }

  push(event: AgentEvent): void {
    const next = reduceTranscript(this.fold, event);
    if (next === this.fold) return;
    this.fold = next;
    if (next.view !== this.subject.getValue()) this.subject.next(next.view);
  }

  reset(): void {
    this.fold = emptyFold;
    this.subject.next(emptyFold.view);
  }
}
