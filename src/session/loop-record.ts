import type { MessageUpdateEvent } from '../types/events.js';
import type { Usage } from '../types/usage.js';
import { LoopStatus } from './model.js';
import type { ChildLoopRef, LoopRecord, RecordedEvent } from './model.js';
import type { SessionState } from './session-formation.js';

/* The LoopRecord folding helpers of the SessionRecorder: ordering, parent/child links, recorded forms. */

/** A loop the recorder knows, with the session record it belongs to. */
export interface LoopEntry {
  record: LoopRecord;
  state: SessionState;
  /** Its AgentStart has been seen (a parallel branch is known earlier, as Pending). */
  started: boolean;
}

export const isOpen = (r: LoopRecord): boolean => r.status === LoopStatus.Running || r.status === LoopStatus.Pending;
export const isString = (v: unknown): v is string => typeof v === 'string';

/** A loop started with `parentLoopId`: a continuation in its session, or a sub-agent's first loop. */
export function linkContinuation(parent: LoopEntry, child: LoopEntry): void {
  if (parent.state.baseId === child.state.baseId) {
    // A continuation across an inactivity rotation stays a root of its new session.
    if (parent.state === child.state) pushOnce(parent.record.childrenLoopIds, child.record.loopId);
    return;
  }
  upsertChildRef(parent.record, {
    toolCallId: '',
    toolName: '',
    childLoopId: child.record.loopId,
    childSessionId: child.state.session.sessionId,
  });
  child.state.session.parentSpawnRef ??= {
    parentSessionId: parent.state.session.sessionId,
    parentLoopId: parent.record.loopId,
    toolCallId: '',
    toolName: '',
  };
}

/** Inserts (or moves) `record` so the list stays ordered by start time; ties keep arrival order. */
export function placeByStart(loops: LoopRecord[], record: LoopRecord): void {
  const at = loops.indexOf(record);
  if (at >= 0) loops.splice(at, 1);
  let i = loops.length;
  while (i > 0 && loops[i - 1]!.startedAt > record.startedAt) i--;
  loops.splice(i, 0, record);
}

function pushOnce(list: string[], value: string): void {
  if (!list.includes(value)) list.push(value);
}

/** One ref per child; a ref learnt from a tool result supplies the tool call a bare link lacked. */
export function upsertChildRef(record: LoopRecord, ref: ChildLoopRef): void {
  const existing = record.childLoopRefs.find((r) => r.childLoopId === ref.childLoopId);
  if (!existing) record.childLoopRefs.push(ref);
  else if (existing.toolCallId === '' && ref.toolCallId !== '') {
    existing.toolCallId = ref.toolCallId;
    existing.toolName = ref.toolName;
  }
}

export function withoutLiveMessage(e: MessageUpdateEvent): RecordedEvent {
  return { type: 'MessageUpdate', loopId: e.loopId, delta: { ...e.delta }, timestamp: e.timestamp };
}

export function isUsage(u: unknown): u is Usage {
  return typeof u === 'object' && u !== null && typeof (u as Usage).input === 'number' && typeof (u as Usage).output === 'number';
}
