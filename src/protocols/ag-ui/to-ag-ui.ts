import { asapScheduler, Observable, type OperatorFunction, type SchedulerLike, Subject, type Subscription } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import type { AgUiEvent, AgUiMessage, AgUiRunAgentInput } from './ag-ui-event.js';
import { AgUiMapper } from './ag-ui-mapper.js';

export interface AgUiEventsOptions {
  /** The AG-UI thread (default: the run's session id). */
  threadId?: string;
  /** The AG-UI run (default: the run's loop id); message ids are `{runId}.{n}`. */
  runId?: string;
  /** Echoed on RUN_STARTED. */
  input?: AgUiRunAgentInput;
  /**
   * The conversation before the run, as the client has it. Given, the output starts and ends with a
   * MESSAGES_SNAPSHOT of the whole conversation (and re-syncs with one after a MessageReset), so
   * the client ends with exactly {@link toAgUiMessages} of the run's messages, phi-rx's fields included.
   */
  messages?: readonly AgUiMessage[];
  /** A state to show the client: a STATE_SNAPSHOT after RUN_STARTED. */
  state?: unknown;
  /**
   * A state derived from the run's events (a `scan` over them, say), shown to the client as it
   * changes: STATE_SNAPSHOT the first time (unless `state` was shown), then STATE_DELTA, the JSON
   * Patch from the previous value. Values before RUN_STARTED wait for it; values after the run end are not sent.
   */
  stateFrom?: (events$: Observable<AgentEvent>) => Observable<unknown>;
  /**
   * Tools the client runs (AG-UI frontend tools). Once the run has nothing left but calls of them
   * (and calls waiting for approval), the output ends: RUN_FINISHED with those calls as
   * `outcome.pendingToolCallIds`, and the phi-rx run is unsubscribed. The client runs them and
   * sends the results in its next input.
   */
  clientTools?: Iterable<string>;
  /**
   * End the output at a call waiting for approval, as an AG-UI interrupt: RUN_FINISHED with
   * `outcome: { type: 'interrupt', interrupts }`, one per waiting call (`id` and `toolCallId` the
   * call's id, `reason: 'tool_approval'`), once nothing else runs. The phi-rx run is unsubscribed;
   * the client's next input answers with `resume` ({@link runAgUi} reads it). Default false: the
   * run waits (answered by `agent.approve`), the request shown as CUSTOM `phi-rx:ToolApprovalRequested`.
   */
  interruptApprovals?: boolean;
  /** Where the check "does the run only wait for the client" runs, after the events of a tick (default `asapScheduler`). */
  scheduler?: SchedulerLike;
}

/**
 * Maps a run's events to AG-UI events (protocol 1.0), in an order AG-UI's own `verifyEvents`
 * accepts, aborted and failed runs included.
 *
 * - AgentStart → RUN_STARTED; AgentEnd → RUN_FINISHED (`outcome.type` `cancelled` for an aborted
 *   run, `result.stopReason`, `usage`), or RUN_ERROR when it ended in a provider error; a source
 *   error → RUN_ERROR.
 * - TurnStart / TurnEnd → STEP_STARTED / STEP_FINISHED (`turn {n}`).
 * - An assistant message's deltas → TEXT_MESSAGE_*, REASONING_* (+ REASONING_ENCRYPTED_VALUE for a
 *   signature) and TOOL_CALL_START / ARGS / END, one block open at a time; TOOL_CALL_END means the
 *   arguments are complete, as AG-UI's reference servers use it. A tool-result message →
 *   TOOL_CALL_RESULT; a user message in the run (steering) → a user TEXT_MESSAGE; an extension
 *   message → ACTIVITY_SNAPSHOT.
 * - Everything AG-UI has no event for (tool execution and progress, approvals, retries, fallback,
 *   compaction, hook errors, MessageReset, a sub-agent's events) → CUSTOM `phi-rx:{type}`
 *   carrying the event: nothing is dropped.
 *
 * ```
 * events:       A--T--s--u-----u--e--t--Z|   (A AgentStart, T/t TurnStart/End, s/u/e an assistant message's start, updates, end, Z AgentEnd)
 * agUiEvents():  R--S-----(bc)--c--e--F--D|   (R RUN_STARTED, S/F STEP_*, b/c/e TEXT_MESSAGE_START/CONTENT/END, D RUN_FINISHED)
 * ```
 *
 * It keeps ids and counters, never a copy of streamed text: cost per delta is flat.
 *
 * @example
 * agent.prompt('hi').pipe(agUiEvents({ threadId, runId })).subscribe((e) => res.write(encoder.encode(e)));
 * @see runAgUi
 */
export function agUiEvents(options: AgUiEventsOptions = {}): OperatorFunction<AgentEvent, AgUiEvent> {
  const scheduler = options.scheduler ?? asapScheduler;
  const watchesClient = options.interruptApprovals === true || options.clientTools !== undefined;
  return (source) =>
    new Observable<AgUiEvent>((subscriber) => {
      const mapper = new AgUiMapper(options, (e) => subscriber.next(e));
      let check: Subscription | undefined;
      const endIfWaiting = () => {
        check = undefined;
        if (!mapper.waitsForClient) return;
        mapper.suspend();
        subscriber.complete();
      };
      const events$ = new Subject<AgentEvent>();
      const state = options.stateFrom?.(events$.asObservable()).subscribe({
        next: (value) => mapper.state(value),
        error: (err) => {
          mapper.error(err);
          subscriber.complete();
        },
      });
      const upstream = source.subscribe({
        next: (e) => {
          mapper.next(e);
          events$.next(e);
          if (watchesClient && check === undefined && mapper.waitsForClient) check = scheduler.schedule(endIfWaiting);
        },
        error: (err) => {
          mapper.error(err);
          subscriber.complete();
        },
        complete: () => {
          mapper.complete();
          subscriber.complete();
        },
      });
      return () => {
        check?.unsubscribe();
        state?.unsubscribe();
        events$.complete();
        upstream.unsubscribe();
      };
    });
}
