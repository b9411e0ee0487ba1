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
  /** The run this call started (an `agentTool`'s child loop), folded as this transcript is, as it streams. */
  readonly child?: Transcript;
}

/** The view state {@link transcript} emits: an immutable snapshot, unchanged parts reference-equal. */
export interface Transcript {
  readonly status: RunStatus;
  /** The loop being folded (a child loop started by one of its tool calls is that call's `child`; parallel branches are left out). */
  readonly loopId: string | undefined;
  /** The agent that has the conversation, when the run has handoffs (`AgentStart.agent`, then each `Handoff.to`). */
  readonly agent?: string;
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
  /** The folds of child loops started by this loop's tool calls, by loop id, and the call each belongs to. */
  readonly children?: ReadonlyMap<string, { readonly toolCallId: string; readonly fold: TranscriptFold }>;
  /** Loops further down (a child's children), by loop id: the child loop whose fold has them. */
  readonly routes?: ReadonlyMap<string, string>;
}

export const emptyFold: TranscriptFold = { view: emptyTranscript, partial: undefined };

/**
 * One step of the fold. Returns `state` itself for events that change nothing (and for events
 * of other loops), so an unchanged snapshot is the same object.
 */
export function reduceTranscript(state: TranscriptFold, e: AgentEvent): TranscriptFold {
  const view = state.view;
  if (e.type === 'AgentStart') {
    if (view.status === 'running' && e.loopId !== view.loopId) return childStart(state, e); // a child or branch loop
    return withView(state, { ...view, status: 'running', loopId: e.loopId, stopReason: undefined, turnIndex: 0, ...(e.agent !== undefined ? { agent: e.agent } : {}) });
  }
  if ('loopId' in e && view.loopId !== undefined && e.loopId !== view.loopId) return childEvent(state, e.loopId, e);
  switch (e.type) {
    case 'AgentEnd':
      return { ...state, view: { ...view, status: 'ended', stopReason: e.stopReason, streaming: undefined, ...(e.agent !== undefined ? { agent: e.agent } : {}) }, partial: undefined };
    case 'Handoff':
      return withView(state, { ...view, agent: e.to });
    case 'TurnStart':
      return e.turnIndex === view.turnIndex ? state : withView(state, { ...view, turnIndex: e.turnIndex });
    case 'TurnEnd':
      return withView(state, { ...view, usage: Usage.combine(view.usage, e.usage) });
    case 'MessageStart':
      if (e.message.role !== 'assistant') return state;
      return restart(state, e.message as AssistantMessage);
    case 'MessageReset': // a retry diverged: the streamed message is discarded, later deltas build on this one
      return restart(state, e.message);
    case 'MessageUpdate': {
      // Folding from mid-message: the event's message already holds this delta, so start from it.
      const partial = state.partial ? applyDelta(state.partial, e.delta) : startPartial(e.message);
      return { ...state, view: { ...view, streaming: partial.message }, partial };
    }
    case 'MessageEnd':
      return { ...state, view: { ...view, messages: [...view.messages, e.message], streaming: undefined }, partial: undefined };
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

function restart(state: TranscriptFold, message: AssistantMessage): TranscriptFold {
  const partial = startPartial(message);
  return { ...state, view: { ...state.view, streaming: partial.message }, partial };
}

function withView(state: TranscriptFold, view: Transcript): TranscriptFold {
  return { ...state, view };
}

/** A loop started by one of this loop's calls becomes that call's `child`; one started further down goes to the child that has its parent. */
function childStart(state: TranscriptFold, e: Extract<AgentEvent, { type: 'AgentStart' }>): TranscriptFold {
  const { view } = state;
  if (e.parentLoopId === undefined) return state;
  if (e.parentLoopId !== view.loopId) return childEvent(state, e.parentLoopId, e);
  const call = e.parentToolCallId;
  if (call === undefined || !view.toolCalls.some((t) => t.id === call)) return state;
  const fold = reduceTranscript(emptyFold, e);
  const children = new Map(state.children).set(e.loopId, { toolCallId: call, fold });
  return updateTool({ ...state, children }, call, (t) => ({ ...t, child: fold.view }));
}

/** An event of a child loop (or of one further down, `loopId` naming where it goes): folded into that child's transcript. */
function childEvent(state: TranscriptFold, loopId: string, e: AgentEvent): TranscriptFold {
  const key = state.children?.has(loopId) ? loopId : state.routes?.get(loopId);
  const child = key === undefined ? undefined : state.children!.get(key);
  if (key === undefined || !child) return state;
  const fold = reduceTranscript(child.fold, e);
  if (fold === child.fold) return state;
  const children = new Map(state.children).set(key, { toolCallId: child.toolCallId, fold });
  const routes = e.type === 'AgentStart' && e.loopId !== key ? new Map(state.routes).set(e.loopId, key) : state.routes;
  return updateTool({ ...state, children, ...(routes ? { routes } : {}) }, child.toolCallId, (t) => ({ ...t, child: fold.view }));
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
