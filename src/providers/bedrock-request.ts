import type { ModelConfig, StreamRequest } from '../types/provider.js';
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../types/message.js';
import type { ImageContent } from '../types/content.js';
import type { ThinkingLevel } from '../types/config.js';
import { outputToolChoice, outputToolDescription } from './output-tool.js';
import { compact, isOwnMessage, maxTokensOf, repairToolPairs, thinkingAsText, toolResultImages, toolResultText } from './provider-kit.js';

/* The request builder of Amazon Bedrock ConverseStream: the conversation as a Converse request body. */

export type BedrockContentBlock =
  | { text: string }
  | { image: { format: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } }
  | { toolResult: { toolUseId: string; content: Array<{ text: string } | { image: { format: string; source: { bytes: string } } }>; status: 'success' | 'error' } }
  | { reasoningContent: { reasoningText: { text: string; signature?: string } } | { redactedContent: string } }
  | { cachePoint: { type: 'default' } };

export interface BedrockMessage {
  role: 'user' | 'assistant';
  content: BedrockContentBlock[];
}

export interface BedrockRequestBody {
  messages: BedrockMessage[];
  system?: Array<{ text: string } | { cachePoint: { type: 'default' } }>;
  inferenceConfig: { maxTokens?: number; temperature?: number };
  toolConfig?: {
    tools: Array<{ toolSpec: { name: string; description: string; inputSchema: { json: Record<string, unknown> } } } | { cachePoint: { type: 'default' } }>;
    toolChoice?: { tool: { name: string } } | { any: Record<string, never> } | { auto: Record<string, never> };
  };
  additionalModelRequestFields?: Record<string, unknown>;
}

/**
 * Claude's thinking budgets on Bedrock: spec 000 §5's ladder (128 / 512 / 2048 / 8192), raised to
 * Anthropic's minimum budget of 1024 tokens.
 */
export const BEDROCK_THINKING_BUDGETS: Record<Exclude<ThinkingLevel, 'off'>, number> = {
  minimal: 1024,
  low: 1024,
  medium: 2048,
  high: 8192,
};

const isClaude = (model: ModelConfig): boolean => /anthropic|claude/i.test(model.id);
/** Models whose Converse API takes `cachePoint` blocks. */
const supportsCachePoints = (model: ModelConfig): boolean => /anthropic|claude|amazon\.nova/i.test(model.id);
const CACHE_POINT = { cachePoint: { type: 'default' as const } };

/** The request body for one turn. */
export function buildBedrockBody(request: StreamRequest): BedrockRequestBody {
  const { model } = request;
  const cache = cachePlan(request);
  const thinking = request.thinkingLevel !== 'off' && model.reasoning !== false && isClaude(model);
  const budget = thinking ? BEDROCK_THINKING_BUDGETS[request.thinkingLevel as Exclude<ThinkingLevel, 'off'>] : 0;
  let maxTokens = maxTokensOf(request);
  // Claude needs room for the answer beyond the thinking budget.
  if (thinking) maxTokens = Math.max(maxTokens ?? 8192, budget + 1024);
  const messages = buildBedrockMessages(request.messages, model);
  if (cache.messages) addCachePoint(messages);
  const format = request.responseFormat;
  const tools = format ? [...request.tools, { name: format.name, description: outputToolDescription(format), parameters: format.schema }] : request.tools;
  const choice = format ? outputToolChoice(request.tools.length, thinking) : undefined;
  const forced = request.toolChoice;
  return compact({
    messages,
    system: request.systemPrompt === '' ? undefined : [{ text: request.systemPrompt }, ...(cache.system ? [CACHE_POINT] : [])],
    inferenceConfig: compact({ maxTokens, temperature: thinking ? undefined : request.temperature }),
    toolConfig:
      tools.length === 0
        ? undefined
        : {
            tools: [
              ...tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters } } })),
              ...(cache.tools ? [CACHE_POINT] : []),
            ],
            // Structured output: force a tool call (see output-tool.ts).
            ...(choice === undefined ? {} : { toolChoice: choice === 'output' ? { tool: { name: format!.name } } : choice === 'any' ? { any: {} } : { auto: {} } }),
            // A forced call of the request's own (prepareTurn's toolChoice).
            ...(forced === undefined ? {} : { toolChoice: forced === 'required' ? { any: {} } : { tool: { name: forced.tool } } }),
          },
    additionalModelRequestFields: thinking ? { thinking: { type: 'enabled', budget_tokens: budget } } : undefined,
  });
}

function cachePlan(request: StreamRequest): { system: boolean; tools: boolean; messages: boolean } {
  const { enabled, strategy } = request.cacheConfig;
  if (!enabled || strategy.kind === 'disabled' || !supportsCachePoints(request.model)) return { system: false, tools: false, messages: false };
  if (strategy.kind === 'manual') return { system: strategy.cacheSystem, tools: strategy.cacheTools, messages: strategy.cacheMessages };
  return { system: true, tools: true, messages: true };
}

/** Marks the end of the conversation so far: the next turn reads this prefix from the cache. */
function addCachePoint(messages: BedrockMessage[]): void {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user') {
      messages[i]!.content.push(CACHE_POINT);
      return;
    }
  }
}

/** Converts the conversation to Converse messages; consecutive messages of one role are merged, as roles must alternate. */
export function buildBedrockMessages(messages: readonly Message[], model: ModelConfig): BedrockMessage[] {
  const out: BedrockMessage[] = [];
  const push = (role: BedrockMessage['role'], content: BedrockContentBlock[]): void => {
    if (content.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...content);
    else out.push({ role, content });
  };
  for (const message of repairToolPairs(messages)) {
    if (message.role === 'user') push('user', userBlocks(message));
    else if (message.role === 'assistant') push('assistant', assistantBlocks(message, isOwnMessage(message, model)));
    else push('user', [toolResultBlock(message)]);
  }
  return out;
}

function imageBlock(image: ImageContent): { image: { format: string; source: { bytes: string } } } {
  return { image: { format: image.mimeType.replace(/^image\//, '').replace('jpg', 'jpeg'), source: { bytes: image.data } } };
}

function userBlocks(message: UserMessage): BedrockContentBlock[] {
  const blocks: BedrockContentBlock[] = [];
  for (const c of message.content) {
    if (c.type === 'image') blocks.push(imageBlock(c));
    else if (c.text !== '') blocks.push({ text: c.text }); // Converse rejects blank text blocks
  }
  return blocks;
}

function assistantBlocks(message: AssistantMessage, own: boolean): BedrockContentBlock[] {
  const blocks: BedrockContentBlock[] = [];
  for (const c of message.content) {
    if (c.type === 'text') {
      if (c.text !== '') blocks.push({ text: c.text });
    } else if (c.type === 'toolCall') {
      blocks.push({ toolUse: { toolUseId: c.id, name: c.name, input: c.arguments } });
    } else if (own && c.redacted && c.signature) {
      blocks.push({ reasoningContent: { redactedContent: c.signature } });
    } else if (own && c.signature) {
      blocks.push({ reasoningContent: { reasoningText: { text: c.thinking, signature: c.signature } } });
    } else if (!own && c.thinking.trim() !== '') {
      // Another provider's thinking cannot be replayed as reasoning; it still informs the model as text.
      blocks.push({ text: thinkingAsText(c.thinking) });
    }
    // Own thinking without a signature cannot be replayed (Claude rejects it) and is dropped.
  }
  return blocks;
}

function toolResultBlock(message: ToolResultMessage): BedrockContentBlock {
  const content: Array<{ text: string } | { image: { format: string; source: { bytes: string } } }> = [];
  const text = toolResultText(message);
  if (text !== '' || toolResultImages(message).length === 0) content.push({ text: text === '' ? '(no output)' : text });
  for (const image of toolResultImages(message)) content.push(imageBlock(image));
  return { toolResult: { toolUseId: message.toolCallId, content, status: message.isError ? 'error' : 'success' } };
}
