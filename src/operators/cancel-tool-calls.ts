import { Observable, type Subscription } from 'rxjs';

/** Cancels one tool call of a run: it ends with a "cancelled" error result and the run goes on. */
export interface ToolCallCancel {
  toolCallId: string;
  /** Carried into the result the model reads ("Tool call cancelled: <reason>"). */
  reason?: string;
}

/**
 * The cancellations of one dispatch, by call id: a running call (or one waiting for approval) is
 * told through `of(id)`; a cancellation that comes before its call is reached is kept, and the call
 * then ends at once (`before(id)`); one for a call that has already finished does nothing.
 */
export class CallCancellations {
  private readonly watchers = new Map<string, (reason: string | undefined) => void>();
  private readonly early = new Map<string, string | undefined>();
  private readonly reached = new Set<string>();

  /** Listens to `source` (a loop's `cancelToolCalls`) for as long as the returned subscription lives. */
  connect(source: Observable<string | ToolCallCancel>): Subscription {
    return source.subscribe((c) => (typeof c === 'string' ? this.cancel(c, undefined) : this.cancel(c.toolCallId, c.reason)));
  }

  cancel(toolCallId: string, reason: string | undefined): void {
    const watcher = this.watchers.get(toolCallId);
    if (watcher) return watcher(reason);
    if (!this.reached.has(toolCallId)) this.early.set(toolCallId, reason);
  }

  /** A cancellation that came before the call was reached (the call is marked reached either way). */
  before(toolCallId: string): { reason: string | undefined } | undefined {
    this.reached.add(toolCallId);
    if (!this.early.has(toolCallId)) return undefined;
    const reason = this.early.get(toolCallId);
    this.early.delete(toolCallId);
    return { reason };
  }

  /** Emits the reason when the call is cancelled while subscribed. */
  of(toolCallId: string): Observable<string | undefined> {
    return new Observable<string | undefined>((subscriber) => this.watch(toolCallId, (reason) => subscriber.next(reason)));
  }

  /** Calls `cut` with the reason when the call is cancelled; returns what stops watching. */
  watch(toolCallId: string, cut: (reason: string | undefined) => void): () => void {
    this.watchers.set(toolCallId, cut);
    return () => this.watchers.delete(toolCallId);
  }
}
