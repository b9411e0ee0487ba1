import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { Part, TaskState } from '@a2a-js/sdk';
import type { AgentEndEvent, AgentEvent } from '../../types/events.js';
import { isAssistant, textOf } from '../../types/message.js';
import type { ToolResult } from '../../types/tool.js';
import { a2aArtifact, a2aMessage, dataPart, PHI_RX_KEY, TASK_STATE, textPart } from './a2a-parts.js';

/**
 * phi-rx events as A2A task updates (A2A 1.0, the `@a2a-js/sdk` 1.x event shapes):
 *
 * | phi-rx                      | A2A                                                                  |
 * | --------------------------- | -------------------------------------------------------------------- |
 * | MessageUpdate (text delta)  | status `working`, a message with the delta as a text part            |
 * | ToolExecutionStart / Update / End, ProgressMessage | status `working`, a message: a line of text and a data part `{ toolCallId, toolName, ... }` |
 * | ToolApprovalRequested       | status `input-required`, a message asking, with a data part `{ approval: { toolCallId, toolName, args } }` |
 * | ToolApprovalResolved        | status `working`, a message saying how it was answered               |
 * | AgentEnd                    | artifacts `answer` (text) and `output` (structured output), then `completed` (see {@link endUpdates}) |
 *
 * Every update carries `metadata['phi-rx'] = { eventId, type }`: the number of the phi-rx event it
 * came from within the task (1, 2, ...), so a client that subscribes again can tell what it has.
 */

/** What an update needs to name its task and make message ids. */
export interface A2aTaskIds {
  readonly taskId: string;
  readonly contextId: string;
  readonly newId: () => string;
}

/** The A2A updates of one phi-rx event (none for the events A2A has no use for: turns, compaction, ...). AgentEnd: see {@link endUpdates}. */
export function toA2aUpdates(event: AgentEvent, eventId: number, ids: A2aTaskIds): AgentExecutionEvent[] {
  const meta = { [PHI_RX_KEY]: { eventId, type: event.type } };
  const say = (state: TaskState, parts: Part[]): AgentExecutionEvent[] => [status(ids, state, parts, meta)];
  switch (event.type) {
    case 'MessageUpdate':
      return event.delta.type === 'text' && event.delta.delta !== '' ? say(TASK_STATE.working, [textPart(event.delta.delta)]) : [];
    case 'MessageReset':
      return say(TASK_STATE.working, [textPart(''), dataPart({ reset: event.reason, text: textOf(event.message) })]);
    case 'ToolExecutionStart':
      return say(TASK_STATE.working, [textPart(`Calling ${event.toolName}`), dataPart({ toolCallId: event.toolCallId, toolName: event.toolName, args: event.args })]);
    case 'ToolExecutionUpdate':
      return say(TASK_STATE.working, [textPart(resultText(event.partialResult)), dataPart({ toolCallId: event.toolCallId, toolName: event.toolName, partial: true })]);
    case 'ProgressMessage':
      return say(TASK_STATE.working, [textPart(event.text), dataPart({ toolCallId: event.toolCallId, toolName: event.toolName, progress: true })]);
    case 'ToolExecutionEnd':
      return say(TASK_STATE.working, [
        textPart(`${event.toolName} ${event.isError ? 'failed' : 'done'}`),
        dataPart({ toolCallId: event.toolCallId, toolName: event.toolName, isError: event.isError, result: resultText(event.result) }),
      ]);
    case 'ToolApprovalRequested':
      return say(TASK_STATE.inputRequired, [
        textPart(`Approve the call of ${event.toolName} with ${JSON.stringify(event.args)}? Answer "yes", or "no: <reason>" (or a data part { approved, reason?, toolCallId? }).`),
        dataPart({ approval: { toolCallId: event.toolCallId, toolName: event.toolName, args: event.args } }),
      ]);
    case 'ToolApprovalResolved':
      return say(TASK_STATE.working, [
        textPart(`${event.toolName}: ${event.approved ? 'approved' : `denied${event.reason ? ` (${event.reason})` : ''}`}`),
        dataPart({ toolCallId: event.toolCallId, toolName: event.toolName, approved: event.approved, ...(event.reason ? { reason: event.reason } : {}) }),
      ]);
    default:
      return [];
  }
}

/**
 * How a run ended, as A2A: `canceled` (aborted), `rejected` (an input filter refused the prompt),
 * `failed` (the model failed, or the structured output stayed invalid), else the artifacts `answer`
 * (the final text) and `output` (the structured output, as a data part) and `completed`.
 */
export function endUpdates(end: AgentEndEvent, eventId: number, ids: A2aTaskIds): AgentExecutionEvent[] {
  const meta = { [PHI_RX_KEY]: { eventId, type: end.type, stopReason: end.stopReason } };
  const last = [...end.messages].reverse().find(isAssistant);
  if (end.stopReason === 'aborted') return [status(ids, TASK_STATE.canceled, [textPart('The run was cancelled.')], meta)];
  if (end.rejection !== undefined) return [status(ids, TASK_STATE.rejected, [textPart(end.rejection)], meta)];
  if (end.stopReason === 'error') return [status(ids, TASK_STATE.failed, [textPart(last?.errorMessage ?? 'The run failed.')], meta)];
  const text = last ? textOf(last) : '';
  const out: AgentExecutionEvent[] = [artifact(ids, a2aArtifact('answer', 'answer', [textPart(text)]), meta)];
  if (end.output !== undefined) out.push(artifact(ids, a2aArtifact('output', 'output', [dataPart(end.output)]), meta));
  if (end.outputError) {
    out.push(status(ids, TASK_STATE.failed, [textPart(`The answer did not match the output schema: ${end.outputError.message}`)], meta));
  } else out.push({ kind: 'statusUpdate', data: { taskId: ids.taskId, contextId: ids.contextId, status: { state: TASK_STATE.completed, message: undefined, timestamp: new Date().toISOString() }, metadata: meta } });
  return out;
}

/** A status update whose message says `parts`. */
export function status(ids: A2aTaskIds, state: TaskState, parts: Part[], metadata: Record<string, unknown>): AgentExecutionEvent {
  const message = a2aMessage('agent', parts, { messageId: ids.newId(), contextId: ids.contextId, taskId: ids.taskId }, metadata);
  return { kind: 'statusUpdate', data: { taskId: ids.taskId, contextId: ids.contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata } };
}

function artifact(ids: A2aTaskIds, value: ReturnType<typeof a2aArtifact>, metadata: Record<string, unknown>): AgentExecutionEvent {
  return { kind: 'artifactUpdate', data: { taskId: ids.taskId, contextId: ids.contextId, artifact: value, append: false, lastChunk: true, metadata } };
}

function resultText(result: ToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('');
}
