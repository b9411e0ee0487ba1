import type {
  AgentEndEvent,
  AgentEvent,
  AgentStartEvent,
  MessageUpdateEvent,
  ParallelLoopEndEvent,
  ParallelLoopStartEvent,
  ToolExecutionEndEvent,
} from '../types/events.js';
import { errorMessage } from '../types/errors.js';
import { Usage } from '../types/usage.js';
import { LOOP_EVENT_TYPES, LoopStatus } from './model.js';
import type { ChildLoopRef, LoopRecord, RecordedEvent, Session, SessionFormation } from './model.js';
import { totalUsage } from './queries.js';
import type { AgentEventSink } from '../operators/record-session.js';

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

export interface SessionRecorderConfig {
  /** Default `SessionFormationPolicy.PerSessionId`. */
  formation?: SessionFormationPolicy;
  /**
   * Keep MessageUpdate and ToolExecutionUpdate events in the loop records. Default false: they
   * outnumber every other event a hundredfold and the final messages say the same.
   */
  recordStreamingEvents?: boolean;
  /** Called once when the recorder first sees a session. */
  beforeTask?: SessionHook;
  /** Called when a session is completed: by `flush()`, `checkpoint()`, or an inactivity rotation. */
  afterTask?: SessionHook;
  /** Told about every event the recorder could not use (also counted in `warnings`). */
  onWarning?: (message: string, event: unknown) => void;
  /** Events held for loops whose AgentStart has not arrived yet. Default 10 000. */
  maxOrphanEvents?: number;
}

interface SessionState {
  session: Session;
  /** The sessionId the events carry; differs from `session.sessionId` after a rotation. */
  baseId: string;
  /** Loops announced or started and not yet ended. */
  open: number;
  completed: boolean;
}

interface LoopEntry {
  record: LoopRecord;
  state: SessionState;
  /** Its AgentStart has been seen (a parallel branch is known earlier, as Pending). */
  started: boolean;
}


const isOpen = (r: LoopRecord): boolean => r.status === LoopStatus.Running || r.status === LoopStatus.Pending;
const isString = (v: unknown): v is string => typeof v === 'string';

/**
 * Folds AgentEvents into Session / LoopRecord trees (spec 000 §4). Feed it every event with
 * `onEvent` (or pipe the stream through `recordSession(recorder)`).
 *
 * Arrival order does not matter: events for a loop whose AgentStart has not come yet are held
 * until it does, and parent/child links (continuations, sub-agent spawns) are made as soon as
 * both ends are known, whichever came first. `onEvent` never throws: an event it cannot use is
 * counted in `warnings`.
 */
export class SessionRecorder implements AgentEventSink {
  private readonly policy: SessionFormationPolicy;
  private readonly streaming: boolean;
  private readonly config: SessionRecorderConfig;
  private readonly maxOrphans: number;

  /** Every retained session (open and completed-not-drained), by recorded id. */
  private readonly states = new Map<string, SessionState>();
  /** Event sessionId -> the recorded id it currently writes to (differs after rotations). */
  private readonly current = new Map<string, string>();
  private readonly rotations = new Map<string, number>();
  /** Completed sessions in completion order, for `drainCompleted`. */
  private completedOrder: SessionState[] = [];
  private readonly loops = new Map<string, LoopEntry>();
  /** Work waiting for a loop id to become known (links to a parent or child not seen yet). */
  private readonly waiting = new Map<string, Array<(entry: LoopEntry) => void>>();
  /** Events of loops not started yet. */
  private readonly orphans = new Map<string, AgentEvent[]>();
  private orphanCount = 0;
  /** Parallel branch ids by branch, from ParallelLoopStart until the group ends. */
  private readonly groupOf = new Map<string, string[]>();
  /** ParallelLoopEnd events that arrived before their ParallelLoopStart, by selected loop id. */
  private readonly earlyGroupEnds = new Map<string, ParallelLoopEndEvent>();
  private warningCount = 0;

  constructor(config: SessionRecorderConfig = {}) {
    this.config = config;
    this.policy = config.formation ?? SessionFormationPolicy.PerSessionId;
    this.streaming = config.recordStreamingEvents ?? false;
    this.maxOrphans = config.maxOrphanEvents ?? 10_000;
  }

  /** Events the recorder could not use (malformed, unknown, duplicate) and hook failures. */
  get warnings(): number {
    return this.warningCount;
  }

  /** Records one event. Never throws. */
  onEvent(event: AgentEvent): void {
    try {
      // The hot path: ~10^4 deltas per run, each must cost next to nothing.
      if (event.type === 'MessageUpdate' && !this.streaming) return;
      this.dispatch(event);
    } catch (e) {
      this.warn(`could not record event: ${errorMessage(e)}`, event);
    }
  }

  /**
   * Closes everything: open loops become `aborted`, every session is completed (afterTask runs)
   * and queued for `drainCompleted`. Held events of loops that never started are dropped and
   * counted as warnings.
   */
  flush(): void {
    for (const { record, state } of this.loops.values()) {
      if (!isOpen(record)) continue;
      record.status = LoopStatus.Aborted;
      state.open--;
    }
    if (this.orphanCount > 0) {
      this.warn(`dropped ${this.orphanCount} event(s) of loops whose AgentStart never arrived`, undefined);
      this.orphans.clear();
      this.orphanCount = 0;
    }
    for (const state of this.states.values()) this.complete(state);
  }

  /**
   * Completes the sessions that have no open loop, leaving running ones alone: for saving
   * finished work periodically. Returns how many it completed.
   */
  checkpoint(): number {
    let count = 0;
    for (const state of this.states.values()) {
      if (state.completed || state.open > 0) continue;
      this.complete(state);
      count++;
    }
    return count;
  }

  /**
   * Hands over the completed sessions, in completion order, and forgets them. If the agent goes on
   * under the same session id, the recorder opens a new record for it, and saving that record
   * would replace the one handed over here.
   */
  drainCompleted(): Session[] {
    const drained = this.completedOrder;
    this.completedOrder = [];
    for (const state of drained) {
      this.states.delete(state.session.sessionId);
      if (this.current.get(state.baseId) === state.session.sessionId) this.current.delete(state.baseId);
      for (const loop of state.session.loops) this.loops.delete(loop.loopId);
    }
    return drained.map((s) => s.session);
  }

  /** Every session the recorder holds, completed or in progress, in the order they were opened. */
  sessions(): Session[] {
    return [...this.states.values()].map((s) => s.session);
  }

  getSession(sessionId: string): Session | undefined {
    return this.states.get(sessionId)?.session;
  }

  /** The record of a loop that has started (or been announced) and not yet ended. */
  currentLoop(loopId: string): LoopRecord | undefined {
    const entry = this.loops.get(loopId);
    return entry && isOpen(entry.record) ? entry.record : undefined;
  }

  /** Usage summed over the session's loops; undefined for an unknown session. */
  totalUsage(sessionId: string): Usage | undefined {
    const session = this.getSession(sessionId);
    return session && totalUsage(session);
  }

  // -------------------------------------------------------------------------------------------

  private dispatch(event: AgentEvent): void {
    switch (event.type) {
      case 'AgentStart':
        return this.onAgentStart(event);
      case 'ParallelLoopStart':
        return this.onParallelStart(event);
      case 'ParallelLoopEnd':
        return this.onParallelEnd(event);
      case 'ToolExecutionUpdate':
        if (!this.streaming) return;
        break;
      default:
        if (!LOOP_EVENT_TYPES.has((event as { type: unknown }).type as string)) {
          this.warn(`unknown event type ${JSON.stringify((event as { type: unknown }).type)}`, event);
          return;
        }
    }
    if (!isString(event.loopId)) return this.warn(`${event.type} without a loopId`, event);
    const entry = this.loops.get(event.loopId);
    if (entry) this.applyLoopEvent(entry, event);
    else this.holdOrphan(event);
  }

  private onAgentStart(e: AgentStartEvent): void {
    if (!isString(e.loopId) || !isString(e.sessionId) || !isString(e.agentId)) {
      return this.warn('AgentStart needs string agentId, sessionId and loopId', e);
    }
    const known = this.loops.get(e.loopId);
    if (known?.started) return this.warn(`duplicate AgentStart for loop ${e.loopId}`, e);

    // A loop announced by ParallelLoopStart is known before it starts, and may even have ended.
    const entry = known ?? this.newLoop(e.loopId, this.sessionFor(e.sessionId, e.agentId, e.timestamp), e.timestamp);
    const { record, state } = entry;
    entry.started = true;
    record.agentId = e.agentId;
    if (record.status === LoopStatus.Pending) record.status = LoopStatus.Running;
    if (state.session.agentId === '') state.session.agentId = e.agentId;
    if (e.parentLoopId !== undefined) record.parentLoopId = e.parentLoopId;
    if (e.continuationKind !== undefined) record.continuationKind = e.continuationKind;
    if (e.metadata !== undefined) record.metadata = e.metadata;
    if (record.startedAt !== e.timestamp) {
      record.startedAt = e.timestamp;
      placeByStart(state.session.loops, record);
    }
    record.events.unshift(e);
    touch(state, e.timestamp);
    if (!known) this.register(entry);
    if (e.parentLoopId !== undefined) this.whenKnown(e.parentLoopId, (parent) => this.linkContinuation(parent, entry));
  }

  private onParallelStart(e: ParallelLoopStartEvent): void {
    if (!isString(e.sessionId) || !Array.isArray(e.loopIds) || !e.loopIds.every(isString)) {
      return this.warn('ParallelLoopStart needs a sessionId and string loopIds', e);
    }
    const state = this.sessionFor(e.sessionId, '', e.timestamp);
    const allLoopIds = [...e.loopIds];
    for (const loopId of allLoopIds) {
      let entry = this.loops.get(loopId);
      if (!entry) {
        entry = this.newLoop(loopId, state, e.timestamp);
        this.register(entry);
      }
      entry.record.parallelGroup = { allLoopIds, isSelected: false };
      this.groupOf.set(loopId, allLoopIds);
    }
    touch(state, e.timestamp);
    for (const loopId of allLoopIds) {
      const early = this.earlyGroupEnds.get(loopId);
      if (!early) continue;
      this.earlyGroupEnds.delete(loopId);
      this.onParallelEnd(early);
    }
  }

  private onParallelEnd(e: ParallelLoopEndEvent): void {
    if (!isString(e.selectedLoopId)) return this.warn('ParallelLoopEnd needs a selectedLoopId', e);
    const allLoopIds = this.groupOf.get(e.selectedLoopId);
    if (!allLoopIds) {
      this.earlyGroupEnds.set(e.selectedLoopId, e);
      return;
    }
    for (const loopId of allLoopIds) {
      this.groupOf.delete(loopId);
      const entry = this.loops.get(loopId);
      if (!entry) continue;
      entry.record.parallelGroup = {
        allLoopIds,
        selectedLoopId: e.selectedLoopId,
        selectedConfigIndex: e.selectedConfigIndex,
        evaluationUsage: { ...e.evaluationUsage },
        isSelected: loopId === e.selectedLoopId,
      };
      touch(entry.state, e.timestamp);
    }
  }

  private applyLoopEvent(entry: LoopEntry, e: Exclude<AgentEvent, AgentStartEvent | ParallelLoopStartEvent | ParallelLoopEndEvent>): void {
    entry.record.events.push(e.type === 'MessageUpdate' ? withoutLiveMessage(e) : e);
    touch(entry.state, e.timestamp);
    if (e.type === 'AgentEnd') this.endLoop(entry, e);
    else if (e.type === 'ToolExecutionEnd' && isString(e.childLoopId)) this.linkSpawn(entry, e);
  }

  private endLoop({ record, state }: LoopEntry, e: AgentEndEvent): void {
    if (!Array.isArray(e.messages) || !isUsage(e.usage)) this.warn(`AgentEnd for loop ${record.loopId} lacks messages or usage`, e);
    if (isOpen(record)) state.open--;
    record.status =
      e.rejection !== undefined ? LoopStatus.Rejected : e.stopReason === 'aborted' ? LoopStatus.Aborted : LoopStatus.Completed;
    record.endedAt = e.timestamp;
    if (e.stopReason !== undefined) record.stopReason = e.stopReason;
    if (e.rejection !== undefined) record.rejection = e.rejection;
    record.messages = Array.isArray(e.messages) ? e.messages.slice() : [];
    record.usage = isUsage(e.usage) ? { ...e.usage } : Usage.empty();
  }

  /** A loop started with `parentLoopId`: a continuation in its session, or a sub-agent's first loop. */
  private linkContinuation(parent: LoopEntry, child: LoopEntry): void {
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

  /** A tool's result named the loop it spawned. */
  private linkSpawn(parent: LoopEntry, e: ToolExecutionEndEvent): void {
    const { toolCallId, toolName } = e;
    this.whenKnown(e.childLoopId!, (child) => {
      upsertChildRef(parent.record, {
        toolCallId,
        toolName,
        childLoopId: child.record.loopId,
        childSessionId: child.state.session.sessionId,
      });
      if (child.state.baseId === parent.state.baseId) return;
      const session = child.state.session;
      const spawn = session.parentSpawnRef;
      if (!spawn || (spawn.parentLoopId === parent.record.loopId && spawn.toolCallId === '')) {
        session.parentSpawnRef = {
          parentSessionId: parent.state.session.sessionId,
          parentLoopId: parent.record.loopId,
          toolCallId,
          toolName,
        };
      }
    });
  }

  /** The session record a new loop of `sessionId` belongs to, opening or rotating one as the policy says. */
  private sessionFor(sessionId: string, agentId: string, timestamp: number): SessionState {
    const state = this.states.get(this.current.get(sessionId) ?? sessionId);
    if (!state) return this.openSession(sessionId, sessionId, agentId, { kind: 'firstLoop', timestamp });
    if (this.policy.kind === 'inactivityTimeout' && state.open === 0 && timestamp - state.session.lastActiveAt > this.policy.idleMs) {
      this.complete(state);
      const n = (this.rotations.get(sessionId) ?? 1) + 1;
      this.rotations.set(sessionId, n);
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
    if (id !== baseId) this.current.set(baseId, id);
    this.callHook(this.config.beforeTask, session);
    return state;
  }

  private complete(state: SessionState): void {
    if (state.completed) return;
    state.completed = true;
    this.completedOrder.push(state);
    this.callHook(this.config.afterTask, state.session);
  }

  /** A completed (not yet drained) session that gets a new loop is in progress again. */
  private reopen(state: SessionState): void {
    state.completed = false;
    this.completedOrder = this.completedOrder.filter((s) => s !== state);
  }

  private newLoop(loopId: string, state: SessionState, startedAt: number): LoopEntry {
    const record: LoopRecord = {
      loopId,
      sessionId: state.session.sessionId,
      agentId: state.session.agentId,
      startedAt,
      status: LoopStatus.Pending,
      messages: [],
      usage: Usage.empty(),
      events: [],
      childrenLoopIds: [],
      childLoopRefs: [],
    };
    placeByStart(state.session.loops, record);
    state.open++;
    return { record, state, started: false };
  }

  /** Makes a loop known: runs the links waiting for it, then the events that came before it. */
  private register(entry: LoopEntry): void {
    const loopId = entry.record.loopId;
    this.loops.set(loopId, entry);
    const waiters = this.waiting.get(loopId);
    if (waiters) {
      this.waiting.delete(loopId);
      for (const w of waiters) w(entry);
    }
    const held = this.orphans.get(loopId);
    if (held) {
      this.orphans.delete(loopId);
      this.orphanCount -= held.length;
      for (const e of held) this.dispatch(e);
    }
  }

  private whenKnown(loopId: string, fn: (entry: LoopEntry) => void): void {
    const entry = this.loops.get(loopId);
    if (entry) return fn(entry);
    const list = this.waiting.get(loopId);
    if (list) list.push(fn);
    else this.waiting.set(loopId, [fn]);
  }

  private holdOrphan(event: AgentEvent & { loopId: string }): void {
    if (this.orphanCount >= this.maxOrphans) {
      return this.warn(`dropped ${event.type} for unknown loop ${event.loopId}: ${this.maxOrphans} events already held`, event);
    }
    const list = this.orphans.get(event.loopId);
    if (list) list.push(event);
    else this.orphans.set(event.loopId, [event]);
    this.orphanCount++;
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

  private warn(message: string, event: unknown): void {
    this.warningCount++;
    try {
      this.config.onWarning?.(message, event);
    } catch {
      // A failing warning listener must not turn into a failing recorder.
    }
  }
}

/** Widens the session's time span; events may arrive out of order, so both ends can move. */
function touch(state: SessionState, timestamp: number): void {
  if (typeof timestamp !== 'number') return;
  const session = state.session;
  if (timestamp > session.lastActiveAt) session.lastActiveAt = timestamp;
  if (timestamp < session.createdAt) {
    session.createdAt = timestamp;
    if (session.formation.kind === 'firstLoop') session.formation.timestamp = timestamp;
  }
}

/** Inserts (or moves) `record` so the list stays ordered by start time; ties keep arrival order. */
function placeByStart(loops: LoopRecord[], record: LoopRecord): void {
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
function upsertChildRef(record: LoopRecord, ref: ChildLoopRef): void {
  const existing = record.childLoopRefs.find((r) => r.childLoopId === ref.childLoopId);
  if (!existing) record.childLoopRefs.push(ref);
  else if (existing.toolCallId === '' && ref.toolCallId !== '') {
    existing.toolCallId = ref.toolCallId;
    existing.toolName = ref.toolName;
  }
}

function withoutLiveMessage(e: MessageUpdateEvent): RecordedEvent {
  return { type: 'MessageUpdate', loopId: e.loopId, delta: { ...e.delta }, timestamp: e.timestamp };
}

function isUsage(u: unknown): u is Usage {
  return typeof u === 'object' && u !== null && typeof (u as Usage).input === 'number' && typeof (u as Usage).output === 'number';
}
