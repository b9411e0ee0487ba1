import type { Observer, Subscription } from 'rxjs';
import type { AgentEvent, MessageUpdateEvent } from '../types/events.js';
import { DeltaRun } from './delta-run.js';
import { RunReplay } from './run-replay.js';
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
  /** `sink`, when it is a shared run's replay: handed the runs of deltas gathered here. */
  private readonly replay: RunReplay | undefined;
  /** The run of deltas being gathered (until an event that is not a delta). */
  private run: DeltaRun | undefined;

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
    this.replay = sink instanceof RunReplay ? sink : undefined;
  }

  next(event: AgentEvent): void {
    this.started = true;
    if (event.type === 'MessageUpdate') return this.nextDelta(event);
    this.run = undefined;
    try {
      this.onEvent(event);
      this.controls.observe(event, this.recorder);
      this.store.push(event); // and to events$, when watched
    } catch (e) {
      this.fail(e);
      return;
    }
    this.sink.next(event);
  }

  /**
   * The hot path (a run's deltas): no agent state changes with a delta but the view's. The delta
   * is looked at once, here: the runs of deltas gathered are shared with the view state and the
   * replay log (see {@link DeltaRun}).
   */
  private nextDelta(event: MessageUpdateEvent): void {
    let run = this.run;
    const started = run === undefined || !run.add(event);
    if (started) run = this.run = DeltaRun.of(event);
    try {
      if (this.recordsDeltas) this.recorder.onEvent(event);
      this.store.pushDelta(event, run!, started); // and to events$, when watched
    } catch (e) {
      this.fail(e);
      return;
    }
    if (this.replay !== undefined) this.replay.nextDelta(event, run!, started);
    else this.sink.next(event);
  }

  /** What fails here fails the run, it is not lost. */
  private fail(e: unknown): void {
    this.sink.error(e);
    this.following.unsubscribe();
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
