import type { Observable } from 'rxjs';
import type { CacheConfig, ThinkingLevel } from '../types/config.js';
import type { ImageContent, TextContent } from '../types/content.js';
import type { Message, StopReason } from '../types/message.js';
import type { Provider, ProviderOptions, ResponseFormat, StreamEvent, StreamRequest } from '../types/provider.js';
import { outputToolChoice, outputToolDescription } from './output-tool.js';
import type { ToolDefinition } from '../types/tool.js';
import { joinUrl } from '../sources/http/request.js';
import { classifyStreamError, providerMessageOf, errorTypeOf } from '../sources/http/errors.js';
import { SSE_INVALID_LINE, decodeSse, parseSseJson, streamEndedEarly } from '../sources/http/sse.js';
import type { SseEvent } from '../sources/http/sse.js';
import type { AssistantMessageBuilder } from './message-builder.js';
import {
  failFast,
  isOwnMessage,
  maxTokensOf,
  missingKeyError,
  repairToolPairs,
  resolveApiKey,
  requestSecrets,
  streamProvider,
  thinkingAsText,
  withModelHeaders,
} from './provider-kit.js';
import type { ProviderHttpOptions, WireParser } from './provider-kit.js';

/** Anthropic Messages API (spec 000 §5): `POST {baseUrl}/v1/messages` with `stream: true`. */

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';
export const ANTHROPIC_API_KEY_ENV = 'ANTHROPIC_API_KEY';
/** Used when neither the request nor the model sets max tokens (spec: 8192). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;
/** The API rejects thinking budgets below this. */
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024;

/**
 * Thinking budget per level, from spec 000 §5. The API's floor is 1024 tokens, so `minimal` and
 * `low` are sent as 1024 (see {@link anthropicThinkingBudget}).
 */
export const ANTHROPIC_THINKING_BUDGETS: Readonly<Record<Exclude<ThinkingLevel, 'off'>, number>> = {
  minimal: 128,
  low: 512,
  medium: 2048,
  high: 8192,
};

/** The budget actually sent for a level, or undefined when thinking is off. */
export function anthropicThinkingBudget(level: ThinkingLevel): number | undefined {
  if (level === 'off') return undefined;
  return Math.max(ANTHROPIC_MIN_THINKING_BUDGET, ANTHROPIC_THINKING_BUDGETS[level]);
}

// ---------------------------------------------------------------------------------------------
// Request

export type CacheControl = { type: 'ephemeral' };
export type AnthropicBlock = { [key: string]: unknown; type: string; cache_control?: CacheControl };
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicBlock[];
}

/** The JSON body sent to `/v1/messages`. */
export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  stream: true;
  system?: AnthropicBlock[];
  tools?: Array<{ name: string; description: string; input_schema: Record<string, unknown>; cache_control?: CacheControl }>;
  thinking?: { type: 'enabled'; budget_tokens: number };
  temperature?: number;
  tool_choice?: { type: 'tool'; name: string; disable_parallel_tool_use?: true } | { type: 'any'; disable_parallel_tool_use?: true } | { type: 'auto' };
}

/**
 * Builds the Messages API body for a request: system prompt as text blocks, tools with their
 * JSON Schema, images as base64 sources, tool results merged into user turns, thinking echoed
 * with its signature when it came from Anthropic (as text when it came from elsewhere), and
 * `cache_control` breakpoints per the CacheStrategy.
 */
export function buildAnthropicRequest(request: StreamRequest): AnthropicRequestBody {
  const { model } = request;
  const budget = model.reasoning === false ? undefined : anthropicThinkingBudget(request.thinkingLevel);
  let maxTokens = maxTokensOf(request, ANTHROPIC_DEFAULT_MAX_TOKENS)!;
  // The budget is part of max_tokens; leave room for the answer itself.
  if (budget !== undefined && maxTokens <= budget) maxTokens = budget + ANTHROPIC_MIN_THINKING_BUDGET;

  const body: AnthropicRequestBody = {
    model: model.id,
    max_tokens: maxTokens,
    messages: convertMessages(request.messages, request),
    stream: true,
  };
  if (request.systemPrompt) body.system = [{ type: 'text', text: request.systemPrompt }];
  if (request.tools.length > 0) body.tools = request.tools.map(toAnthropicTool);
  if (request.toolChoice !== undefined && request.tools.length > 0) body.tool_choice = request.toolChoice === 'required' ? { type: 'any' } : { type: 'tool', name: request.toolChoice.tool };
  if (request.responseFormat) addOutputTool(body, request.responseFormat, budget !== undefined);
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget };
  // With thinking on, the API accepts no temperature but the default.
  else if (request.temperature !== undefined) body.temperature = request.temperature;
  applyCacheBreakpoints(body, request.cacheConfig);
  return body;
}

const toAnthropicTool = (tool: ToolDefinition) => ({
  name: tool.name,
  description: tool.description,
  input_schema: tool.parameters,
});

/** Structured output: the output tool, and a tool choice that forces a call (see output-tool.ts). */
function addOutputTool(body: AnthropicRequestBody, format: ResponseFormat, thinking: boolean): void {
  const others = body.tools?.length ?? 0;
  body.tools = [...(body.tools ?? []), { name: format.name, description: outputToolDescription(format), input_schema: format.schema }];
  const choice = outputToolChoice(others, thinking);
  body.tool_choice =
    choice === 'output' ? { type: 'tool', name: format.name, disable_parallel_tool_use: true } : choice === 'any' ? { type: 'any', disable_parallel_tool_use: true } : { type: 'auto' };
}

/** Tool-use ids must match `^[a-zA-Z0-9_-]{1,64}$`; ids from other providers may not. */
export function anthropicToolId(id: string): string {
  const clean = id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return clean === '' ? 'toolu_empty' : clean;
}

function convertMessages(messages: readonly Message[], request: StreamRequest): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of repairToolPairs(messages)) {
    if (message.role === 'user') {
      const content = message.content.flatMap(userBlock);
      if (content.length > 0) out.push({ role: 'user', content });
    } else if (message.role === 'assistant') {
      const foreign = !isOwnMessage(message, request.model);
      const content: AnthropicBlock[] = [];
      for (const block of message.content) {
        if (block.type === 'text') {
          if (block.text.trim() !== '') content.push({ type: 'text', text: block.text });
        } else if (block.type === 'thinking') {
          if (!foreign && block.redacted && block.signature) content.push({ type: 'redacted_thinking', data: block.signature });
          else if (!foreign && block.signature) content.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
          // Unsigned or foreign thinking cannot be verified by the API: keep its words as text.
          else if (!block.redacted && block.thinking.trim() !== '') content.push({ type: 'text', text: thinkingAsText(block.thinking) });
        } else {
          content.push({ type: 'tool_use', id: anthropicToolId(block.id), name: block.name, input: block.arguments });
        }
      }
      if (content.length > 0) out.push({ role: 'assistant', content });
    } else {
      const result: AnthropicBlock = {
        type: 'tool_result',
        tool_use_id: anthropicToolId(message.toolCallId),
        content: message.content.flatMap(userBlock),
        is_error: message.isError,
      };
      // All results answering one assistant turn go in a single user message.
      const last = out[out.length - 1];
      if (last?.role === 'user' && last.content.every((b) => b.type === 'tool_result')) last.content.push(result);
      else out.push({ role: 'user', content: [result] });
    }
  }
  return out;
}

function userBlock(block: TextContent | ImageContent): AnthropicBlock[] {
  if (block.type === 'text') return block.text === '' ? [] : [{ type: 'text', text: block.text }];
  return [{ type: 'image', source: { type: 'base64', media_type: block.mimeType, data: block.data } }];
}

/**
 * Places `cache_control: {type: "ephemeral"}` per spec 000 §5: on the system prompt, the last
 * tool definition and the second-to-last message (`auto` does all three; `manual` what it asks).
 */
function applyCacheBreakpoints(body: AnthropicRequestBody, cache: CacheConfig): void {
  if (!cache.enabled || cache.strategy.kind === 'disabled') return;
  const manual = cache.strategy.kind === 'manual' ? cache.strategy : undefined;
  const ephemeral: CacheControl = { type: 'ephemeral' };
  if ((manual?.cacheSystem ?? true) && body.system?.length) body.system[body.system.length - 1]!.cache_control = ephemeral;
  if ((manual?.cacheTools ?? true) && body.tools?.length) body.tools[body.tools.length - 1]!.cache_control = ephemeral;
  if ((manual?.cacheMessages ?? true) && body.messages.length >= 2) {
    const target = body.messages[body.messages.length - 2]!;
    // Thinking blocks cannot carry cache_control; mark the last block that can.
    const block = [...target.content].reverse().find((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking');
    if (block) block.cache_control = ephemeral;
  }
}

// ---------------------------------------------------------------------------------------------
// Response

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'toolUse',
  refusal: 'guardRail',
};

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

type AnthropicStreamEvent =
  | { type: 'message_start'; message: { model?: string; usage?: AnthropicUsage } }
  | { type: 'content_block_start'; index: number; content_block: { type: string; [key: string]: unknown } }
  | { type: 'content_block_delta'; index: number; delta: { type: string; [key: string]: unknown } }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason?: string | null }; usage?: AnthropicUsage }
  | { type: 'message_stop' }
  | { type: 'error'; error: { type?: string; message?: string } }
  | { type: 'ping' };

/**
 * Reads an Anthropic event stream: `message_start` (model, input usage), content blocks
 * (text, thinking + signature, redacted thinking, tool_use with streamed JSON arguments;
 * server-side tool blocks are skipped), `message_delta` (stop reason, final usage) and
 * `message_stop`, which completes the message. An `error` event fails the stream, classified
 * like the HTTP status it stands for; a body that ends before `message_stop` is a retryable
 * network error.
 */
export function anthropicReader(builder: AssistantMessageBuilder, provider: string, secrets: readonly string[] = [], outputTool?: string): WireParser<SseEvent> {
  const blockKinds = new Map<number, 'text' | 'thinking' | 'toolCall' | 'output' | 'other'>();
  let stopReason: StopReason = 'stop';

  const applyUsage = (usage: AnthropicUsage | undefined) => {
    if (!usage) return;
    const current = builder.partial.usage;
    const pick = (value: number | null | undefined, fallback: number) => (typeof value === 'number' ? value : fallback);
    builder.setUsage({
      input: pick(usage.input_tokens, current.input),
      output: pick(usage.output_tokens, current.output),
      cacheRead: pick(usage.cache_read_input_tokens, current.cacheRead),
      cacheWrite: pick(usage.cache_creation_input_tokens, current.cacheWrite),
      totalTokens: 0,
    });
  };

  // One call per SSE event: the events go straight to `emit`, no arrays or closures in between.
  const onData = (event: AnthropicStreamEvent, emit: (event: StreamEvent) => void): void => {
    switch (event.type) {
      case 'content_block_delta':
        return blockDelta(event.index, event.delta, emit);
      case 'content_block_start':
        return startBlock(event.index, event.content_block, emit);
      case 'message_start':
        if (event.message.model) builder.setModel(event.message.model);
        return applyUsage(event.message.usage);
      case 'message_delta':
        if (event.delta.stop_reason) stopReason = STOP_REASONS[event.delta.stop_reason] ?? 'stop';
        return applyUsage(event.usage);
      case 'message_stop':
        // A call of the output tool alone is the answer, not a tool call to run.
        return emit(builder.finish(outputTool !== undefined && stopReason === 'toolUse' && !builder.hasToolCalls() ? 'stop' : stopReason));
      case 'error':
        throw classifyStreamError({ message: event.error?.message ?? '', type: event.error?.type, provider, secrets });
      default:
        return; // ping, content_block_stop, and event types added later
    }
  };

  const startBlock = (index: number, block: { type: string; [key: string]: unknown }, emit: (event: StreamEvent) => void): void => {
    switch (block.type) {
      case 'text': {
        blockKinds.set(index, 'text');
        const text = typeof block['text'] === 'string' ? block['text'] : '';
        if (text) emit(builder.text(text, index));
        return;
      }
      case 'thinking': {
        blockKinds.set(index, 'thinking');
        if (typeof block['thinking'] === 'string' && block['thinking']) emit(builder.thinking(block['thinking'], index));
        if (typeof block['signature'] === 'string' && block['signature']) builder.thinkingSignature(block['signature'], index);
        return;
      }
      case 'redacted_thinking':
        blockKinds.set(index, 'thinking');
        return emit(builder.redactedThinking(typeof block['data'] === 'string' ? block['data'] : '', index));
      case 'tool_use':
        // Structured output: the output tool's arguments are the answer, reported as text.
        if (outputTool !== undefined && block['name'] === outputTool) return void blockKinds.set(index, 'output');
        blockKinds.set(index, 'toolCall');
        return emit(builder.toolCallStart(String(block['id'] ?? ''), String(block['name'] ?? ''), index));
      default:
        // server_tool_use, web_search_tool_result, ...: run by Anthropic, not by us.
        blockKinds.set(index, 'other');
        return;
    }
  };

  const blockDelta = (index: number, delta: { type: string; [key: string]: unknown }, emit: (event: StreamEvent) => void): void => {
    switch (delta.type) {
      case 'text_delta':
        if (blockKinds.get(index) !== 'other') emit(builder.text(stringField(delta['text']), index));
        return;
      case 'thinking_delta':
        return emit(builder.thinking(stringField(delta['thinking']), index));
      case 'signature_delta':
        return builder.thinkingSignature(stringField(delta['signature']), index, true);
      case 'input_json_delta':
        if (blockKinds.get(index) === 'toolCall') emit(builder.toolCallDelta(stringField(delta['partial_json']), index));
        else if (blockKinds.get(index) === 'output' && delta['partial_json']) emit(builder.text(stringField(delta['partial_json']), index));
        return;
      default:
        return; // citations_delta and the like
    }
  };

  return {
    push: (sse, emit) => {
      if (sse.event === SSE_INVALID_LINE) {
        // A bare JSON error body in a 200 response; anything else that is not SSE is noise.
        if (errorTypeOf(sse.data) !== undefined) throw classifyStreamError({ message: providerMessageOf(sse.data), type: errorTypeOf(sse.data), provider, secrets });
        return;
      }
      onData(parseSseJson<AnthropicStreamEvent>(sse.data, provider, secrets), emit);
    },
    end: () => {
      throw streamEndedEarly(provider, 'message_stop');
    },
  };
}

/** A delta's string field as sent (the common case), else its string form; missing is ''. */
function stringField(value: unknown): string {
  return typeof value === 'string' ? value : String(value ?? '');
}

// ---------------------------------------------------------------------------------------------
// Provider

/** OAuth tokens (Claude subscriptions) are sent as a bearer token with these headers. */
const OAUTH_HEADERS = {
  'anthropic-beta': 'claude-code-20250219,oauth-2025-04-20,fine-grained-tool-streaming-2025-05-14',
  'x-app': 'cli',
  'anthropic-dangerous-direct-browser-access': 'true',
  'user-agent': 'claude-cli/2.1.2',
};

/** Request headers: `x-api-key` for API keys, bearer + OAuth headers for `sk-ant-oat` tokens. */
export function anthropicHeaders(apiKey: string): Record<string, string> {
  const base = { 'content-type': 'application/json', accept: 'text/event-stream', 'anthropic-version': ANTHROPIC_VERSION };
  if (apiKey.startsWith('sk-ant-oat')) return { ...base, authorization: `Bearer ${apiKey}`, ...OAUTH_HEADERS };
  return { ...base, 'x-api-key': apiKey };
}

/**
 * A Provider for the Anthropic Messages API. The API key comes from the call (`getApiKey`),
 * the model config, or `ANTHROPIC_API_KEY`.
 *
 * @example
 * const provider = createAnthropicProvider({ idleTimeoutMs: 30_000 });
 * provider({ model: anthropic('claude-sonnet-4-5'), systemPrompt: '', messages, tools: [],
 *   thinkingLevel: 'off', cacheConfig: DEFAULT_CACHE_CONFIG }, {}).subscribe(console.log);
 */
export function createAnthropicProvider(http: ProviderHttpOptions = {}): Provider {
  return (request: StreamRequest, options: ProviderOptions): Observable<StreamEvent> => {
    const { model } = request;
    const apiKey = resolveApiKey(request, ANTHROPIC_API_KEY_ENV, http);
    if (!apiKey) return failFast(missingKeyError(model, ANTHROPIC_API_KEY_ENV));
    const headers = withModelHeaders(anthropicHeaders(apiKey), model);
    const secrets = requestSecrets(headers, model, apiKey);
    return streamProvider(
      request,
      options,
      {
        url: joinUrl(model.baseUrl ?? ANTHROPIC_BASE_URL, '/v1/messages'),
        headers,
        provider: model.provider,
        secrets,
        body: () => JSON.stringify(buildAnthropicRequest(request)),
        decode: decodeSse(),
        parser: (builder) => anthropicReader(builder, model.provider, secrets, request.responseFormat?.name),
      },
      http,
    );
  };
}

/** The Anthropic provider on the shared HTTP dispatcher. */
export const anthropicProvider: Provider = createAnthropicProvider();
