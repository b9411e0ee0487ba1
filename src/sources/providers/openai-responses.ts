import type { Observable } from 'rxjs';
import type { Provider, ProviderOptions, StreamEvent, StreamRequest } from '../../types/provider.js';
import type { AssistantMessage, Message, StopReason, ToolResultMessage, UserMessage } from '../../types/message.js';
import type { ThinkingLevel } from '../../types/config.js';
import { ProviderError } from '../../types/errors.js';
import { classifyStreamError, decodeSse, excerpt, parseSseJson, redactSecrets, SSE_INVALID_LINE, streamEndedEarly } from '../http/index.js';
import type { SseEvent } from '../http/index.js';
import type { AssistantMessageBuilder } from './message-builder.js';
import {
  compact,
  failFast,
  isOwnMessage,
  maxTokensOf,
  repairToolPairs,
  streamProvider,
  thinkingAsText,
  toolResultImages,
  toolResultText,
} from './provider-kit.js';
import type { ProviderEndpoint, ProviderHttpOptions, WireParser } from './provider-kit.js';
import { openAiEndpoint } from './openai-completions.js';

/*
 * OpenAI Responses API (`POST {baseUrl}/responses`, SSE). Also spoken by Azure OpenAI's v1
 * endpoint, OpenRouter, DeepSeek and other Responses-compatible servers; `streamResponses` takes
 * the URL and headers so those can reuse the protocol.
 */

export { OPENAI_BASE_URL } from './openai-completions.js';

// ---------------------------------------------------------------------------------------------
// Request

/** One item of the Responses `input` array (the subset phi-rx sends). */
export type ResponsesInputItem =
  | { role: 'user'; content: ResponsesUserPart[] }
  | {
      type: 'message';
      role: 'assistant';
      content: Array<{ type: 'output_text'; text: string; annotations: [] }>;
      id?: string;
      status?: 'completed';
    }
  | { type: 'function_call'; call_id: string; name: string; arguments: string; id?: string }
  | { type: 'function_call_output'; call_id: string; output: string | ResponsesUserPart[] }
  | ResponsesReasoningItem;

export type ResponsesUserPart = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' };

/** A reasoning output item, as echoed back to the API. */
export interface ResponsesReasoningItem {
  type: 'reasoning';
  id: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  encrypted_content?: string;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
}

export interface ResponsesRequestBody {
  model: string;
  input: ResponsesInputItem[];
  instructions?: string;
  stream: true;
  store: false;
  max_output_tokens?: number;
  temperature?: number;
  tools?: Array<{ type: 'function'; name: string; description: string; parameters: Record<string, unknown>; strict: false }>;
  tool_choice?: 'auto';
  reasoning?: { effort: 'low' | 'medium' | 'high'; summary: 'auto' };
  include?: string[];
  prompt_cache_key?: string;
}

/**
 * What a thinking block's `signature` holds for this protocol: the reasoning item to echo back,
 * and the id of the output item that followed it. The API pairs a reasoning item with the item
 * right after it and rejects a reasoning item whose follower is missing, so the follower's id
 * is kept with it.
 */
export interface ResponsesThinkingSignature {
  reasoning: ResponsesReasoningItem;
  followedBy?: string;
}

/** Spec 000 §5: `reasoning.effort` is low, medium or high; `minimal` asks for the least there is. */
export function responsesReasoningEffort(level: ThinkingLevel): 'low' | 'medium' | 'high' | undefined {
  switch (level) {
    case 'off':
      return undefined;
    case 'minimal':
    case 'low':
      return 'low';
    case 'medium':
      return 'medium';
    case 'high':
      return 'high';
  }
}

/** The request body for one turn. */
export function buildResponsesBody(request: StreamRequest): ResponsesRequestBody {
  const { model } = request;
  const effort = model.reasoning === false ? undefined : responsesReasoningEffort(request.thinkingLevel);
  const caching = request.cacheConfig.enabled && request.cacheConfig.strategy.kind !== 'disabled';
  return compact({
    model: model.id,
    input: buildResponsesInput(request.messages, request),
    instructions: request.systemPrompt === '' ? undefined : request.systemPrompt,
    stream: true as const,
    // Nothing is kept server-side: reasoning travels back to us encrypted instead.
    store: false as const,
    max_output_tokens: maxTokensOf(request),
    temperature: request.temperature,
    tools:
      request.tools.length === 0
        ? undefined
        : request.tools.map((t) => ({
            type: 'function' as const,
            name: t.name,
            description: t.description,
            parameters: t.parameters,
            strict: false as const,
          })),
    tool_choice: request.tools.length === 0 ? undefined : ('auto' as const),
    reasoning: effort === undefined ? undefined : { effort, summary: 'auto' as const },
    include: effort === undefined ? undefined : ['reasoning.encrypted_content'],
    // The Responses API caches prompt prefixes on its own; the key keeps one session's turns on one cache.
    prompt_cache_key: caching ? request.sessionId : undefined,
  });
}

/** Converts the conversation into Responses `input` items. */
export function buildResponsesInput(messages: readonly Message[], request: Pick<StreamRequest, 'model'>): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  for (const message of repairToolPairs(messages)) {
    if (message.role === 'user') items.push(userItem(message));
    else if (message.role === 'assistant') items.push(...assistantItems(message, isOwnMessage(message, request.model)));
    else items.push(toolOutputItem(message));
  }
  return items;
}

function userItem(message: UserMessage): ResponsesInputItem {
  return { role: 'user', content: message.content.map(userPart) };
}

function userPart(part: UserMessage['content'][number]): ResponsesUserPart {
  return part.type === 'text'
    ? { type: 'input_text', text: part.text }
    : { type: 'input_image', image_url: `data:${part.mimeType};base64,${part.data}`, detail: 'auto' };
}

function toolOutputItem(message: ToolResultMessage): ResponsesInputItem {
  const images = toolResultImages(message);
  const text = toolResultText(message);
  if (images.length === 0) return { type: 'function_call_output', call_id: message.toolCallId, output: text };
  const parts: ResponsesUserPart[] = text === '' ? [] : [{ type: 'input_text', text }];
  for (const image of images) parts.push(userPart(image));
  return { type: 'function_call_output', call_id: message.toolCallId, output: parts };
}

function assistantItems(message: AssistantMessage, own: boolean): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  let pending: ResponsesThinkingSignature | undefined;
  for (const block of message.content) {
    if (block.type === 'thinking') {
      const signature = own ? parseResponsesSignature(block.signature) : undefined;
      if (signature) pending = signature;
      // Another provider's thinking cannot be replayed as reasoning; it still informs the model as text.
      else if (!own && block.thinking.trim() !== '') items.push(assistantText(thinkingAsText(block.thinking)));
      continue;
    }
    const item: AssistantOutputItem =
      block.type === 'text'
        ? assistantText(block.text)
        : { type: 'function_call', call_id: block.id, name: block.name, arguments: JSON.stringify(block.arguments) };
    // A reasoning item is only valid right before the very item that followed it; otherwise drop it.
    if (pending?.followedBy !== undefined) {
      items.push(pending.reasoning);
      item.id = pending.followedBy;
      if (item.type === 'message') item.status = 'completed';
    }
    pending = undefined;
    items.push(item);
  }
  return items;
}

type AssistantOutputItem = Extract<ResponsesInputItem, { type: 'message' } | { type: 'function_call' }>;

function assistantText(text: string): Extract<ResponsesInputItem, { type: 'message' }> {
  return { type: 'message', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
}

/** Reads a thinking signature written by this protocol; undefined for anything else. */
export function parseResponsesSignature(signature: string | undefined): ResponsesThinkingSignature | undefined {
  if (!signature || !signature.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(signature) as Partial<ResponsesThinkingSignature>;
    if (parsed.reasoning?.type !== 'reasoning' || typeof parsed.reasoning.id !== 'string') return undefined;
    return parsed as ResponsesThinkingSignature;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Stream

/** The fields of a Responses stream event that phi-rx reads. */
interface ResponsesEvent {
  type: string;
  output_index?: number;
  summary_index?: number;
  delta?: string;
  arguments?: string;
  item?: ResponsesOutputItem;
  response?: ResponsesResponse;
  code?: string | null;
  message?: string;
  error?: { code?: string | null; type?: string; message?: string } | null;
}

interface ResponsesOutputItem {
  type: string;
  id?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  content?: Array<{ type: string; text?: string; refusal?: string }>;
  summary?: Array<{ type: string; text?: string }>;
  encrypted_content?: string | null;
}

interface ResponsesResponse {
  model?: string;
  status?: string;
  usage?: ResponsesUsage | null;
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string | null; message?: string } | null;
}

interface ResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens_details?: { reasoning_tokens?: number } | null;
}

/**
 * Parses Responses SSE events into StreamEvents. Output items are keyed by `output_index`, which
 * every server sends (item ids are not stable on all of them: OpenRouter renames items between
 * `added` and `completed`).
 */
export class ResponsesStreamParser implements WireParser<SseEvent> {
  private readonly streamed = new Set<string>();
  private readonly reasoning = new Map<number, ResponsesThinkingSignature>();
  private readonly reasoningDone = new Set<number>();

  constructor(
    private readonly builder: AssistantMessageBuilder,
    private readonly provider: string,
    private readonly secrets: readonly string[] = [],
  ) {}

  push(sse: SseEvent, emit: (event: StreamEvent) => void): void {
    if (sse.data === '[DONE]' || sse.data.trim() === '') return;
    if (sse.event === SSE_INVALID_LINE) throw this.invalidLine(sse.data);
    const event = parseSseJson<ResponsesEvent>(sse.data, this.provider, this.secrets);
    if (event === null || typeof event !== 'object' || typeof event.type !== 'string') {
      throw ProviderError.other(`${this.provider} sent a chunk without a type: ${excerpt(redactSecrets(sse.data, this.secrets))}`, {
        provider: this.provider,
      });
    }
    this.handle(event, emit);
  }

  end(): void {
    throw streamEndedEarly(this.provider, 'response.completed');
  }

  private handle(event: ResponsesEvent, emit: (event: StreamEvent) => void): void {
    const b = this.builder;
    const index = event.output_index ?? 0;
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
        if (event.response?.model) b.setModel(event.response.model);
        return;
      case 'response.output_item.added':
        return this.itemAdded(index, event.item, emit);
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (typeof event.delta !== 'string') return;
        this.streamed.add(`text:${index}`);
        emit(b.text(event.delta, index));
        return;
      case 'response.reasoning_summary_part.added':
        // Summary parts are separate paragraphs of one thinking block.
        if ((event.summary_index ?? 0) > 0) emit(b.thinking('\n\n', index));
        return;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (typeof event.delta !== 'string') return;
        this.streamed.add(`thinking:${index}`);
        emit(b.thinking(event.delta, index));
        return;
      case 'response.function_call_arguments.delta':
        if (typeof event.delta !== 'string') return;
        this.streamed.add(`args:${index}`);
        emit(b.toolCallDelta(event.delta, index));
        return;
      case 'response.function_call_arguments.done':
        if (!this.streamed.has(`args:${index}`) && typeof event.arguments === 'string') {
          this.streamed.add(`args:${index}`);
          emit(b.toolCallDelta(event.arguments, index));
        }
        return;
      case 'response.output_item.done':
        return this.itemDone(index, event.item, emit);
      case 'response.completed':
      case 'response.incomplete':
        return this.complete(event.response, emit);
      case 'response.failed':
        throw this.streamError(event.response?.error ?? { message: `response failed (status ${event.response?.status ?? 'unknown'})` });
      case 'error':
        throw this.streamError(event.error ?? event);
      default:
        // content_part.*, output_text.done, annotations, web_search_call.*, ...: nothing to build.
        return;
    }
  }

  private itemAdded(index: number, item: ResponsesOutputItem | undefined, emit: (event: StreamEvent) => void): void {
    if (!item) return;
    const previous = this.reasoning.get(index - 1);
    if (previous && item.id && (item.type === 'message' || item.type === 'function_call')) {
      previous.followedBy = item.id;
      if (this.reasoningDone.has(index - 1)) this.builder.thinkingSignature(JSON.stringify(previous), index - 1);
    }
    if (item.type === 'function_call') {
      this.streamed.add(`call:${index}`);
      emit(this.builder.toolCallStart(item.call_id ?? item.id ?? `call_${index}`, item.name ?? '', index));
    } else if (item.type === 'reasoning') {
      this.reasoning.set(index, { reasoning: reasoningItem(item) });
    }
  }

  private itemDone(index: number, item: ResponsesOutputItem | undefined, emit: (event: StreamEvent) => void): void {
    if (!item) return;
    const b = this.builder;
    if (item.type === 'reasoning') {
      const entry = this.reasoning.get(index) ?? {};
      const signature: ResponsesThinkingSignature = { ...entry, reasoning: reasoningItem(item) };
      this.reasoning.set(index, signature);
      this.reasoningDone.add(index);
      if (!this.streamed.has(`thinking:${index}`)) {
        const text = reasoningText(item);
        if (text !== '') emit(b.thinking(text, index));
      }
      b.thinkingSignature(JSON.stringify(signature), index);
    } else if (item.type === 'function_call') {
      if (!this.streamed.has(`call:${index}`)) {
        this.streamed.add(`call:${index}`);
        emit(b.toolCallStart(item.call_id ?? item.id ?? `call_${index}`, item.name ?? '', index));
      }
      if (!this.streamed.has(`args:${index}`)) {
        this.streamed.add(`args:${index}`);
        emit(b.toolCallDelta(item.arguments ?? '', index));
      }
    } else if (item.type === 'message' && !this.streamed.has(`text:${index}`)) {
      const text = (item.content ?? []).map((c) => c.text ?? c.refusal ?? '').join('');
      if (text !== '') emit(b.text(text, index));
    }
  }

  private complete(response: ResponsesResponse | undefined, emit: (event: StreamEvent) => void): void {
    const b = this.builder;
    if (response?.model) b.setModel(response.model);
    const usage = response?.usage;
    if (usage) {
      const cached = usage.input_tokens_details?.cached_tokens ?? 0;
      b.setUsage({
        input: (usage.input_tokens ?? 0) - cached,
        output: usage.output_tokens ?? 0,
        reasoning: usage.output_tokens_details?.reasoning_tokens ?? 0,
        cacheRead: cached,
        cacheWrite: 0,
        totalTokens: usage.total_tokens ?? 0,
      });
    }
    emit(b.finish(this.stopReason(response)));
  }

  private stopReason(response: ResponsesResponse | undefined): StopReason {
    if (response?.status === 'incomplete') {
      return response.incomplete_details?.reason === 'max_output_tokens' ? 'length' : 'stop';
    }
    return this.builder.hasToolCalls() ? 'toolUse' : 'stop';
  }

  private streamError(error: { code?: string | null; type?: string; message?: string }): ProviderError {
    return classifyStreamError({
      message: error.message ?? '',
      type: error.code ?? error.type,
      provider: this.provider,
      secrets: this.secrets,
    });
  }

  private invalidLine(line: string): ProviderError {
    // A bare JSON error object sent with status 200 (some proxies do this).
    try {
      const parsed = JSON.parse(line) as ResponsesEvent;
      if (parsed && typeof parsed === 'object' && parsed.error) return this.streamError(parsed.error);
    } catch {
      // not JSON: fall through
    }
    return ProviderError.other(`${this.provider} sent a line that is not SSE: ${excerpt(redactSecrets(line, this.secrets))}`, {
      provider: this.provider,
    });
  }
}

function reasoningItem(item: ResponsesOutputItem): ResponsesReasoningItem {
  const out: ResponsesReasoningItem = {
    type: 'reasoning',
    id: item.id ?? '',
    summary: (item.summary ?? []).map((s) => ({ type: 'summary_text' as const, text: s.text ?? '' })),
  };
  if (typeof item.encrypted_content === 'string') out.encrypted_content = item.encrypted_content;
  const content = (item.content ?? []).filter((c) => c.type === 'reasoning_text');
  if (content.length > 0) out.content = content.map((c) => ({ type: 'reasoning_text' as const, text: c.text ?? '' }));
  return out;
}

function reasoningText(item: ResponsesOutputItem): string {
  const summary = (item.summary ?? []).map((s) => s.text ?? '').filter((t) => t !== '');
  if (summary.length > 0) return summary.join('\n\n');
  return (item.content ?? []).map((c) => (c.type === 'reasoning_text' ? c.text ?? '' : '')).join('');
}

// ---------------------------------------------------------------------------------------------
// Provider

/** Where and how to send a Responses request. */
export type ResponsesEndpoint = ProviderEndpoint;

/**
 * One Responses API call as a cold Observable of StreamEvents; the building block of
 * {@link openaiResponsesProvider} and of Responses-compatible endpoints (Azure OpenAI v1).
 */
export function streamResponses(
  request: StreamRequest,
  options: ProviderOptions,
  endpoint: ResponsesEndpoint,
  http: ProviderHttpOptions = {},
): Observable<StreamEvent> {
  return streamProvider(
    request,
    options,
    {
      ...endpoint,
      body: () => JSON.stringify(buildResponsesBody(request)),
      decode: decodeSse(),
      parser: (builder) => new ResponsesStreamParser(builder, endpoint.provider, endpoint.secrets),
    },
    http,
  );
}

/**
 * A Provider for the OpenAI Responses API: `POST {baseUrl ?? https://api.openai.com/v1}/responses`
 * with `Authorization: Bearer <key>`. The key comes from the call, the model, or the provider's
 * environment variable (`OPENAI_API_KEY` for OpenAI, the preset's for known compatible backends,
 * see `openAiKeyEnv`); local servers and unknown backends may run without one.
 *
 * @example
 * registry.register('openai-responses', createOpenAiResponsesProvider({ idleTimeoutMs: 30_000 }));
 */
export function createOpenAiResponsesProvider(http: ProviderHttpOptions = {}): Provider {
  return (request, options) => {
    const endpoint = openAiEndpoint(request, 'responses', http);
    return endpoint instanceof ProviderError ? failFast(endpoint) : streamResponses(request, options, endpoint, http);
  };
}

/** The OpenAI Responses Provider with default transport settings. */
export const openaiResponsesProvider: Provider = createOpenAiResponsesProvider();
