import type { ContinuationKind } from '../types/config.js';
import type { AgentEvent, AgentEventType, MessageUpdateEvent, StoppedBy } from '../types/events.js';
import type { AgentMessage, StopReason } from '../types/message.js';
import type { Usage } from '../types/usage.js';
import { messageChecks } from '../types/message-checks.js';
import { arrayOf, boolean, type Check, integer, JsonCheckError, nonEmptyString, number, object, oneOf, optional, string, tagged, unknown } from '../types/json-check.js';

/**
 * The recorded shape of agent runs (spec 000 §4): a Session holds the LoopRecords of one
 * agent's loops; loops link to each other as continuations (same session), parallel branches
 * (a ParallelGroupRecord on each branch) and sub-agent spawns (ChildLoopRef / SpawnRef across
 * sessions). Everything here is plain JSON, so a session saved and loaded again is the same
 * object; the queries in `queries.ts` work on loaded sessions as well as live ones.
 */

/** Where a loop stands. `pending`: announced by ParallelLoopStart, AgentStart not seen yet. */
export const LoopStatus = {
  Pending: 'pending',
  Running: 'running',
  Completed: 'completed',
  Rejected: 'rejected',
  Aborted: 'aborted',
} as const;
export type LoopStatus = (typeof LoopStatus)[keyof typeof LoopStatus];

/** Outbound cross-session link on the parent loop: this loop's tool spawned a sub-agent loop. */
export interface ChildLoopRef {
  /** Empty when only the child's `parentLoopId` told us (no ToolExecutionEnd named the child). */
  toolCallId: string;
  toolName: string;
  childLoopId: string;
  childSessionId: string;
}

/** Inbound cross-session link on the child session: which loop and tool call spawned it. */
export interface SpawnRef {
  parentSessionId: string;
  parentLoopId: string;
  toolCallId: string;
  toolName: string;
}

/**
 * A loop's place in a parallel evaluation. Set on every branch when ParallelLoopStart arrives;
 * the selection fields are filled in by ParallelLoopEnd.
 */
export interface ParallelGroupRecord {
  /** Every branch, in config order. */
  allLoopIds: string[];
  selectedLoopId?: string;
  selectedConfigIndex?: number;
  evaluationUsage?: Usage;
  /** True only on the winner's record, once the group has ended. */
  isSelected: boolean;
}

/** Why a session record was opened. */
export type SessionFormation =
  | { kind: 'firstLoop'; timestamp: number }
  /** Opened by an app that builds sessions itself; the recorder never produces it. */
  | { kind: 'explicit'; timestamp: number }
  /** The recorder rotated `previousSessionId` after `idleMs` without activity. */
  | { kind: 'inactivityTimeout'; timestamp: number; idleMs: number; previousSessionId: string };

/**
 * MessageUpdate as recorded (streaming opt-in only): the delta without the live `message` view,
 * which is mutated as the stream goes on and would repeat the whole message in every update.
 */
export type RecordedMessageUpdate = Omit<MessageUpdateEvent, 'message'>;

/** An event in a loop's record. */
export type RecordedEvent = Exclude<AgentEvent, MessageUpdateEvent> | RecordedMessageUpdate;

export interface LoopRecord {
  loopId: string;
  sessionId: string;
  agentId: string;
  parentLoopId?: string;
  continuationKind?: ContinuationKind;
  startedAt: number;
  endedAt?: number;
  status: LoopStatus;
  /** The AgentEnd stop reason. */
  stopReason?: StopReason;
  rejection?: string;
  /** What ended the loop when a stop condition or a guardrail did (AgentEnd.stoppedBy): a tripped run is saved as such. */
  stoppedBy?: StoppedBy;
  /** Every message the loop added (AgentEnd.messages): authoritative. */
  messages: AgentMessage[];
  usage: Usage;
  metadata?: unknown;
  /** Lifecycle events in arrival order; streaming deltas only when opted in. */
  events: RecordedEvent[];
  /** Same-session direct children (continuations). */
  childrenLoopIds: string[];
  /** Cross-session sub-agent spawns. */
  childLoopRefs: ChildLoopRef[];
  parallelGroup?: ParallelGroupRecord;
}

export interface Session {
  /** Format version of the saved JSON. */
  version: 1;
  sessionId: string;
  agentId: string;
  createdAt: number;
  lastActiveAt: number;
  formation: SessionFormation;
  /** Set when this session is a sub-agent spawned by a loop of another session. */
  parentSpawnRef?: SpawnRef;
  /**
   * The conversation the session's first loop started from, when there was one (messages restored
   * with `restoreMessages`, an earlier session's): restoring puts it before the loops' messages.
   */
  history?: AgentMessage[];
  /** Ordered by `startedAt`. */
  loops: LoopRecord[];
}

// ---------------------------------------------------------------------------------------------
// Checks: run when a session is loaded from JSON, never while recording.

/** Every event type, as a record so that a new AgentEvent variant cannot be forgotten here (it fails to compile). */
const EVENT_TYPE_RECORD: Record<AgentEventType, true> = {
  AgentStart: true, AgentEnd: true, TurnStart: true, TurnEnd: true, MessageStart: true, MessageUpdate: true,
  MessageReset: true, MessageEnd: true, ToolExecutionStart: true, ToolExecutionUpdate: true, ToolExecutionEnd: true,
  ProgressMessage: true, InputRejected: true, ParallelLoopStart: true, ParallelLoopEnd: true, CompactionStart: true,
  CompactionEnd: true, RetryScheduled: true, HookError: true,
  ModelFallback: true,
  GuardrailTripped: true,
  ToolApprovalRequested: true, ToolApprovalResolved: true,
  Handoff: true,
};
const EVENT_TYPES = Object.keys(EVENT_TYPE_RECORD) as [AgentEventType, ...AgentEventType[]];

/** The event types a loop record keeps (all but the loop and parallel-group openers, which make records). */
export const LOOP_EVENT_TYPES: ReadonlySet<string> = new Set(
  EVENT_TYPES.filter((t) => t !== 'AgentStart' && t !== 'ParallelLoopStart' && t !== 'ParallelLoopEnd'),
);

let sessionCheck: Check<Session> | undefined;

/** The check of a whole session, built on first use (importing this module builds nothing). */
function buildSessionCheck(): Check<Session> {
  const { agentMessages, stopReason, usage } = messageChecks();
  const continuationKind: Check<ContinuationKind> = tagged<ContinuationKind>('kind', {
    default: object({ kind: oneOf(['default']) }),
    rerun: object({ kind: oneOf(['rerun']), tag: string }),
    branch: object({ kind: oneOf(['branch']), tag: string }),
  });

  const loopStatus: Check<LoopStatus> = oneOf(['pending', 'running', 'completed', 'rejected', 'aborted']);

  const childLoopRef: Check<ChildLoopRef> = object({ toolCallId: string, toolName: string, childLoopId: string, childSessionId: string });

  const spawnRef: Check<SpawnRef> = object({ parentSessionId: string, parentLoopId: string, toolCallId: string, toolName: string });

  const parallelGroupRecord: Check<ParallelGroupRecord> = object({
    allLoopIds: arrayOf(string),
    selectedLoopId: optional(string),
    selectedConfigIndex: optional(integer(0)),
    evaluationUsage: optional(usage),
    isSelected: boolean,
  });

  const sessionFormation: Check<SessionFormation> = tagged<SessionFormation>('kind', {
    firstLoop: object({ kind: oneOf(['firstLoop']), timestamp: number }),
    explicit: object({ kind: oneOf(['explicit']), timestamp: number }),
    inactivityTimeout: object({ kind: oneOf(['inactivityTimeout']), timestamp: number, idleMs: number, previousSessionId: string }),
  });

  /**
   * Recorded events are checked for their tag and time only: they are a log for people and
   * tools to read, while the fields the library acts on (messages, usage, links) are
   * validated in full.
   */
  const recordedEvent = object({ type: oneOf(EVENT_TYPES), timestamp: number }, 'loose') as Check<unknown> as Check<RecordedEvent>;

  const loopRecord: Check<LoopRecord> = object({
    loopId: string,
    sessionId: string,
    agentId: string,
    parentLoopId: optional(string),
    continuationKind: optional(continuationKind),
    startedAt: number,
    endedAt: optional(number),
    status: loopStatus,
    stopReason: optional(stopReason),
    rejection: optional(string),
    stoppedBy: optional(tagged<StoppedBy>('kind', {
      stopWhen: object({ kind: oneOf(['stopWhen']), condition: string }),
      guardrail: object({ kind: oneOf(['guardrail']), guardrail: string, stage: oneOf(['input', 'output']), info: unknown }),
    })),
    messages: agentMessages,
    usage,
    metadata: unknown,
    events: arrayOf(recordedEvent),
    childrenLoopIds: arrayOf(string),
    childLoopRefs: arrayOf(childLoopRef),
    parallelGroup: optional(parallelGroupRecord),
  });

  return object({
    version: oneOf([1]),
    sessionId: nonEmptyString(),
    agentId: string,
    createdAt: number,
    lastActiveAt: number,
    formation: sessionFormation,
    parentSpawnRef: optional(spawnRef),
    history: optional(agentMessages),
    loops: arrayOf(loopRecord),
  });
}

/** What `parseSession` found: the session, or where it first goes wrong (`error.path`, from the session root). */
export type SessionParseResult = { success: true; data: Session } | { success: false; error: JsonCheckError };

/** Validates parsed JSON as a Session; a failure names the first bad path. */
export function parseSession(raw: unknown): SessionParseResult {
  try {
    return { success: true, data: (sessionCheck ??= buildSessionCheck())(raw, []) };
  } catch (e) {
    if (e instanceof JsonCheckError) return { success: false, error: e };
    throw e;
  }
}
