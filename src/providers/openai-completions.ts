import type { Observable } from 'rxjs';
import type { ImageContent, TextContent } from '../types/content.js';
import type { AssistantMessage, Message } from '../types/message.js';
import type { ModelConfig, Provider, ProviderOptions, StreamEvent, StreamRequest } from '../types/provider.js';
import { ProviderError } from '../types/errors.js';
import { joinUrl } from '../sources/http/request.js';
import { decodeSse } from '../sources/http/sse.js';
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
  toolResultText,
  withModelHeaders,
} from './provider-kit.js';
import type { ProviderEndpoint, ProviderHttpOptions } from './provider-kit.js';
import { OPENAI_COMPATIBLE_PRESETS } from './models.js';
import { OPENAI_BASE_URL } from './model-catalog.js';
import { compatOf, reasoningEffortOf } from './openai-completions-compat.js';
import { chatCompletionsReader } from './openai-completions-reader.js';

/**
 * OpenAI Chat Completions and the many backends that copy it (spec 000 §5):
 * `POST {baseUrl}/chat/completions` with `stream: true`. The model's `compat` flags say how a
 * backend differs (max-tokens field, developer role, reasoning_effort, where reasoning arrives).
 */

/** Default base URL of OpenAI's API (defined with the model catalogs, which must not load this module). */
export { OPENAI_BASE_URL };

export { OPENAI_COMPAT, GENERIC_COMPAT, compatOf, reasoningEffortOf } from './openai-completions-compat.js';
export { chatUsage, chatCompletionsReader, type ChatUsage } from './openai-completions-reader.js';

// ---------------------------------------------------------------------------------------------
// Request

export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
      reasoning_details?: Array<Record<string, unknown>>;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** The JSON body sent to `/chat/completions`. */
export interface ChatCompletionsBody {
  model: string;
  messages: ChatMessage[];
  stream: true;
  stream_options?: { include_usage: true };
  tools?: Array<{ type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }>;
  tool_choice?: 'required' | { type: 'function'; function: { name: string } };
  max_tokens?: number;
  max_completion_tokens?: number;
  reasoning_effort?: 'low' | 'medium' | 'high';
  reasoning?: { effort: 'low' | 'medium' | 'high' };
  temperature?: number;
  store?: boolean;
  response_format?: { type: 'json_schema'; json_schema: { name: string; description?: string; schema: Record<string, unknown>; strict: boolean } };
}

/**
 * Builds the Chat Completions body: the system prompt as the first message (`developer` role
 * when the backend supports it), images as data URLs, tool calls with JSON-string arguments,
 * tool results as `tool` messages (their images follow in a user message, which `tool` messages
 * cannot carry), and thinking from other providers as plain text. This API has no field for
 * echoing a model's own reasoning, so same-provider thinking is dropped, except OpenRouter's
 * signed `reasoning_details`, which it accepts back.
 */
export function buildChatCompletionsRequest(request: StreamRequest): ChatCompletionsBody {
  const { model } = request;
  const compat = compatOf(model);
  const messages: ChatMessage[] = [];
  if (request.systemPrompt) {
    messages.push({ role: compat.supportsDeveloperRole ? 'developer' : 'system', content: request.systemPrompt });
  }
  messages.push(...convertMessages(request.messages, model));

  const body: ChatCompletionsBody = { model: model.id, messages, stream: true };
  if (compat.supportsUsageInStreaming) body.stream_options = { include_usage: true };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
    const choice = request.toolChoice;
    if (choice !== undefined) body.tool_choice = choice === 'required' ? 'required' : { type: 'function', function: { name: choice.tool } };
  }
  const maxTokens = maxTokensOf(request);
  if (maxTokens !== undefined) body[compat.maxTokensField] = maxTokens;
  const effort = model.reasoning === false ? undefined : reasoningEffortOf(request.thinkingLevel);
  if (effort !== undefined) {
    // OpenRouter takes its own `reasoning` object and normalises it for every upstream model.
    if (model.provider === 'openrouter') body.reasoning = { effort };
    else if (compat.supportsReasoningEffort) body.reasoning_effort = effort;
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (compat.supportsStore) body.store = false;
  const format = request.responseFormat;
  if (format) body.response_format = { type: 'json_schema', json_schema: { name: format.name, ...(format.description ? { description: format.description } : {}), schema: format.schema, strict: format.strict } };
  return body;
}

/** Mistral accepts only 9-character alphanumeric tool-call ids. */
export function mistralToolId(id: string): string {
  if (/^[a-zA-Z0-9]{9}$/.test(id)) return id;
  let hash = 2166136261;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 16777619) >>> 0;
  return hash.toString(36).padStart(9, '0').slice(-9);
}

/**
 * OpenAI rejects tool-call ids longer than 40 characters; a longer id (another provider's) keeps
 * its first 32 characters and gets a hash of the whole, the same for call and result.
 */
export function openAiToolId(id: string): string {
  if (id.length <= 40) return id;
  let hash = 2166136261;
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 16777619) >>> 0;
  return `${id.slice(0, 32)}_${hash.toString(36).padStart(7, '0')}`;
}

function convertMessages(messages: readonly Message[], model: ModelConfig): ChatMessage[] {
  const toolId = model.provider === 'mistral' ? mistralToolId : openAiToolId;
  const out: ChatMessage[] = [];
  let pendingImages: ImageContent[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    out.push({ role: 'user', content: [{ type: 'text', text: 'Images returned by the tool calls above:' }, ...pendingImages.map(imagePart)] });
    pendingImages = [];
  };
  for (const message of repairToolPairs(messages)) {
    if (message.role !== 'toolResult') flushImages();
    if (message.role === 'user') {
      const content = userContent(message.content);
      if (content !== '' && !(Array.isArray(content) && content.length === 0)) out.push({ role: 'user', content });
    } else if (message.role === 'assistant') {
      const converted = assistantMessage(message, model, toolId);
      if (converted) out.push(converted);
    } else {
      out.push({ role: 'tool', tool_call_id: toolId(message.toolCallId), content: toolResultText(message) || '(no output)' });
      for (const c of message.content) if (c.type === 'image') pendingImages.push(c);
    }
  }
  flushImages();
  return out;
}

function userContent(content: ReadonlyArray<TextContent | ImageContent>): string | ChatContentPart[] {
  if (content.every((c) => c.type === 'text')) return content.map((c) => (c as TextContent).text).join('\n');
  return content.flatMap((c): ChatContentPart[] => (c.type === 'text' ? (c.text ? [{ type: 'text', text: c.text }] : []) : [imagePart(c)]));
}

const imagePart = (image: ImageContent): ChatContentPart => ({
  type: 'image_url',
  image_url: { url: `data:${image.mimeType};base64,${image.data}` },
});

function assistantMessage(message: AssistantMessage, model: ModelConfig, toolId: (id: string) => string): ChatMessage | undefined {
  const foreign = !isOwnMessage(message, model);
  const texts: string[] = [];
  const reasoningDetails: Array<Record<string, unknown>> = [];
  const toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  for (const block of message.content) {
    if (block.type === 'text') {
      if (block.text !== '') texts.push(block.text);
    } else if (block.type === 'thinking') {
      if (foreign) {
        if (!block.redacted && block.thinking.trim() !== '') texts.push(thinkingAsText(block.thinking));
      } else if (model.provider === 'openrouter' && block.signature) {
        reasoningDetails.push({ type: 'reasoning.text', text: block.thinking, signature: block.signature });
      }
    } else {
      toolCalls.push({ id: toolId(block.id), type: 'function', function: { name: block.name, arguments: JSON.stringify(block.arguments) } });
    }
  }
  if (texts.length === 0 && toolCalls.length === 0) return undefined;
  const out: ChatMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('\n\n') : null };
  if (toolCalls.length > 0) out.tool_calls = toolCalls;
  if (reasoningDetails.length > 0) out.reasoning_details = reasoningDetails;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Provider

/**
 * The environment variable holding a provider's key: `OPENAI_API_KEY` for OpenAI, the preset's
 * for known backends; undefined for local servers and unknown backends, which may run keyless.
 */
export function openAiKeyEnv(provider: string): string | undefined {
  if (provider === 'openai') return 'OPENAI_API_KEY';
  const preset = Object.values(OPENAI_COMPATIBLE_PRESETS).find((p) => p.provider === provider);
  return preset?.apiKeyEnv;
}

/**
 * `{baseUrl ?? OPENAI_BASE_URL}/{path}` with `Authorization: Bearer <key>`, the key from the call,
 * the model or {@link openAiKeyEnv}. Local servers and unknown backends may run without a key (no
 * Authorization header is sent); a known backend without one gets an `auth` ProviderError.
 */
export function openAiEndpoint(request: StreamRequest, path: string, http: ProviderHttpOptions): ProviderEndpoint | ProviderError {
  const { model } = request;
  const envVar = openAiKeyEnv(model.provider);
  const apiKey = resolveApiKey(request, envVar, http);
  if (!apiKey && envVar !== undefined) return missingKeyError(model, envVar);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
  if (apiKey) headers['authorization'] = `Bearer ${apiKey}`;
  const sent = withModelHeaders(headers, model);
  return { url: joinUrl(model.baseUrl ?? OPENAI_BASE_URL, path), headers: sent, provider: model.provider, secrets: requestSecrets(sent, model, apiKey) };
}

/**
 * One Chat Completions call as a cold Observable of StreamEvents; the building block of
 * {@link createOpenAiCompletionsProvider} and of Azure OpenAI's chat wire.
 */
export function streamChatCompletions(
  request: StreamRequest,
  options: ProviderOptions,
  endpoint: ProviderEndpoint,
  http: ProviderHttpOptions = {},
): Observable<StreamEvent> {
  return streamProvider(
    request,
    options,
    {
      ...endpoint,
      body: () => JSON.stringify(buildChatCompletionsRequest(request)),
      decode: decodeSse(),
      parser: (builder) => chatCompletionsReader(builder, request.model, endpoint.secrets),
    },
    http,
  );
}

/**
 * A Provider for Chat Completions and its compatible backends (`api: 'openai-completions'`).
 * The key comes from the call, the model, or the provider's environment variable
 * ({@link openAiKeyEnv}); local servers (ollama, vllm, lmstudio, llamacpp) and backends not in
 * the presets may run without one (no Authorization header is sent).
 */
export function createOpenAiCompletionsProvider(http: ProviderHttpOptions = {}): Provider {
  return (request: StreamRequest, options: ProviderOptions): Observable<StreamEvent> => {
    const endpoint = openAiEndpoint(request, 'chat/completions', http);
    return endpoint instanceof ProviderError ? failFast(endpoint) : streamChatCompletions(request, options, endpoint, http);
  };
}

/** The Chat Completions provider on the shared HTTP dispatcher. */
export const openAiCompletionsProvider: Provider = createOpenAiCompletionsProvider();
