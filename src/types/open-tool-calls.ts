import type { AgentMessage, AssistantMessage } from './message.js';
import { isExtension, toolCallsOf } from './message.js';

/**
 * The tool calls of the context's last assistant message that have no result after it — what a
 * run suspended mid-dispatch (a call waiting for approval when the process stopped) left open —
 * as that message narrowed to those calls; `undefined` when every call is answered, the message
 * did not end in `toolUse`, or a user message came after it. A continuation answers them first.
 *
 * @example
 * openToolCalls([user, assistantCalling(a, b), resultOf(b)]); // the assistant message with only call a
 */
export function openToolCalls(messages: readonly AgentMessage[]): AssistantMessage | undefined {
  const answered = new Set<string>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (isExtension(m)) continue;
    if (m.role === 'toolResult') {
      answered.add(m.toolCallId);
      continue;
    }
    if (m.role !== 'assistant' || m.stopReason !== 'toolUse') return undefined;
    const open = toolCallsOf(m).filter((c) => !answered.has(c.id));
    if (open.length === 0) return undefined;
    return { ...m, content: m.content.filter((c) => c.type !== 'toolCall' || !answered.has(c.id)) };
  }
  return undefined;
}
