import type { AgentMessage } from '../types/message.js';
import { AgentError } from '../types/errors.js';

const ROLES = ['user', 'assistant', 'toolResult', 'extension'];

/**
 * Checks the prompts of a run before anything reaches the model, and returns them ready to send.
 * Throws AgentError('InvalidPrompt') naming the index and field of the first problem.
 *
 * Conveniences, documented and tested: a plain string is one user message; a message's content
 * given as a string (OpenAI style) is one text block; a missing `timestamp` is `now`. Everything
 * else that is not an AgentMessage (an array of strings, `null` entries, an unknown role such as
 * `system`, a user message without content, unknown content blocks) is refused.
 *
 * @example
 * checkPrompts('hi', 0); // [{ role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 0 }]
 * checkPrompts([{ role: 'system', content: 'x' }], 0); // throws: prompts[0].role: unknown role "system" …
 */
export function checkPrompts(prompts: unknown, now: number): AgentMessage[] {
  if (typeof prompts === 'string') return [{ role: 'user', content: [{ type: 'text', text: prompts }], timestamp: now }];
  if (!Array.isArray(prompts)) throw invalid('prompts', `expected an array of messages (or a string), got ${kindOf(prompts)}`);
  return prompts.map((p, i) => checkMessage(p, `prompts[${i}]`, now));
}

/** `agentLoop` without prompts: a continuation is asked for by name (`agentLoopContinue`), never by a missing argument. */
export function missingPrompts(): AgentError {
  return invalid('prompts', 'expected an array of messages (or a string), got undefined: to go on from the context with no new prompt, call agentLoopContinue(context, config)');
}

function checkMessage(m: unknown, at: string, now: number): AgentMessage {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) {
    const hint = typeof m === 'string' ? ' (wrap text in a message: userMessage(text), or pass one string as the whole prompt)' : '';
    throw invalid(at, `expected a message object, got ${kindOf(m)}${hint}`);
  }
  const message = m as Record<string, unknown>;
  const role = message.role;
  if (typeof role !== 'string' || !ROLES.includes(role)) {
    const hint = role === 'system' ? ' (a system prompt goes in context.systemPrompt)' : '';
    throw invalid(`${at}.role`, `unknown role ${JSON.stringify(role) ?? 'undefined'}: expected "user", "assistant", "toolResult" or "extension"${hint}`);
  }
  if (message.timestamp !== undefined && (typeof message.timestamp !== 'number' || !Number.isFinite(message.timestamp))) {
    throw invalid(`${at}.timestamp`, `expected a number, got ${kindOf(message.timestamp)}`);
  }
  let out = message;
  if (role === 'extension') {
    if (typeof message.kind !== 'string') throw invalid(`${at}.kind`, `an extension message needs a string kind, got ${kindOf(message.kind)}`);
    return out as unknown as AgentMessage;
  }
  const content = checkContent(message.content, `${at}.content`, role);
  if (content !== message.content) out = { ...out, content };
  if (role === 'toolResult') {
    for (const field of ['toolCallId', 'toolName']) {
      if (typeof message[field] !== 'string') throw invalid(`${at}.${field}`, `a toolResult message needs a string ${field}, got ${kindOf(message[field])}`);
    }
    if (message.isError === undefined) out = { ...out, isError: false };
  }
  if (message.timestamp === undefined) out = { ...out, timestamp: now };
  return out as unknown as AgentMessage;
}

const BLOCKS: Record<string, readonly string[]> = {
  user: ['text', 'image'],
  toolResult: ['text', 'image'],
  assistant: ['text', 'thinking', 'toolCall'],
};

function checkContent(content: unknown, at: string, role: string): unknown[] {
  if (content === undefined || content === null) throw invalid(at, `missing: a ${role} message needs content (an array of content blocks, or a string)`);
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(at, `expected an array of content blocks or a string, got ${kindOf(content)}`);
  if (content.length === 0 && role === 'user') throw invalid(at, 'empty: a user message needs at least one content block');
  const allowed = BLOCKS[role]!;
  content.forEach((block, j) => {
    const where = `${at}[${j}]`;
    if (block === null || typeof block !== 'object' || Array.isArray(block)) throw invalid(where, `expected a content block, got ${kindOf(block)}`);
    const b = block as Record<string, unknown>;
    if (typeof b.type !== 'string' || !allowed.includes(b.type)) {
      throw invalid(`${where}.type`, `unknown content type ${JSON.stringify(b.type) ?? 'undefined'} in a ${role} message: expected ${allowed.map((t) => `"${t}"`).join(' or ')}`);
    }
    const required = REQUIRED_FIELDS[b.type]!;
    for (const field of required) if (typeof b[field] !== 'string') throw invalid(`${where}.${field}`, `a ${b.type} block needs a string ${field}, got ${kindOf(b[field])}`);
  });
  return content;
}

const REQUIRED_FIELDS: Record<string, readonly string[]> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  thinking: ['thinking'],
  toolCall: ['id', 'name'],
};

function invalid(at: string, reason: string): AgentError {
  return new AgentError('InvalidPrompt', `${at}: ${reason}`);
}

export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number') return `the number ${value}`;
  return typeof value;
}
