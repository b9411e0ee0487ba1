import type { AgentMessage } from '../types/message.js';
import type { AgentEvent } from '../types/events.js';
import type { LoopRecord, Session } from '../session/model.js';
import { SessionRecorder } from '../session/recorder.js';
import type { SessionStore } from '../session/store.js';
import type { PendingApproval } from './run-controls.js';

export { SessionRecorder, type Session, type SessionStore };

/** What `BasicAgent.restore` takes on from a saved session. */
export interface RestoredAgentState {
  /** The conversation: the session's `history`, then every loop's messages in order (an unfinished loop's as far as it got). */
  messages: AgentMessage[];
  /** The session's `history`: the conversation its first loop started from. */
  history: AgentMessage[];
  /** Calls that were waiting for approval when the session was saved. */
  pending: PendingApproval[];
  lastLoopId: string | undefined;
  /** The agent that had the conversation last (the last `Handoff` of the session's runs), when they handed off. */
  activeAgent: string | undefined;
  /** The `{N}` of each config segment's last loop id, so new loop ids go on from there. */
  loopCounters: Map<string, number>;
  /** A recorder holding the session's loops again, to record what comes next into the same session. */
  recorder: SessionRecorder;
}

/**
 * The agent's session as the recorder has it, or an empty one when nothing has run yet: what
 * `BasicAgent.save` stores, with the conversation its first loop started from as `history`. A
 * loop that is still running (waiting for approval, say) is saved as it stands: its events so
 * far, status `running`.
 */
export function agentSession(
  recorder: SessionRecorder, sessionId: string, agentId: string, now: number, history: readonly AgentMessage[] = [],
): Session {
  const session = recorder.getSession(sessionId) ?? {
    version: 1, sessionId, agentId, createdAt: now, lastActiveAt: now, formation: { kind: 'explicit', timestamp: now }, loops: [],
  };
  return history.length > 0 ? { ...session, history: [...history] } : session;
}

/** Saves a session and hands it back. */
export async function saveAgentSession(store: SessionStore, session: Session): Promise<Session> {
  await store.save(session);
  return session;
}

/**
 * Reads a saved session back into an agent's state. The conversation is the session's `history`
 * (what the agent had before the session's first loop), then each loop's messages in start order, skipping parallel branches that were not selected; a loop that never ended
 * contributes the messages its MessageEnd events announced (the prompt, the assistant message
 * whose calls wait, the results that came in). Calls are pending when a ToolApprovalRequested
 * has no ToolApprovalResolved or ToolExecutionEnd anywhere in the session.
 *
 * @example
 * const state = restoredAgentState(await store.load(sessionId));
 * state.pending; // [{ toolCallId: 'call_1', toolName: 'transfer', args: { amount: 50 }, … }]
 */
export function restoredAgentState(session: Session): RestoredAgentState {
  // What the conversation held before the session's first loop, then each loop's messages.
  const messages: AgentMessage[] = session.history ? [...session.history] : [];
  const requested = new Map<string, PendingApproval>();
  const answered = new Set<string>();
  const loopCounters = new Map<string, number>();
  let lastLoopId: string | undefined;
  let activeAgent: string | undefined;
  const recorder = new SessionRecorder();
  for (const loop of session.loops) {
    for (const e of loop.events) recorder.onEvent(e as AgentEvent);
    countLoop(loopCounters, session.sessionId, loop.loopId);
    if (loop.parallelGroup && !loop.parallelGroup.isSelected) continue;
    lastLoopId = loop.loopId;
    messages.push(...messagesOf(loop));
    for (const e of loop.events) {
      if (e.type === 'ToolApprovalRequested') {
        requested.set(e.toolCallId, { loopId: e.loopId, toolCallId: e.toolCallId, toolName: e.toolName, args: e.args, requestedAt: e.timestamp });
      } else if (e.type === 'ToolApprovalResolved' || e.type === 'ToolExecutionEnd') answered.add(e.toolCallId);
      else if (e.type === 'Handoff' && e.loopId === loop.loopId) activeAgent = e.to;
    }
  }
  const pending = [...requested.values()].filter((p) => !answered.has(p.toolCallId));
  return { messages, history: session.history ?? [], pending, lastLoopId, activeAgent, loopCounters, recorder };
}

function messagesOf(loop: LoopRecord): AgentMessage[] {
  if (loop.events.some((e) => e.type === 'AgentEnd')) return loop.messages;
  return loop.events.flatMap((e) => (e.type === 'MessageEnd' ? [e.message] : []));
}

/** Loop ids are `{sessionId}.{segment}.{N}`: keeps the highest N per segment. */
function countLoop(counters: Map<string, number>, sessionId: string, loopId: string): void {
  if (!loopId.startsWith(`${sessionId}.`)) return;
  const rest = loopId.slice(sessionId.length + 1);
  const dot = rest.lastIndexOf('.');
  const n = Number(rest.slice(dot + 1));
  if (dot <= 0 || !Number.isInteger(n)) return;
  const segment = rest.slice(0, dot);
  counters.set(segment, Math.max(counters.get(segment) ?? 0, n));
}
