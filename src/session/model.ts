import { z } from 'zod';
import type { ContinuationKind } from '../types/config.js';
import type { AgentEvent, AgentEventType, MessageUpdateEvent } from '../types/events.js';
import type { AgentMessage, StopReason } from '../types/message.js';
import type { Usage } from '../types/usage.js';
import { AgentMessagesSchema, StopReasonSchema, UsageSchema } from '../types/schemas.js';

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
  /** Ordered by `startedAt`. */
  loops: LoopRecord[];
}

// ---------------------------------------------------------------------------------------------
// zod schemas: run when a session is loaded from JSON, never while recording.

/** Every event type, as a record so that a new AgentEvent variant cannot be forgotten here (it fails to compile). */
const EVENT_TYPE_RECORD: Record<AgentEventType, true> = {
  AgentStart: true, AgentEnd: true, TurnStart: true, TurnEnd: true, MessageStart: true, MessageUpdate: true,
  MessageReset: true, MessageEnd: true, ToolExecutionStart: true, ToolExecutionUpdate: true, ToolExecutionEnd: true,
  ProgressMessage: true, InputRejected: true, ParallelLoopStart: true, ParallelLoopEnd: true, CompactionStart: true,
  CompactionEnd: true, RetryScheduled: true, HookError: true,
  ToolApprovalRequested: true, ToolApprovalResolved: true,
};
const EVENT_TYPES = Object.keys(EVENT_TYPE_RECORD) as [AgentEventType, ...AgentEventType[]];

/** The event types a loop record keeps (all but the loop and parallel-group openers, which make records). */
export const LOOP_EVENT_TYPES: ReadonlySet<string> = new Set(
  EVENT_TYPES.filter((t) => t !== 'AgentStart' && t !== 'ParallelLoopStart' && t !== 'ParallelLoopEnd'),
);

export const ContinuationKindSchema = z.lazy(() => z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('default') }),
  z.object({ kind: z.literal('rerun'), tag: z.string() }),
  z.object({ kind: z.literal('branch'), tag: z.string() }),
]));

export const LoopStatusSchema = z.lazy(() => z.enum(['pending', 'running', 'completed', 'rejected', 'aborted']));

export const ChildLoopRefSchema = z.lazy(() => z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  childLoopId: z.string(),
  childSessionId: z.string(),
}));

export const SpawnRefSchema = z.lazy(() => z.object({
  parentSessionId: z.string(),
  parentLoopId: z.string(),
  toolCallId: z.string(),
  toolName: z.string(),
}));

export const ParallelGroupRecordSchema = z.lazy(() => z.object({
  allLoopIds: z.array(z.string()),
  selectedLoopId: z.string().optional(),
  selectedConfigIndex: z.number().int().nonnegative().optional(),
  evaluationUsage: UsageSchema.optional(),
  isSelected: z.boolean(),
}));

export const SessionFormationSchema = z.lazy(() => z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('firstLoop'), timestamp: z.number() }),
  z.object({ kind: z.literal('explicit'), timestamp: z.number() }),
  z.object({
    kind: z.literal('inactivityTimeout'),
    timestamp: z.number(),
    idleMs: z.number(),
    previousSessionId: z.string(),
  }),
]));

/**
 * Recorded events are checked for their tag and time only: they are a log for people and
 * tools to read, while the fields the library acts on (messages, usage, links) are
 * validated in full.
 */
export const RecordedEventSchema = z.lazy(() => z.looseObject({ type: z.enum(EVENT_TYPES), timestamp: z.number() }));

export const LoopRecordSchema = z.lazy(() => z.object({
  loopId: z.string(),
  sessionId: z.string(),
  agentId: z.string(),
  parentLoopId: z.string().optional(),
  continuationKind: ContinuationKindSchema.optional(),
  startedAt: z.number(),
  endedAt: z.number().optional(),
  status: LoopStatusSchema,
  stopReason: StopReasonSchema.optional(),
  rejection: z.string().optional(),
  messages: AgentMessagesSchema,
  usage: UsageSchema,
  metadata: z.unknown().optional(),
  events: z.array(RecordedEventSchema),
  childrenLoopIds: z.array(z.string()),
  childLoopRefs: z.array(ChildLoopRefSchema),
  parallelGroup: ParallelGroupRecordSchema.optional(),
}));

export const SessionSchema = z.lazy(() => z.object({
  version: z.literal(1),
  sessionId: z.string().min(1),
  agentId: z.string(),
  createdAt: z.number(),
  lastActiveAt: z.number(),
  formation: SessionFormationSchema,
  parentSpawnRef: SpawnRefSchema.optional(),
  loops: z.array(LoopRecordSchema),
}));

/** Validates parsed JSON as a Session; the zod error names the first bad path. */
export function parseSession(raw: unknown): z.ZodSafeParseResult<Session> {
  // The schema's output is the Session shape; zod cannot see that through the message transforms.
  return SessionSchema.safeParse(raw) as z.ZodSafeParseResult<Session>;
}
