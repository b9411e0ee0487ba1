import { Observable } from 'rxjs';
import { listenTo } from '../sources/broadcast.js';

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
  // Made on first use: most dispatches never see a cancellation, and every run of an agent has one.
  private watchers: Map<string, (reason: string | undefined) => void> | undefined;
  /** Cancellations of calls not reached yet, by id. */
  private early: Map<string, string | undefined> | undefined;
  /** The ids of the calls reached so far (a cancellation of one of them that is not running does nothing). */
  private readonly reached: string[] = [];

  /** Listens to `source` (a loop's `cancelToolCalls`) until the returned function is called. */
  connect(source: Observable<string | ToolCallCancel>): () => void {
    return listenTo(source, (c) => (typeof c === 'string' ? this.cancel(c, undefined) : this.cancel(c.toolCallId, c.reason)));
  }

  cancel(toolCallId: string, reason: string | undefined): void {
    const watcher = this.watchers?.get(toolCallId);
    if (watcher) return watcher(reason);
    if (!this.reached.includes(toolCallId)) (this.early ??= new Map()).set(toolCallId, reason);
  }

  /** A cancellation that came before the call was reached (the call is marked reached either way). */
  before(toolCallId: string): { reason: string | undefined } | undefined {
    this.reached.push(toolCallId);
    const early = this.early;
    if (early === undefined || !early.has(toolCallId)) return undefined;
    const reason = early.get(toolCallId);
    early.delete(toolCallId);
    return { reason };
  }

  /** Emits the reason when the call is cancelled while subscribed. */
  of(toolCallId: string): Observable<string | undefined> {
    return new Observable<string | undefined>((subscriber) => this.watch(toolCallId, (reason) => subscriber.next(reason)));
  }

  /** Calls `cut` with the reason when the call is cancelled; returns what stops watching. */
  watch(toolCallId: string, cut: (reason: string | undefined) => void): () => void {
    const watchers = (this.watchers ??= new Map());
    watchers.set(toolCallId, cut);
    return () => watchers.delete(toolCallId);
  }
}
