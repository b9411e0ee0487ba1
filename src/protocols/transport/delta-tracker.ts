import type { ToolCall } from '../../types/content.js';
import type { StreamDelta } from '../../types/events.js';
import type { AssistantMessage } from '../../types/message.js';

/**
 * The sending side's cheap copy of what a receiver rebuilds with `applyDelta`: one private draft
 * mutated in place per delta (no snapshot per delta), tool-call arguments parsed once at the
 * end. `result()` is the message the receiver holds after the same deltas, or `undefined` when
 * that cannot be known cheaply (a bad content index, tool-call JSON that never completed).
 */
export class DeltaTracker {
  private readonly draft: AssistantMessage;
  private readonly argumentText = new Map<number, string>();
  private exact = true;

  constructor(start: AssistantMessage) {
    this.draft = structuredClone(start);
  }

  apply(delta: StreamDelta): void {
    const content = this.draft.content;
    const index = delta.contentIndex;
    if (!Number.isInteger(index) || index < 0 || index > content.length) {
      this.exact = false;
      return;
    }
    const current = content[index];
    if (delta.type === 'text') {
      if (current?.type === 'text') current.text += delta.delta;
      else content[index] = { type: 'text', text: delta.delta };
    } else if (delta.type === 'thinking') {
      if (current?.type === 'thinking') current.thinking += delta.delta;
      else content[index] = { type: 'thinking', thinking: delta.delta };
    } else {
      const call: ToolCall = current?.type === 'toolCall' ? current : { type: 'toolCall', id: '', name: '', arguments: {} };
      if (delta.id !== undefined) call.id = delta.id;
      if (delta.name !== undefined) call.name = delta.name;
      content[index] = call;
      this.argumentText.set(index, (this.argumentText.get(index) ?? '') + delta.delta);
    }
  }

  result(): AssistantMessage | undefined {
    if (!this.exact) return undefined;
    for (const [index, text] of this.argumentText) {
      const block = this.draft.content[index];
      if (block?.type !== 'toolCall' || text.trim() === '') continue;
      try {
        const value: unknown = JSON.parse(text);
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
        block.arguments = value as Record<string, unknown>;
      } catch {
        return undefined; // the receiver kept its last complete parse, which is not tracked here
      }
    }
    return this.draft;
  }
}
