import { Usage } from '../types/usage.js';
import type { LoopRecord, Session } from './model.js';

/**
 * Queries over a Session tree. They are plain functions of the JSON object, so a session
 * loaded from a store answers them exactly as a live one from the recorder does.
 */

/** The loop with this id, if the session holds it. */
export function getLoop(session: Session, loopId: string): LoopRecord | undefined {
  for (const loop of session.loops) if (loop.loopId === loopId) return loop;
  return undefined;
}

/**
 * Loops that start a tree in this session: origin calls, and loops whose parent lives in
 * another session (a sub-agent's first loop).
 */
export function rootLoops(session: Session): LoopRecord[] {
  const ids = new Set(session.loops.map((l) => l.loopId));
  return session.loops.filter((l) => l.parentLoopId === undefined || !ids.has(l.parentLoopId));
}

/** Same-session loops that continue `loopId`, in start order. */
export function childrenOf(session: Session, loopId: string): LoopRecord[] {
  return session.loops.filter((l) => l.parentLoopId === loopId);
}

/** The other branches of the parallel group `loopId` ran in; empty when it ran alone. */
export function parallelSiblings(session: Session, loopId: string): LoopRecord[] {
  const group = getLoop(session, loopId)?.parallelGroup;
  if (!group) return [];
  const siblings: LoopRecord[] = [];
  for (const id of group.allLoopIds) {
    if (id === loopId) continue;
    const loop = getLoop(session, id);
    if (loop) siblings.push(loop);
  }
  return siblings;
}

/** Usage summed over every loop of the session (spec 001: `Session.total_usage()`). */
export function totalUsage(session: Session): Usage {
  const sum = Usage.empty();
  for (const loop of session.loops) Usage.accumulate(sum, loop.usage);
  return sum;
}

export interface SessionQueries {
  rootLoops(): LoopRecord[];
  childrenOf(loopId: string): LoopRecord[];
  parallelSiblings(loopId: string): LoopRecord[];
  getLoop(loopId: string): LoopRecord | undefined;
  totalUsage(): Usage;
}

/** The queries bound to one session: `sessionQueries(s).childrenOf(id)`. */
export function sessionQueries(session: Session): SessionQueries {
  return {
    rootLoops: () => rootLoops(session),
    childrenOf: (loopId) => childrenOf(session, loopId),
    parallelSiblings: (loopId) => parallelSiblings(session, loopId),
    getLoop: (loopId) => getLoop(session, loopId),
    totalUsage: () => totalUsage(session),
  };
}
