import type { Observer, Subscription } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import type { SessionRecorder } from '../session/recorder.js';
import type { RunControls } from './run-controls.js';
import type { TranscriptStore } from './agent-state.js';

/** What a followed run keeps in step: the agent's controls, session record and view state. */
export interface FollowedAgent {
  readonly controls: RunControls;
  readonly recorder: SessionRecorder;
  readonly store: TranscriptStore;
}

/**
 * The observer of one `BasicAgent` run (handed each event by the loop itself, see `runLoop`): keeps
 * the agent in step with each event (its controls, session record and view state; `onEvent` for
 * every event but the deltas), then hands the event to `sink`. One object per run holding
 * everything a delta touches: with hundreds of agents interleaved, every other object read per
 * delta is a likely cache miss.
 *
 * The session recorder is the one the agent had when the run started. What fails here (a throw in
 * `onEvent`) fails the run: `sink` gets the error and `following` is cancelled.
 * `undoIfUnstarted` runs when the run fails before its first event.
 */
export class RunFollower implements Observer<AgentEvent> {
  private started = false;
  private readonly controls: RunControls;
  private readonly recorder: SessionRecorder;
  private readonly recordsDeltas: boolean;
  private readonly store: TranscriptStore;

  constructor(
    agent: FollowedAgent,
    private readonly onEvent: (event: AgentEvent) => void,
    private readonly undoIfUnstarted: (() => void) | undefined,
    private readonly sink: Observer<AgentEvent>,
    private readonly following: Subscription,
  ) {
    this.controls = agent.controls;
    this.recorder = agent.recorder;
    this.recordsDeltas = agent.recorder.recordsStreamingEvents;
    this.store = agent.store;
  }

  next(event: AgentEvent): void {
    this.started = true;
    try {
      if (event.type === 'MessageUpdate') {
        // The hot path (a run's deltas): no agent state changes with a delta but the view's.
        if (this.recordsDeltas) this.recorder.onEvent(event);
      } else {
        this.onEvent(event);
        this.controls.observe(event, this.recorder);
      }
      this.store.push(event); // and to events$, when watched
    } catch (e) {
      this.sink.error(e); // what fails here fails the run, it is not lost
      this.following.unsubscribe();
      return;
    }
    this.sink.next(event);
  }

  error(err: unknown): void {
    if (!this.started) this.undoIfUnstarted?.();
    this.sink.error(err);
    this.following.unsubscribe();
  }

  complete(): void {
    this.sink.complete();
    this.following.unsubscribe();
  }
}
