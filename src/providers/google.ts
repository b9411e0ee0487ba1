import type { Observable } from 'rxjs';
import type { ModelConfig, Provider, ProviderOptions, StreamEvent, StreamRequest } from '../types/provider.js';
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../types/message.js';
import type { ThinkingContent } from '../types/content.js';
import type { ThinkingLevel } from '../types/config.js';
import { decodeSse, joinUrl } from '../sources/http/index.js';
import {
  compact,
  failFast,
  isOwnMessage,
  maxTokensOf,
  missingKeyError,
  repairToolPairs,
  resolveApiKey,
  requestSecrets,
  streamProvider,
  thinkingAsText,
  toolResultImages,
  toolResultText,
  withModelHeaders,
} from './provider-kit.js';
import type { ProviderEndpoint, ProviderHttpOptions } from './provider-kit.js';
import { GEMINI_BASE_URL } from './model-catalog.js';
import { GoogleStreamParser, nextInventedCallIndex } from './google-reader.js';

/*
 * Google Generative AI (Gemini) `streamGenerateContent?alt=sse`; Vertex AI speaks the same
 * body and stream (see google-vertex.ts), so everything here takes the tool-id prefix.
 *
 * Gemini attaches an opaque `thoughtSignature` to a response part (a function call, or the first
 * answer text after thoughts) and wants it back on the same part. phi-rx keeps it in the
 * `signature` of the thinking block right before that part (an empty thinking block when the
 * model streamed no thought text), so it survives a save/load round trip unchanged, and hands it
 * back on the part that follows the block.
 */

/** Default base URL of the Gemini API (defined with the model catalogs, which must not load this module). */
export { GEMINI_BASE_URL };
export { GoogleStreamParser, nextInventedCallIndex } from './google-reader.js';

// ---------------------------------------------------------------------------------------------
// Request

export type GooglePart =
  | { text: string; thought?: true; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { functionCall: { name: string; args: Record<string, unknown>; id?: string }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown>; id?: string } };

export interface GoogleContent {
  role: 'user' | 'model';
  parts: GooglePart[];
}

export interface GoogleRequestBody {
  contents: GoogleContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: Array<{ name: string; description: string; parametersJsonSchema: Record<string, unknown> }> }>;
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY'; allowedFunctionNames?: string[] } };
  generationConfig: {
    maxOutputTokens?: number;
    temperature?: number;
    thinkingConfig?: { includeThoughts: boolean; thinkingBudget: number };
    responseMimeType?: 'application/json';
    responseJsonSchema?: Record<string, unknown>;
  };
}

/** Thinking budgets in tokens, the ladder of spec 000 §5 (`off` leaves the model's default). */
export const GOOGLE_THINKING_BUDGETS: Record<Exclude<ThinkingLevel, 'off'>, number> = {
  minimal: 128,
  low: 512,
  medium: 2048,
  high: 8192,
};

/**
 * The request body for one turn. `idPrefix` marks the tool-call ids phi-rx invented (Gemini 2.x
 * sends none); those are not sent back, ids the model gave are.
 */
export function buildGoogleBody(request: StreamRequest, idPrefix = 'google-fc-'): GoogleRequestBody {
  const { model } = request;
  const thinking = request.thinkingLevel !== 'off' && model.reasoning !== false;
  return compact({
    contents: buildGoogleContents(request.messages, model, idPrefix),
    systemInstruction: request.systemPrompt === '' ? undefined : { parts: [{ text: request.systemPrompt }] },
    tools:
      request.tools.length === 0
        ? undefined
        : [
            {
              functionDeclarations: request.tools.map((t) => ({
                name: t.name,
                description: t.description,
                // Full JSON Schema, unlike `parameters` (an OpenAPI subset that rejects e.g. additionalProperties).
                parametersJsonSchema: t.parameters,
              })),
            },
          ],
    toolConfig: request.tools.length === 0 ? undefined : { functionCallingConfig: googleToolChoice(request.toolChoice) },
    generationConfig: compact({
      maxOutputTokens: maxTokensOf(request),
      temperature: request.temperature,
      thinkingConfig: thinking
        ? { includeThoughts: true, thinkingBudget: GOOGLE_THINKING_BUDGETS[request.thinkingLevel as Exclude<ThinkingLevel, 'off'>] }
        : undefined,
      // Structured output: JSON Schema as is (`responseSchema` takes only an OpenAPI subset).
      responseMimeType: request.responseFormat ? ('application/json' as const) : undefined,
      responseJsonSchema: request.responseFormat?.schema,
    }),
  });
}

/** Converts the conversation to Gemini `contents`, merging consecutive turns of one role. */
export function buildGoogleContents(messages: readonly Message[], model: ModelConfig, idPrefix = 'google-fc-'): GoogleContent[] {
  const contents: GoogleContent[] = [];
  const push = (role: GoogleContent['role'], parts: GooglePart[]): void => {
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    // Gemini wants the responses to one turn's parallel calls together, and roles to alternate.
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of repairToolPairs(messages)) {
    if (message.role === 'user') push('user', userParts(message));
    else if (message.role === 'assistant') push('model', modelParts(message, isOwnMessage(message, model), idPrefix));
    else push('user', toolResultParts(message, idPrefix));
  }
  return contents;
}

function userParts(message: UserMessage): GooglePart[] {
  return message.content.map((c) => (c.type === 'text' ? { text: c.text } : { inlineData: { mimeType: c.mimeType, data: c.data } }));
}

function modelParts(message: AssistantMessage, own: boolean, idPrefix: string): GooglePart[] {
  const parts: GooglePart[] = [];
  let pending: ThinkingContent | undefined;
  for (const block of message.content) {
    if (block.type === 'thinking') {
      if (own && block.signature) pending = block;
      else if (!own && block.thinking.trim() !== '') parts.push({ text: thinkingAsText(block.thinking) });
      continue;
    }
    const signature = pending?.signature;
    pending = undefined;
    if (block.type === 'text') {
      if (block.text === '' && signature === undefined) continue;
      parts.push(signature === undefined ? { text: block.text } : { text: block.text, thoughtSignature: signature });
    } else {
      const call: { name: string; args: Record<string, unknown>; id?: string } = { name: block.name, args: block.arguments };
      if (block.id && !block.id.startsWith(idPrefix)) call.id = block.id;
      parts.push(signature === undefined ? { functionCall: call } : { functionCall: call, thoughtSignature: signature });
    }
  }
  // A signature with nothing after it goes back on its own thought part.
  if (pending?.signature) parts.push({ text: pending.thinking, thought: true, thoughtSignature: pending.signature });
  return parts;
}

function toolResultParts(message: ToolResultMessage, idPrefix: string): GooglePart[] {
  const text = toolResultText(message);
  const response: { name: string; response: Record<string, unknown>; id?: string } = {
    name: message.toolName,
    response: message.isError ? { error: text } : { result: text },
  };
  if (message.toolCallId && !message.toolCallId.startsWith(idPrefix)) response.id = message.toolCallId;
  const parts: GooglePart[] = [{ functionResponse: response }];
  for (const image of toolResultImages(message)) parts.push({ inlineData: { mimeType: image.mimeType, data: image.data } });
  return parts;
}

// ---------------------------------------------------------------------------------------------
// Provider

/** Where and how to send a Gemini-format request. */
export interface GoogleEndpoint extends ProviderEndpoint {
  /** Prefix of invented tool-call ids: `google-fc-` or `vertex-fc-`. */
  idPrefix: string;
}

/** One `streamGenerateContent` call as a cold Observable of StreamEvents (Gemini API or Vertex AI). */
export function streamGoogle(
  request: StreamRequest,
  options: ProviderOptions,
  endpoint: GoogleEndpoint,
  http: ProviderHttpOptions = {},
): Observable<StreamEvent> {
  const { idPrefix } = endpoint;
  return streamProvider(
    request,
    options,
    {
      ...endpoint,
      body: () => JSON.stringify(buildGoogleBody(request, idPrefix)),
      decode: decodeSse(),
      parser: (builder) =>
        new GoogleStreamParser(builder, endpoint.provider, idPrefix, endpoint.secrets, nextInventedCallIndex(request.messages, idPrefix)),
    },
    http,
  );
}

/** `{baseUrl}/v1beta/models/{model}:streamGenerateContent?alt=sse` */
export function geminiStreamUrl(model: ModelConfig): string {
  return joinUrl(model.baseUrl ?? GEMINI_BASE_URL, `v1beta/models/${encodeURIComponent(model.id)}:streamGenerateContent?alt=sse`);
}

export const GEMINI_API_KEY_ENV = 'GEMINI_API_KEY';
/** Read when GEMINI_API_KEY is not set. */
export const GOOGLE_API_KEY_ENV = 'GOOGLE_API_KEY';

/**
 * A Provider for the Gemini API. The key (the call's, the model's, else `GEMINI_API_KEY` /
 * `GOOGLE_API_KEY`) travels in the `x-goog-api-key` header, which Google accepts in place of the
 * `?key=` query parameter of spec 000 §5, so that it never sits in a URL a proxy might log.
 *
 * @example
 * registry.register('google-generative-ai', createGoogleProvider({ idleTimeoutMs: 30_000 }));
 */
export function createGoogleProvider(http: ProviderHttpOptions = {}): Provider {
  return (request, options) => {
    const { model } = request;
    const key = resolveApiKey(request, GEMINI_API_KEY_ENV, http) ?? resolveApiKey(request, GOOGLE_API_KEY_ENV, http);
    if (!key) return failFast(missingKeyError(model, GEMINI_API_KEY_ENV));
    const headers = withModelHeaders({ 'content-type': 'application/json', accept: 'text/event-stream', 'x-goog-api-key': key }, model);
    const endpoint: GoogleEndpoint = {
      url: geminiStreamUrl(model),
      headers,
      provider: model.provider,
      secrets: requestSecrets(headers, model, key),
      idPrefix: 'google-fc-',
    };
    return streamGoogle(request, options, endpoint, http);
  };
}

/** The Gemini Provider with default transport settings. */
export const googleProvider: Provider = createGoogleProvider();

/** How a request with tools calls them: the model chooses (`AUTO`), unless the request forces a call (`ANY`, of one when named). */
function googleToolChoice(choice: StreamRequest['toolChoice']): { mode: 'AUTO' | 'ANY'; allowedFunctionNames?: string[] } {
  if (choice === undefined) return { mode: 'AUTO' };
  return choice === 'required' ? { mode: 'ANY' } : { mode: 'ANY', allowedFunctionNames: [choice.tool] };
}
