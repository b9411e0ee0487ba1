import type { AgentMessage } from '../types/message.js';

/** ~4 characters per token: the spec's heuristic, cheap and provider-neutral. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const PER_MESSAGE_OVERHEAD = 4;
const IMAGE_TOKENS = 1_200;

/** Estimated tokens of one message, including its framing. Extension messages cost nothing: they never reach the model. */
export function estimateMessageTokens(m: AgentMessage): number {
  if (m.role === 'extension') return 0;
  let chars = 0;
  let images = 0;
  for (const c of m.content) {
    switch (c.type) {
      case 'text':
        chars += c.text.length;
        break;
      case 'thinking':
        chars += c.thinking.length;
        break;
      case 'toolCall':
        chars += c.name.length + JSON.stringify(c.arguments).length;
        break;
      case 'image':
        images++;
        break;
    }
  }
  return Math.ceil(chars / 4) + images * IMAGE_TOKENS + PER_MESSAGE_OVERHEAD;
}

export function estimateContextTokens(messages: readonly AgentMessage[]): number {
  let total = 0;
  for (const m of messages) total += estimateMessageTokens(m);
  return total;
}
