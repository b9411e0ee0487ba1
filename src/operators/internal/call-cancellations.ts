import { Observable } from 'rxjs';
import { listenTo } from '../../sources/broadcast.js';
import { removeAt } from '../../util/remove-one.js';

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
  /** The running calls' ids and callbacks, side by side, changed in place (see {@link removeAt}); a call watched again replaces its callback. */
  private readonly watched: string[] = [];
  private readonly cuts: Array<(reason: string | undefined) => void> = [];
  /** Cancellations of calls not reached yet, by id. */
  private early: Map<string, string | undefined> | undefined;
  /** The ids of the calls reached so far (a cancellation of one of them that is not running does nothing). */
  private readonly reached: string[] = [];

  /** Listens to `source` (a loop's `cancelToolCalls`) until the returned function is called. */
  connect(source: Observable<string | ToolCallCancel>): () => void {
    return listenTo(source, (c) => (typeof c === 'string' ? this.cancel(c, undefined) : this.cancel(c.toolCallId, c.reason)));
  }

  cancel(toolCallId: string, reason: string | undefined): void {
    const index = this.watched.indexOf(toolCallId);
    if (index >= 0) return this.cuts[index]!(reason);
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
    const { watched, cuts } = this;
    const at = watched.indexOf(toolCallId);
    if (at >= 0) cuts[at] = cut;
    else {
      watched.push(toolCallId);
      cuts.push(cut);
    }
    return () => {
      // Stops watching the call, whichever callback watches it now (as a Map by id would).
      const index = watched.indexOf(toolCallId);
      if (index < 0) return;
      removeAt(watched, index);
      removeAt(cuts, index);
    };
  }
}
