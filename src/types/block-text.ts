import type { AssistantMessage } from './message.js';

/** The text of a text or thinking block of `kind`; `undefined` when the block is missing, of another kind, or has none. */
export function blockText(block: AssistantMessage['content'][number] | undefined, kind: 'text' | 'thinking'): string | undefined {
  if (block === undefined || block.type !== kind) return undefined;
  const text = (block as unknown as Record<string, unknown>)[kind];
  return typeof text === 'string' ? text : undefined;
}
