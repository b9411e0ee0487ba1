import type {
  AgentEndEvent,
  AgentEvent,
  AgentStartEvent,
  ParallelLoopEndEvent,
  ParallelLoopStartEvent,
  ToolExecutionEndEvent,
} from '../types/events.js';
import { errorMessage } from '../types/errors.js';
import { Usage } from '../types/usage.js';
import { LOOP_EVENT_TYPES, LoopStatus } from './model.js';
import type { LoopRecord, Session } from './model.js';
import { totalUsage } from './queries.js';
import type { AgentEventSink } from '../operators/record-session.js';
import { SessionFormationPolicy, SessionTable, touch } from './session-formation.js';
import type { SessionHook, SessionState } from './session-formation.js';
import { isOpen, isString, isUsage, linkContinuation, placeByStart, upsertChildRef, withoutLiveMessage } from './loop-record.js';
import type { LoopEntry } from './loop-record.js';

export { SessionFormationPolicy } from './session-formation.js';
export type { SessionHook } from './session-formation.js';

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
  private readonly streaming: boolean;
  private readonly config: SessionRecorderConfig;
  private readonly maxOrphans: number;

  /** The session records, open and completed-not-drained. */
  private readonly table: SessionTable;
  private readonly loops = new Map<string, LoopEntry>();
  // The maps below serve what most recorders never see (events out of order, parallel groups): made on first use.
  /** Work waiting for a loop id to become known (links to a parent or child not seen yet). */
  private waiting: Map<string, Array<(entry: LoopEntry) => void>> | undefined;
  /** Events of loops not started yet. */
  private orphans: Map<string, AgentEvent[]> | undefined;
  private orphanCount = 0;
  /** Parallel branch ids by branch, from ParallelLoopStart until the group ends. */
  private groupOf: Map<string, string[]> | undefined;
  /** ParallelLoopEnd events that arrived before their ParallelLoopStart, by selected loop id. */
  private earlyGroupEnds: Map<string, ParallelLoopEndEvent> | undefined;
  private warningCount = 0;

  constructor(config: SessionRecorderConfig = {}) {
    this.config = config;
    this.table = new SessionTable(config.formation ?? SessionFormationPolicy.PerSessionId, config, (message, event) =>
      this.warn(message, event),
    );
    this.streaming = config.recordStreamingEvents ?? false;
    this.maxOrphans = config.maxOrphanEvents ?? 10_000;
  }

  /** Whether MessageUpdate and ToolExecutionUpdate events are kept (`config.recordStreamingEvents`). */
  get recordsStreamingEvents(): boolean {
    return this.streaming;
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
      this.orphans = undefined;
      this.orphanCount = 0;
    }
    this.table.completeAll();
  }

  /**
   * Completes the sessions that have no open loop, leaving running ones alone: for saving
   * finished work periodically. Returns how many it completed.
   */
  checkpoint(): number {
    return this.table.checkpoint();
  }

  /**
   * Hands over the completed sessions, in completion order, and forgets them. If the agent goes on
   * under the same session id, the recorder opens a new record for it, and saving that record
   * would replace the one handed over here.
   */
  drainCompleted(): Session[] {
    const drained = this.table.drain();
    for (const state of drained) {
      for (const loop of state.session.loops) this.loops.delete(loop.loopId);
    }
    return drained.map((s) => s.session);
  }

  /** Every session the recorder holds, completed or in progress, in the order they were opened. */
  sessions(): Session[] {
    return this.table.all().map((s) => s.session);
  }

  getSession(sessionId: string): Session | undefined {
    return this.table.get(sessionId)?.session;
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
    const entry = known ?? this.newLoop(e.loopId, this.table.sessionFor(e.sessionId, e.agentId, e.timestamp), e.timestamp);
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
    if (e.parentLoopId !== undefined) this.whenKnown(e.parentLoopId, (parent) => linkContinuation(parent, entry));
  }

  private onParallelStart(e: ParallelLoopStartEvent): void {
    if (!isString(e.sessionId) || !Array.isArray(e.loopIds) || !e.loopIds.every(isString)) {
      return this.warn('ParallelLoopStart needs a sessionId and string loopIds', e);
    }
    const state = this.table.sessionFor(e.sessionId, '', e.timestamp);
    const allLoopIds = [...e.loopIds];
    for (const loopId of allLoopIds) {
      let entry = this.loops.get(loopId);
      if (!entry) {
        entry = this.newLoop(loopId, state, e.timestamp);
        this.register(entry);
      }
      entry.record.parallelGroup = { allLoopIds, isSelected: false };
      (this.groupOf ??= new Map()).set(loopId, allLoopIds);
    }
    touch(state, e.timestamp);
    for (const loopId of allLoopIds) {
      const early = this.earlyGroupEnds?.get(loopId);
      if (!early) continue;
      this.earlyGroupEnds!.delete(loopId);
      this.onParallelEnd(early);
    }
  }

  private onParallelEnd(e: ParallelLoopEndEvent): void {
    if (!isString(e.selectedLoopId)) return this.warn('ParallelLoopEnd needs a selectedLoopId', e);
    const allLoopIds = this.groupOf?.get(e.selectedLoopId);
    if (!allLoopIds) {
      (this.earlyGroupEnds ??= new Map()).set(e.selectedLoopId, e);
      return;
    }
    for (const loopId of allLoopIds) {
      this.groupOf!.delete(loopId);
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
    if (e.stoppedBy !== undefined) record.stoppedBy = e.stoppedBy;
    record.messages = Array.isArray(e.messages) ? e.messages.slice() : [];
    record.usage = isUsage(e.usage) ? { ...e.usage } : Usage.empty();
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
    const waiters = this.waiting?.get(loopId);
    if (waiters) {
      this.waiting!.delete(loopId);
      for (const w of waiters) w(entry);
    }
    const held = this.orphans?.get(loopId);
    if (held) {
      this.orphans!.delete(loopId);
      this.orphanCount -= held.length;
      for (const e of held) this.dispatch(e);
    }
  }

  private whenKnown(loopId: string, fn: (entry: LoopEntry) => void): void {
    const entry = this.loops.get(loopId);
    if (entry) return fn(entry);
    const waiting = (this.waiting ??= new Map());
    const list = waiting.get(loopId);
    if (list) list.push(fn);
    else waiting.set(loopId, [fn]);
  }

  private holdOrphan(event: AgentEvent & { loopId: string }): void {
    if (this.orphanCount >= this.maxOrphans) {
      return this.warn(`dropped ${event.type} for unknown loop ${event.loopId}: ${this.maxOrphans} events already held`, event);
    }
    const orphans = (this.orphans ??= new Map());
    const list = orphans.get(event.loopId);
    if (list) list.push(event);
    else orphans.set(event.loopId, [event]);
    this.orphanCount++;
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
