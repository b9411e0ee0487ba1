import type { ToolCall } from '../types/content.js';
import type { StreamDelta } from '../types/events.js';
import type { AssistantMessage } from '../types/message.js';

/**
 * An assistant message being streamed, rebuilt from `MessageUpdate` deltas as immutable
 * snapshots: each delta yields a new message whose `content` array is new and whose changed
 * block is new, while every other block stays the same object. Tool-call argument JSON is
 * buffered per block and parsed whenever the text so far is complete JSON.
 */
export interface PartialMessage {
  readonly message: AssistantMessage;
  /** Raw argument JSON received so far, per content index (tool-call blocks only). */
  readonly argumentText: ReadonlyMap<number, string>;
}

/**
 * Starts (or restarts) a partial from a message: at `MessageStart`, and at a `MessageReset`,
 * whose message the following deltas build on. The message is deep-copied, so later mutation of
 * the event's message (its blocks, its usage) cannot reach the snapshot.
 */
export function startPartial(message: AssistantMessage): PartialMessage {
  return { message: structuredClone(message), argumentText: new Map() };
}

/** Applies one delta, returning a new partial; blocks the delta does not touch are reused as they are. */
export function applyDelta(partial: PartialMessage, delta: StreamDelta): PartialMessage {
  const content = partial.message.content.slice();
  const index = delta.contentIndex;
  if (!Number.isInteger(index) || index < 0 || index > content.length) {
    throw new RangeError(`MessageUpdate delta: contentIndex ${index} is outside the message (it has ${content.length} blocks)`);
  }
  const current = content[index];
  let argumentText = partial.argumentText;
  switch (delta.type) {
    case 'text':
      content[index] = { type: 'text', text: (current?.type === 'text' ? current.text : '') + delta.delta };
      break;
    case 'thinking':
      content[index] = current?.type === 'thinking' ? { ...current, thinking: current.thinking + delta.delta } : { type: 'thinking', thinking: delta.delta };
      break;
    case 'toolCall': {
      const base: ToolCall = current?.type === 'toolCall' ? current : { type: 'toolCall', id: '', name: '', arguments: {} };
      const text = (argumentText.get(index) ?? '') + delta.delta;
      argumentText = new Map(argumentText).set(index, text);
      content[index] = {
        ...base,
        id: delta.id ?? base.id,
        name: delta.name ?? base.name,
        arguments: parseArguments(text) ?? base.arguments,
      };
      break;
    }
  }
  return { message: { ...partial.message, content }, argumentText };
}

function parseArguments(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined; // incomplete JSON: keep the last complete arguments
  }
}
