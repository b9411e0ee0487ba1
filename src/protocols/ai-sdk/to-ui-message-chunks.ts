import { catchError, concatMap, defer, from, type OperatorFunction } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { UIChunkMapper, type UIMessageChunksOptions } from './ui-chunk-mapper.js';
import type { UIMessageChunk } from './ui-message-chunk.js';

export type { UIMessageChunksOptions };

/**
 * Turns a phi-rx run's events into the chunks of the AI SDK's UI message stream, the wire
 * `useChat` reads: `start`, a `start-step` / `finish-step` per turn, `text-*` and `reasoning-*`
 * parts from the streamed deltas (one chunk per delta: no copy of the text so far), tool calls as
 * `tool-input-start` / `-delta` / `-available`, their results as `tool-output-available` (progress
 * as preliminary outputs) or `tool-output-error`, approvals as `tool-approval-request` (its
 * `approvalId` is the tool call's id) and a denial as `tool-output-denied`, a failed model call as
 * `error`, and `finish` (or `abort` for an aborted run). Every phi-rx event the protocol has no
 * chunk for becomes a `data-phi-<event-type>` part holding it (retries, fallbacks, compaction,
 * progress, steering messages, the run's usage): `transient` (reaching `onData`, not the message)
 * for per-turn and per-call bookkeeping and for the events of sub-agent loops. A run that fails
 * ends with an `error` chunk instead of an error notification.
 *
 * ```
 * events:            A---T---u---u---M---E---Z|
 * uiMessageChunks(): s---S---b---d---x---F---f|
 * ```
 * (A AgentStart, T TurnStart, u text deltas, M MessageEnd, E TurnEnd, Z AgentEnd; s start, S start-step,
 * b text-start and text-delta, d text-delta, x text-end, F finish-step, f finish; the data-phi-* chunks
 * that come with A, T, E and Z are not drawn.)
 *
 * @example
 * agent.prompt('Hi').pipe(uiMessageChunks({ messageId: 'msg-1' })).subscribe((chunk) => res.write(`data: ${JSON.stringify(chunk)}\n\n`));
 */
export function uiMessageChunks(options: UIMessageChunksOptions = {}): OperatorFunction<AgentEvent, UIMessageChunk> {
  return (source) =>
    defer(() => {
      const mapper = new UIChunkMapper(options);
      return source.pipe(
        concatMap((event) => mapper.map(event)),
        catchError((error: unknown) => from(mapper.fail(error))),
      );
    });
}
