import { errorMessage } from '../types/errors.js';
import type { Session, SessionFormation } from './model.js';

/**
 * When the recorder opens a new Session record.
 * - `PerSessionId`: one record per `sessionId` the events carry (the agent decides, e.g. with
 *   `newSession()` / `checkAndRotate()`).
 * - `InactivityTimeout(ms)`: as above, and a loop that starts more than `ms` after the session's
 *   last event (event timestamps, so virtual time under TestScheduler) while none of its loops is
 *   open closes the record and opens `"{sessionId}~{n}"`.
 */
export type SessionFormationPolicy = { kind: 'perSessionId' } | { kind: 'inactivityTimeout'; idleMs: number };

export const SessionFormationPolicy = {
  PerSessionId: { kind: 'perSessionId' } as SessionFormationPolicy,
  InactivityTimeout(idleMs: number): SessionFormationPolicy {
    if (!(idleMs >= 0)) throw new RangeError(`InactivityTimeout needs idleMs >= 0, got ${idleMs}`);
    return { kind: 'inactivityTimeout', idleMs };
  },
};

/** A session-level hook (spec 003 `before_task` / `after_task`). Its result is not awaited. */
export type SessionHook = (session: Session) => void | Promise<void>;

/** One Session record the recorder is filling. */
export interface SessionState {
  session: Session;
  /** The sessionId the events carry; differs from `session.sessionId` after a rotation. */
  baseId: string;
  /** Loops announced or started and not yet ended. */
  open: number;
  completed: boolean;
}

/**
 * Session formation for the SessionRecorder: which record a loop of a given sessionId belongs to
 * (opening, rotating or reopening records as the policy says), completion with its hooks, and the
 * queue of completed records waiting to be drained.
 */
export class SessionTable {
  /** Every retained session (open and completed-not-drained), by recorded id. */
  private readonly states = new Map<string, SessionState>();
  /** Event sessionId -> the recorded id it currently writes to, and the rotations of each: made at the first rotation (most tables never rotate). */
  private current: Map<string, string> | undefined;
  private rotations: Map<string, number> | undefined;
  /** Completed sessions in completion order, for `drain`. */
  private completedOrder: SessionState[] = [];

  constructor(
    private readonly policy: SessionFormationPolicy,
    private readonly hooks: { beforeTask?: SessionHook; afterTask?: SessionHook },
    private readonly warn: (message: string, event: unknown) => void,
  ) {}

  /** Every retained session, in the order they were opened. */
  all(): SessionState[] {
    return [...this.states.values()];
  }

  get(sessionId: string): SessionState | undefined {
    return this.states.get(sessionId);
  }

  /** The session record a new loop of `sessionId` belongs to, opening or rotating one as the policy says. */
  sessionFor(sessionId: string, agentId: string, timestamp: number): SessionState {
    const state = this.states.get(this.current?.get(sessionId) ?? sessionId);
    if (!state) return this.openSession(sessionId, sessionId, agentId, { kind: 'firstLoop', timestamp });
    if (this.policy.kind === 'inactivityTimeout' && state.open === 0 && timestamp - state.session.lastActiveAt > this.policy.idleMs) {
      this.complete(state);
      const rotations = (this.rotations ??= new Map());
      const n = (rotations.get(sessionId) ?? 1) + 1;
      rotations.set(sessionId, n);
      return this.openSession(`${sessionId}~${n}`, sessionId, agentId || state.session.agentId, {
        kind: 'inactivityTimeout',
        timestamp,
        idleMs: this.policy.idleMs,
        previousSessionId: state.session.sessionId,
      });
    }
    if (state.completed) this.reopen(state);
    return state;
  }

  complete(state: SessionState): void {
    if (state.completed) return;
    state.completed = true;
    this.completedOrder.push(state);
    this.callHook(this.hooks.afterTask, state.session);
  }

  /** Completes every retained session (a hook may open more, which are completed too). */
  completeAll(): void {
    for (const state of this.states.values()) this.complete(state);
  }

  /** Completes the sessions that have no open loop; returns how many it completed. */
  checkpoint(): number {
    let count = 0;
    for (const state of this.states.values()) {
      if (state.completed || state.open > 0) continue;
      this.complete(state);
      count++;
    }
    return count;
  }

  /** Hands over the completed sessions, in completion order, and forgets them. */
  drain(): SessionState[] {
    const drained = this.completedOrder;
    this.completedOrder = [];
    for (const state of drained) {
      this.states.delete(state.session.sessionId);
      if (this.current?.get(state.baseId) === state.session.sessionId) this.current.delete(state.baseId);
    }
    return drained;
  }

  private openSession(id: string, baseId: string, agentId: string, formation: SessionFormation): SessionState {
    const session: Session = {
      version: 1,
      sessionId: id,
      agentId,
      createdAt: formation.timestamp,
      lastActiveAt: formation.timestamp,
      formation,
      loops: [],
    };
    const state: SessionState = { session, baseId, open: 0, completed: false };
    this.states.set(id, state);
    if (id !== baseId) (this.current ??= new Map()).set(baseId, id);
    this.callHook(this.hooks.beforeTask, session);
    return state;
  }

  /** A completed (not yet drained) session that gets a new loop is in progress again. */
  private reopen(state: SessionState): void {
    state.completed = false;
    this.completedOrder = this.completedOrder.filter((s) => s !== state);
  }

  private callHook(hook: SessionHook | undefined, session: Session): void {
    if (!hook) return;
    try {
      const result = hook(session);
      if (result && typeof result.then === 'function') {
        result.then(undefined, (e: unknown) => this.warn(`session hook failed: ${errorMessage(e)}`, undefined));
      }
    } catch (e) {
      this.warn(`session hook failed: ${errorMessage(e)}`, undefined);
    }
  }
}

/** Widens the session's time span; events may arrive out of order, so both ends can move. */
export function touch(state: SessionState, timestamp: number): void {
  if (typeof timestamp !== 'number') return;
  const session = state.session;
  if (timestamp > session.lastActiveAt) session.lastActiveAt = timestamp;
  if (timestamp < session.createdAt) {
    session.createdAt = timestamp;
    if (session.formation.kind === 'firstLoop') session.formation.timestamp = timestamp;
  }
}
