import type { Observable } from 'rxjs';
import type { Provider, ProviderOptions, ResponseFormat, StreamEvent, StreamRequest } from '../types/provider.js';
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../types/message.js';
import type { ThinkingLevel } from '../types/config.js';
import { ProviderError } from '../types/errors.js';
import { decodeSse } from '../sources/http/index.js';
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
import type { ProviderEndpoint, ProviderHttpOptions } from './provider-kit.js';
import { openAiEndpoint } from './openai-completions.js';
import { ResponsesStreamParser } from './openai-responses-reader.js';

/*
 * OpenAI Responses API (`POST {baseUrl}/responses`, SSE). Also spoken by Azure OpenAI's v1
 * endpoint, OpenRouter, DeepSeek and other Responses-compatible servers; `streamResponses` takes
 * the URL and headers so those can reuse the protocol.
 */

export { OPENAI_BASE_URL } from './openai-completions.js';
export { ResponsesStreamParser } from './openai-responses-reader.js';

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
  tool_choice?: 'auto' | 'required' | { type: 'function'; name: string };
  reasoning?: { effort: 'low' | 'medium' | 'high'; summary: 'auto' };
  include?: string[];
  prompt_cache_key?: string;
  text?: { format: { type: 'json_schema'; name: string; description?: string; schema: Record<string, unknown>; strict: boolean } };
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
    tool_choice: request.tools.length === 0 ? undefined : responsesToolChoice(request.toolChoice),
    reasoning: effort === undefined ? undefined : { effort, summary: 'auto' as const },
    include: effort === undefined ? undefined : ['reasoning.encrypted_content'],
    // The Responses API caches prompt prefixes on its own; the key keeps one session's turns on one cache.
    prompt_cache_key: caching ? request.sessionId : undefined,
    text: request.responseFormat ? { format: responsesFormat(request.responseFormat) } : undefined,
  });
}

/** Structured output: the Responses API's `text.format`. */
function responsesFormat(format: ResponseFormat): NonNullable<ResponsesRequestBody['text']>['format'] {
  return { type: 'json_schema', name: format.name, ...(format.description ? { description: format.description } : {}), schema: format.schema, strict: format.strict };
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

/** `tool_choice` of a request with tools: the model chooses, unless the request forces a call. */
function responsesToolChoice(choice: StreamRequest['toolChoice']): NonNullable<ResponsesRequestBody['tool_choice']> {
  if (choice === undefined) return 'auto';
  return choice === 'required' ? 'required' : { type: 'function', name: choice.tool };
}
