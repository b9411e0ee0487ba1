import type { AgentEvent } from '../types/events.js';
import type { AgentMessage, AssistantMessage, StopReason } from '../types/message.js';
import type { ToolResult } from '../types/tool.js';
import { Usage } from '../types/usage.js';
import { applyDelta, type PartialMessage, startPartial } from './partial-message.js';

/** Where a run is: none yet, running, or ended (`stopReason` says how, `aborted` included). */
export type RunStatus = 'idle' | 'running' | 'ended';

/** One tool call as a UI shows it. */
export interface ToolCallView {
  readonly id: string;
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** `awaitingApproval` from ToolApprovalRequested until the call starts (or ends denied). */
  readonly status: 'awaitingApproval' | 'running' | 'done' | 'error';
  /** `ProgressMessage` texts, in order. */
  readonly progress: readonly string[];
  /** The last `ToolExecutionUpdate`'s partial result, until the end. */
  readonly partialResult: ToolResult | undefined;
  readonly result: ToolResult | undefined;
}

/** The view state {@link transcript} emits: an immutable snapshot, unchanged parts reference-equal. */
export interface Transcript {
  readonly status: RunStatus;
  /** The loop being folded (sub-agent and parallel-branch loops are left out). */
  readonly loopId: string | undefined;
  /** Completed messages of every run folded so far, in order. */
  readonly messages: readonly AgentMessage[];
  /** The assistant message being streamed, rebuilt from deltas; `undefined` between messages. */
  readonly streaming: AssistantMessage | undefined;
  /** Tool calls in the order they started. */
  readonly toolCalls: readonly ToolCallView[];
  /** Usage summed over every finished turn. */
  readonly usage: Usage;
  readonly turnIndex: number;
  readonly stopReason: StopReason | undefined;
}

/** A transcript with nothing in it. */
export const emptyTranscript: Transcript = Object.freeze({
  status: 'idle',
  loopId: undefined,
  messages: Object.freeze([]),
  streaming: undefined,
  toolCalls: Object.freeze([]),
  usage: Object.freeze(Usage.empty()),
  turnIndex: 0,
  stopReason: undefined,
});

/** Internal state: the transcript plus the partial message's argument buffers. */
export interface TranscriptFold {
  readonly view: Transcript;
  readonly partial: PartialMessage | undefined;
}

export const emptyFold: TranscriptFold = { view: emptyTranscript, partial: undefined };

/**
 * One step of the fold. Returns `state` itself for events that change nothing (and for events
 * of other loops), so an unchanged snapshot is the same object.
 */
export function reduceTranscript(state: TranscriptFold, e: AgentEvent): TranscriptFold {
  const view = state.view;
  if (e.type === 'AgentStart') {
    if (view.status === 'running' && e.loopId !== view.loopId) return state; // a child or branch loop
    return withView(state, { ...view, status: 'running', loopId: e.loopId, stopReason: undefined, turnIndex: 0 });
  }
  if ('loopId' in e && view.loopId !== undefined && e.loopId !== view.loopId) return state;
  switch (e.type) {
    case 'AgentEnd':
      return { view: { ...view, status: 'ended', stopReason: e.stopReason, streaming: undefined }, partial: undefined };
    case 'TurnStart':
      return e.turnIndex === view.turnIndex ? state : withView(state, { ...view, turnIndex: e.turnIndex });
    case 'TurnEnd':
      return withView(state, { ...view, usage: Usage.combine(view.usage, e.usage) });
    case 'MessageStart':
      if (e.message.role !== 'assistant') return state;
      return restart(view, e.message as AssistantMessage);
    case 'MessageReset': // a retry diverged: the streamed message is discarded, later deltas build on this one
      return restart(view, e.message);
    case 'MessageUpdate': {
      // Folding from mid-message: the event's message already holds this delta, so start from it.
      const partial = state.partial ? applyDelta(state.partial, e.delta) : startPartial(e.message);
      return { view: { ...view, streaming: partial.message }, partial };
    }
    case 'MessageEnd':
      return { view: { ...view, messages: [...view.messages, e.message], streaming: undefined }, partial: undefined };
    case 'ToolApprovalRequested':
      return withView(state, {
        ...view,
        toolCalls: [...view.toolCalls, { id: e.toolCallId, name: e.toolName, args: e.args, status: 'awaitingApproval', progress: [], partialResult: undefined, result: undefined }],
      });
    case 'ToolExecutionStart':
      // A call that waited for approval is already listed: it starts now, with the arguments it runs with.
      if (view.toolCalls.some((t) => t.id === e.toolCallId && t.status === 'awaitingApproval')) {
        return updateTool(state, e.toolCallId, (t) => ({ ...t, args: e.args, status: 'running' }));
      }
      return withView(state, {
        ...view,
        toolCalls: [...view.toolCalls, { id: e.toolCallId, name: e.toolName, args: e.args, status: 'running', progress: [], partialResult: undefined, result: undefined }],
      });
    case 'ToolExecutionUpdate':
      return updateTool(state, e.toolCallId, (t) => ({ ...t, partialResult: e.partialResult }));
    case 'ProgressMessage':
      return updateTool(state, e.toolCallId, (t) => ({ ...t, progress: [...t.progress, e.text] }));
    case 'ToolExecutionEnd':
      return updateTool(state, e.toolCallId, (t) => ({ ...t, status: e.isError ? 'error' : 'done', result: e.result, partialResult: undefined }));
    default:
      return state;
  }
}

function restart(view: Transcript, message: AssistantMessage): TranscriptFold {
  const partial = startPartial(message);
  return { view: { ...view, streaming: partial.message }, partial };
}

function withView(state: TranscriptFold, view: Transcript): TranscriptFold {
  return { view, partial: state.partial };
}

function updateTool(state: TranscriptFold, id: string, change: (tool: ToolCallView) => ToolCallView): TranscriptFold {
  const toolCalls = state.view.toolCalls;
  let index = -1;
  for (let i = toolCalls.length - 1; i >= 0; i--) {
    if (toolCalls[i]!.id === id) {
      index = i;
      break;
    }
  }
  if (index < 0) return state; // an update for a call this transcript never saw start
  const next = toolCalls.slice();
  next[index] = change(toolCalls[index]!);
  return withView(state, { ...state.view, toolCalls: next });
}
