import type { Artifact, Message, Part, Task, TaskState } from '@a2a-js/sdk';

/**
 * Small constructors for the A2A 1.0 objects phi-rx sends and reads (the `@a2a-js/sdk` 1.x shapes:
 * parts as `{ content: { $case, value } }`, enums as numbers). Type-only imports: nothing here
 * loads the SDK.
 */

/** The task states phi-rx uses, by name (the SDK's `TaskState` enum values). */
export const TASK_STATE = {
  submitted: 1 as TaskState,
  working: 2 as TaskState,
  completed: 3 as TaskState,
  failed: 4 as TaskState,
  canceled: 5 as TaskState,
  inputRequired: 6 as TaskState,
  rejected: 7 as TaskState,
} as const;

/** States after which a task never changes again. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([TASK_STATE.completed, TASK_STATE.failed, TASK_STATE.canceled, TASK_STATE.rejected]);

const ROLE_USER = 1 as Message['role'];
const ROLE_AGENT = 2 as Message['role'];

/** The metadata key phi-rx writes into tasks, messages and updates. */
export const PHI_RX_KEY = 'phi-rx';

export function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: {}, filename: '', mediaType: 'text/plain' };
}

export function dataPart(data: unknown): Part {
  return { content: { $case: 'data', value: data }, metadata: {}, filename: '', mediaType: 'application/json' };
}

/** A message of the agent (status messages) or of the user (what a client sends). */
export function a2aMessage(
  role: 'agent' | 'user', parts: Part[], ids: { messageId: string; contextId?: string; taskId?: string }, metadata: Record<string, unknown> = {},
): Message {
  return {
    messageId: ids.messageId, contextId: ids.contextId ?? '', taskId: ids.taskId ?? '', role: role === 'agent' ? ROLE_AGENT : ROLE_USER,
    parts, metadata, extensions: [], referenceTaskIds: [],
  };
}

export function a2aArtifact(artifactId: string, name: string, parts: Part[], metadata: Record<string, unknown> = {}): Artifact {
  return { artifactId, name, description: '', parts, metadata, extensions: [] };
}

/** The text of the text parts, joined (data parts as JSON when `withData`). */
export function textOfParts(parts: readonly Part[] | undefined, withData = false): string {
  const out: string[] = [];
  for (const p of parts ?? []) {
    if (p.content?.$case === 'text') out.push(p.content.value);
    else if (withData && p.content?.$case === 'data') out.push(JSON.stringify(p.content.value));
  }
  return out.join(withData ? '\n' : '');
}

/** The values of the data parts. */
export function dataOfParts(parts: readonly Part[] | undefined): unknown[] {
  return (parts ?? []).flatMap((p) => (p.content?.$case === 'data' ? [p.content.value] : []));
}

/** The phi-rx event id an update, message or task carries in its metadata (`metadata['phi-rx'].eventId`). */
export function eventIdOf(carrier: { metadata?: Record<string, unknown> | undefined } | undefined): number | undefined {
  const meta = carrier?.metadata?.[PHI_RX_KEY] as { eventId?: unknown; lastEventId?: unknown } | undefined;
  const id = meta?.eventId ?? meta?.lastEventId;
  return typeof id === 'number' ? id : undefined;
}

/** A deep copy of a task (snapshots handed out must not share objects with the live model). */
export function copyTask(task: Task): Task {
  return structuredClone(task);
}

/**
 * A user message to send to an A2A agent: text (or parts), in a context and task when given (a
 * reply to a task waiting for input names its task).
 *
 * @example
 * await client.sendMessage({ tenant: '', message: a2aMessageOf('Hi'), configuration: undefined, metadata: {} });
 */
export function a2aMessageOf(content: string | Part[], ids: { contextId?: string; taskId?: string } = {}): Message {
  const parts = typeof content === 'string' ? [textPart(content)] : content;
  return a2aMessage('user', parts, { messageId: globalThis.crypto.randomUUID(), ...ids });
}
