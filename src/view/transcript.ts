import { distinctUntilChanged, map, type OperatorFunction, scan, startWith } from 'rxjs';
import type { AgentEvent } from '../types/events.js';
import { emptyFold, emptyTranscript, reduceTranscript, type Transcript } from './transcript-state.js';

/**
 * Folds agent events into the view state a UI renders: completed messages, the message being
 * streamed (rebuilt from the deltas, so it never shares the event's live partial), tool calls
 * with status, progress and result, run status and usage. Every emission is a new immutable
 * snapshot in which the parts an event did not touch are the same objects as before, so React's
 * `useSyncExternalStore`, Angular signals or Svelte stores compare them cheaply. Events that
 * change nothing (and events of sub-agent or parallel-branch loops) emit nothing.
 *
 * ```
 * events:     --A--M--u--u--m--Z|     (A AgentStart, M MessageStart, u MessageUpdate, m MessageEnd, Z AgentEnd)
 * transcript: --a--b--c--d--e--f|     (f.status === 'ended'; e.messages[0] is the final message)
 * ```
 *
 * @example
 * agent.events$.pipe(transcript(), latestPerFrame()).subscribe((view) => render(view));
 * // view.streaming?.content, view.messages, view.toolCalls[i].progress, view.status, view.usage
 */
export function transcript(initial: Transcript = emptyTranscript): OperatorFunction<AgentEvent, Transcript> {
  return (events) =>
    events.pipe(
      scan(reduceTranscript, { ...emptyFold, view: initial }),
      map((fold) => fold.view),
      distinctUntilChanged(),
    );
}

/** {@link transcript} starting with the empty transcript, for stores that need a value at once. */
export function transcriptWithInitial(initial: Transcript = emptyTranscript): OperatorFunction<AgentEvent, Transcript> {
  return (events) => events.pipe(transcript(initial), startWith(initial));
}
