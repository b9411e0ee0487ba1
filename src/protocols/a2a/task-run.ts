import { Observable, Subject } from 'rxjs';
import type { Message, StreamResponse, Task, TaskState } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ExecutionEventBus } from '@a2a-js/sdk/server';
import { copyTask, PHI_RX_KEY, TASK_STATE, TERMINAL_STATES } from './a2a-parts.js';
import type { A2aTaskIds } from './to-a2a.js';

/**
 * One A2A task served by a phi-rx run: the task as its updates built it so far (the same merge the
 * SDK's task store does: a status message joins the history, an artifact replaces the one with its
 * id), the live updates, and the event bus of the request now serving it. Everything happens in
 * one synchronous step per update, so a {@link snapshot} and the updates after it never overlap and
 * never leave a gap.
 */
export class TaskRun {
  private readonly model: Task;
  private readonly live = new Subject<StreamResponse>();
  private lastEventId = 0;
  private assigned = 0;
  private waiting: (() => void) | undefined;
  /** CancelTask asked for this task. */
  cancelRequested = false;

  constructor(
    readonly ids: A2aTaskIds,
    userMessage: Message,
    private bus: ExecutionEventBus,
  ) {
    this.model = {
      id: ids.taskId, contextId: ids.contextId, artifacts: [], history: [structuredClone(userMessage)],
      status: { state: TASK_STATE.working, message: undefined, timestamp: new Date().toISOString() },
      metadata: { [PHI_RX_KEY]: { lastEventId: 0 } },
    };
  }

  get state(): TaskState {
    return this.model.status!.state;
  }

  /** Whether the task reached a final state. */
  get ended(): boolean {
    return TERMINAL_STATES.has(this.model.status!.state);
  }

  /** A number for the next phi-rx event of this task (1, 2, ...; each call hands out the next). */
  nextEventId(): number {
    return ++this.assigned;
  }

  /** A new request serves the task (a reply to input-required): its bus gets the updates from now on, starting with the task. */
  attach(bus: ExecutionEventBus, reply?: Message): void {
    this.bus = bus;
    if (reply && !this.model.history.some((m) => m.messageId === reply.messageId)) this.model.history.push(structuredClone(reply));
    this.bus.publish({ kind: 'task', data: this.snapshotTask() });
  }

  /** Announces the task on the bus (the first event every execution must publish). */
  announce(): void {
    this.bus.publish({ kind: 'task', data: this.snapshotTask() });
  }

  /**
   * Applies the updates of phi-rx event `eventId` to the task and sends them to the bus and to live
   * subscribers. Ids must come in increasing order: the snapshot's `lastEventId` is the last published.
   */
  publish(eventId: number, updates: readonly AgentExecutionEvent[]): void {
    this.lastEventId = Math.max(this.lastEventId, eventId);
    (this.model.metadata as Record<string, unknown>)[PHI_RX_KEY] = { lastEventId: this.lastEventId };
    for (const update of updates) {
      this.apply(update);
      this.bus.publish(update);
      this.live.next(streamResponseOf(update));
    }
    const state = this.model.status!.state;
    if (state === TASK_STATE.inputRequired || TERMINAL_STATES.has(state)) this.release();
    if (TERMINAL_STATES.has(state)) this.live.complete();
  }

  /** Resolves when the task next waits for input or ends (what one execution of the SDK waits for). */
  untilPause(): Promise<void> {
    const state = this.model.status!.state;
    if (state === TASK_STATE.inputRequired || TERMINAL_STATES.has(state)) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.waiting;
      this.waiting = () => {
        previous?.();
        resolve();
      };
    });
  }

  /**
   * The task as it stands and every update after it: the snapshot is taken at subscription, in the
   * same step as the subscription to the live updates. Its `metadata['phi-rx'].lastEventId` is the
   * last phi-rx event it includes; every later update has a higher `eventId`.
   */
  snapshot(): Observable<StreamResponse> {
    return new Observable<StreamResponse>((subscriber) => {
      subscriber.next({ payload: { $case: 'task', value: this.snapshotTask() } });
      if (this.ended) return subscriber.complete();
      return this.live.subscribe(subscriber);
    });
  }

  private snapshotTask(): Task {
    return copyTask(this.model);
  }

  private release(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }

  private apply(update: AgentExecutionEvent): void {
    if (update.kind === 'statusUpdate' && update.data.status) {
      this.model.status = structuredClone(update.data.status);
      const message = update.data.status.message;
      if (message) this.model.history.push(structuredClone(message));
    } else if (update.kind === 'artifactUpdate' && update.data.artifact) {
      const artifact = structuredClone(update.data.artifact);
      const at = this.model.artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
      if (at === -1) this.model.artifacts.push(artifact);
      else if (update.data.append) this.model.artifacts[at]!.parts.push(...artifact.parts);
      else this.model.artifacts[at] = artifact;
    }
  }
}

function streamResponseOf(update: AgentExecutionEvent): StreamResponse {
  switch (update.kind) {
    case 'statusUpdate':
      return { payload: { $case: 'statusUpdate', value: update.data } };
    case 'artifactUpdate':
      return { payload: { $case: 'artifactUpdate', value: update.data } };
    case 'task':
      return { payload: { $case: 'task', value: update.data } };
    case 'message':
      return { payload: { $case: 'message', value: update.data } };
  }
}
