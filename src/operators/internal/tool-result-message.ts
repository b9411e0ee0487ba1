import type { ToolCall } from '../../types/content.js';
import { type LlmMessage, type ToolResultMessage, type TurnId, withTurnId } from '../../types/message.js';
import type { ToolResult } from '../../types/tool.js';

/**
 * The result message of a call, whole before its first event: tagged with its turn (`turnId`,
 * when dispatch knows it) here, never after it was emitted.
 */
export function toolResultMessage(call: ToolCall, result: ToolResult, isError: boolean, timestamp: number, turnId: TurnId | undefined): ToolResultMessage {
  const message: ToolResultMessage & { turnId?: TurnId } = { role: 'toolResult', toolCallId: call.id, toolName: call.name, content: result.content, isError, timestamp };
  if (result.details !== undefined) message.details = result.details;
  if (turnId !== undefined) message.turnId = turnId;
  return message;
}

/** `message` (a `toolResults` stage's output) tagged with `turnId`: itself when it carries it, else a copy (the stage's object is not changed). */
export function resultOfTurn(message: ToolResultMessage, turnId: TurnId | undefined): ToolResultMessage {
  const own = (message as LlmMessage).turnId;
  return turnId === undefined || (own?.loopId === turnId.loopId && own.turnIndex === turnId.turnIndex) ? message : withTurnId(message, turnId);
}
