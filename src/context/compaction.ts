import type { AgentMessage, ToolResultMessage } from '../types/message.js';
import type { ContextConfig } from '../types/config.js';
import type { CompactionTier } from '../types/events.js';
import { estimateContextTokens, estimateMessageTokens } from './tokens.js';

export interface CompactionResult {
  messages: AgentMessage[];
  /** The tier that made it fit, or the last tier tried; undefined when nothing had to change. */
  tier?: CompactionTier;
  tokensBefore: number;
  tokensAfter: number;
  fits: boolean;
}

/** Tokens the conversation may use: the context window less what the system prompt reserves. */
export function effectiveBudget(config: ContextConfig): number {
  return Math.max(0, config.maxContextTokens - config.systemPromptTokens);
}

/**
 * Tier 1: tool outputs longer than `maxLines` keep their head and tail lines, with a marker
 * saying how many were cut, so the model still sees how the output began and ended.
 */
export function truncateToolOutputs(messages: readonly AgentMessage[], maxLines: number): AgentMessage[] {
  return messages.map((m) => (m.role === 'toolResult' ? truncateToolResult(m, maxLines) : m));
}

function truncateToolResult<M extends ToolResultMessage>(m: M, maxLines: number): M {
  let changed = false;
  const content = m.content.map((c) => {
    if (c.type !== 'text') return c;
    const lines = c.text.split('\n');
    if (lines.length <= maxLines) return c;
    changed = true;
    const head = Math.ceil(maxLines / 2);
    const tail = maxLines - head;
    const cut = lines.length - head - tail;
    const kept = [...lines.slice(0, head), `[... ${cut} lines truncated ...]`, ...(tail > 0 ? lines.slice(-tail) : [])];
    return { ...c, text: kept.join('\n') };
  });
  return changed ? { ...m, content } : m;
}

const SUMMARY_CHARS = 200;

/**
 * Tier 2: messages between the kept head and tail are reduced to their first paragraph (at most
 * 200 characters). Tool calls and results keep their ids, so every result still answers a call.
 */
export function summarizeOldTurns(messages: readonly AgentMessage[], keepFirst: number, keepRecent: number): AgentMessage[] {
  const start = Math.min(keepFirst, messages.length);
  const end = Math.max(start, messages.length - keepRecent);
  return messages.map((m, i) => (i < start || i >= end ? m : summarizeMessage(m)));
}

function firstParagraph(text: string): string {
  const para = text.split(/\n\s*\n/, 1)[0] ?? '';
  return para.length > SUMMARY_CHARS || para.length < text.length
    ? `${para.slice(0, SUMMARY_CHARS)}… [summarized]`
    : para;
}

function summarizeMessage(m: AgentMessage): AgentMessage {
  if (m.role === 'extension') return m;
  if (m.role === 'assistant') {
    return {
      ...m,
      content: m.content
        .filter((c) => c.type !== 'thinking')
        .map((c) => (c.type === 'text' ? { ...c, text: firstParagraph(c.text) } : c)),
    };
  }
  return {
    ...m,
    content: m.content.map((c) => (c.type === 'text' ? { ...c, text: firstParagraph(c.text) } : { type: 'text' as const, text: '[image omitted]' })),
  } as AgentMessage;
}

/**
 * Tier 3: keep the first `keepFirst` and as many recent messages as fit, drop the middle. The cut
 * never separates a tool call from its results: the head takes the results that answer its last
 * call, and the tail never starts on a tool result (it steps back to the call that owns it). A
 * marker tells the model that messages are missing.
 */
export function dropMiddle(messages: readonly AgentMessage[], keepFirst: number, keepRecent: number, budget: number): AgentMessage[] {
  const n = messages.length;
  const isResult = (i: number): boolean => messages[i]!.role === 'toolResult';
  let headEnd = Math.min(keepFirst, n);
  while (headEnd < n && isResult(headEnd)) headEnd++;
  const head = messages.slice(0, headEnd);
  let tailStart = Math.max(headEnd, n - Math.max(1, keepRecent));
  while (tailStart > headEnd && isResult(tailStart)) tailStart--;
  // Shrink the tail while over budget, one exchange at a time, keeping at least the last one.
  let tokens = estimateContextTokens(head) + estimateContextTokens(messages.slice(tailStart));
  while (tokens > budget) {
    let next = tailStart + 1;
    while (next < n && isResult(next)) next++;
    if (next >= n) break;
    for (let i = tailStart; i < next; i++) tokens -= estimateMessageTokens(messages[i]!);
    tailStart = next;
  }
  const dropped = tailStart - headEnd;
  if (dropped <= 0) return messages.slice();
  const first = messages[tailStart]!;
  const marker: AgentMessage = {
    role: 'user',
    content: [{ type: 'text', text: `[${dropped} earlier messages were removed to fit the context window]` }],
    timestamp: first.timestamp ?? 0,
  };
  return [...head, marker, ...messages.slice(tailStart)];
}

/**
 * The three tiers in order, stopping at the first that fits `budget`:
 * truncate tool outputs → summarize old turns → keep first + recent, drop the middle.
 */
export function compactMessages(messages: readonly AgentMessage[], config: ContextConfig, budget = effectiveBudget(config)): CompactionResult {
  const tokensBefore = estimateContextTokens(messages);
  if (tokensBefore <= budget) return { messages: messages.slice(), tokensBefore, tokensAfter: tokensBefore, fits: true };
  const tiers: Array<[CompactionTier, (m: readonly AgentMessage[]) => AgentMessage[]]> = [
    [1, (m) => truncateToolOutputs(m, config.toolOutputMaxLines)],
    [2, (m) => summarizeOldTurns(m, config.keepFirst, config.keepRecent)],
    [3, (m) => dropMiddle(m, config.keepFirst, config.keepRecent, budget)],
  ];
  let current: readonly AgentMessage[] = messages;
  let tokens = tokensBefore;
  let tier: CompactionTier = 1;
  for (const [t, apply] of tiers) {
    tier = t;
    current = apply(current);
    tokens = estimateContextTokens(current);
    if (tokens <= budget) break;
  }
  return { messages: current.slice(), tier, tokensBefore, tokensAfter: tokens, fits: tokens <= budget };
}
