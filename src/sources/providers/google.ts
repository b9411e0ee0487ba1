import type { Observable } from 'rxjs';
import type { ModelConfig, Provider, ProviderOptions, StreamEvent, StreamRequest } from '../../types/provider.js';
import type { AssistantMessage, Message, StopReason, ToolResultMessage, UserMessage } from '../../types/message.js';
import type { ThinkingContent } from '../../types/content.js';
import type { ThinkingLevel } from '../../types/config.js';
import { ProviderError } from '../../types/errors.js';
import { classifyStreamError, decodeSse, excerpt, joinUrl, parseSseJson, redactSecrets, SSE_INVALID_LINE, streamEndedEarly } from '../http/index.js';
import type { SseEvent } from '../http/index.js';
import type { AssistantMessageBuilder } from './message-builder.js';
import {
  compact,
  failFast,
  isOwnMessage,
  maxTokensOf,
  missingKeyError,
  repairToolPairs,
  resolveApiKey,
  streamProvider,
  thinkingAsText,
  toolResultImages,
  toolResultText,
  withModelHeaders,
} from './provider-kit.js';
import type { ProviderEndpoint, ProviderHttpOptions, WireParser } from './provider-kit.js';
import { GEMINI_BASE_URL } from './model-catalog.js';

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
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' } };
  generationConfig: {
    maxOutputTokens?: number;
    temperature?: number;
    thinkingConfig?: { includeThoughts: boolean; thinkingBudget: number };
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
    toolConfig: request.tools.length === 0 ? undefined : { functionCallingConfig: { mode: 'AUTO' as const } },
    generationConfig: compact({
      maxOutputTokens: maxTokensOf(request),
      temperature: request.temperature,
      thinkingConfig: thinking
        ? { includeThoughts: true, thinkingBudget: GOOGLE_THINKING_BUDGETS[request.thinkingLevel as Exclude<ThinkingLevel, 'off'>] }
        : undefined,
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
// Stream

interface GoogleChunk {
  candidates?: Array<{
    content?: { parts?: GoogleResponsePart[] };
    finishReason?: string;
    finishMessage?: string;
  }>;
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    cachedContentTokenCount?: number;
    toolUsePromptTokenCount?: number;
    totalTokenCount?: number;
  };
  modelVersion?: string;
  error?: { code?: number; message?: string; status?: string };
}

interface GoogleResponsePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: {
    name?: string;
    args?: Record<string, unknown>;
    id?: string;
    /** Vertex Gemini 3 streams arguments as JSON-path fragments. */
    partialArgs?: PartialArg[];
    willContinue?: boolean;
  };
}

interface PartialArg {
  jsonPath?: string;
  stringValue?: string;
  numberValue?: number;
  boolValue?: boolean;
  nullValue?: unknown;
  willContinue?: boolean;
}

/** A function call whose arguments arrive in `partialArgs` fragments. */
interface StreamedCall {
  key: number;
  args: Record<string, unknown>;
}

const SAFETY_STOPS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'LANGUAGE', 'OTHER', 'MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL']);

/**
 * Parses Gemini SSE chunks. Gemini has no terminal event: the stream is complete when the body
 * ends after a chunk that carried a `finishReason`.
 */
export class GoogleStreamParser implements WireParser<SseEvent> {
  private finishReason: string | undefined;
  private finishMessage: string | undefined;
  private calls: number;
  private streamedCall: StreamedCall | undefined;

  /** `firstCallIndex`: where invented ids start, so they do not repeat those of earlier turns (see {@link nextInventedCallIndex}). */
  constructor(
    private readonly builder: AssistantMessageBuilder,
    private readonly provider: string,
    private readonly idPrefix: string,
    private readonly secrets: readonly string[] = [],
    firstCallIndex = 0,
  ) {
    this.calls = firstCallIndex;
  }

  push(sse: SseEvent, emit: (event: StreamEvent) => void): void {
    if (sse.data.trim() === '' || sse.data === '[DONE]') return;
    const chunk =
      sse.event === SSE_INVALID_LINE ? this.invalidLine(sse.data) : parseSseJson<GoogleChunk>(sse.data, this.provider, this.secrets);
    if (chunk === null || typeof chunk !== 'object') {
      throw ProviderError.other(`${this.provider} sent a chunk that is not an object: ${excerpt(redactSecrets(sse.data, this.secrets))}`, {
        provider: this.provider,
      });
    }
    if (chunk.error) throw this.streamError(chunk.error);
    if (chunk.modelVersion) this.builder.setModel(chunk.modelVersion);
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) this.part(part, emit);
    if (candidate?.finishReason) {
      this.finishReason = candidate.finishReason;
      this.finishMessage = candidate.finishMessage;
    }
    if (chunk.usageMetadata) this.usage(chunk.usageMetadata);
  }

  end(emit: (event: StreamEvent) => void): void {
    if (this.finishReason === undefined) throw streamEndedEarly(this.provider, 'a chunk with finishReason');
    this.closeStreamedCall(emit);
    emit(this.builder.finish(this.stopReason(), this.errorMessage()));
  }

  private part(part: GoogleResponsePart, emit: (event: StreamEvent) => void): void {
    const b = this.builder;
    if (part.thoughtSignature) this.signature(part.thoughtSignature, emit);
    const call = part.functionCall;
    if (call) return this.functionCall(call, emit);
    if (typeof part.text !== 'string' || part.text === '') return;
    emit(part.thought ? b.thinking(part.text) : b.text(part.text));
  }

  /** Puts a part's signature on the thinking block before it, creating an empty one if needed. */
  private signature(signature: string, emit: (event: StreamEvent) => void): void {
    const partial = this.builder.partial;
    const last = partial.content[partial.content.length - 1];
    if (last?.type === 'thinking' && last.signature === undefined) {
      last.signature = signature;
      this.builder.touch(partial.content.length - 1);
      return;
    }
    const contentIndex = partial.content.push({ type: 'thinking', thinking: '', signature }) - 1;
    // Announce the new block so that content indices in later events never skip one.
    emit({ type: 'thinkingDelta', contentIndex, delta: '', partial });
  }

  private functionCall(call: NonNullable<GoogleResponsePart['functionCall']>, emit: (event: StreamEvent) => void): void {
    const b = this.builder;
    if (call.name && call.willContinue && !call.args) {
      // The start of a call whose arguments follow in partialArgs fragments.
      this.closeStreamedCall(emit);
      const key = this.calls++;
      this.streamedCall = { key, args: {} };
      emit(b.toolCallStart(call.id ?? `${this.idPrefix}${key}`, call.name, `fc${key}`));
      return;
    }
    if (call.partialArgs && this.streamedCall) {
      for (const fragment of call.partialArgs) applyPartialArg(this.streamedCall.args, fragment);
      return;
    }
    if (!call.name) {
      // `functionCall: {}` closes a streamed call.
      this.closeStreamedCall(emit);
      return;
    }
    this.closeStreamedCall(emit);
    const key = this.calls++;
    for (const event of b.toolCallComplete(call.id ?? `${this.idPrefix}${key}`, call.name, call.args ?? {}, `fc${key}`)) emit(event);
  }

  private closeStreamedCall(emit: (event: StreamEvent) => void): void {
    const call = this.streamedCall;
    if (!call) return;
    this.streamedCall = undefined;
    emit(this.builder.toolCallDelta(JSON.stringify(call.args), `fc${call.key}`));
  }

  private usage(u: NonNullable<GoogleChunk['usageMetadata']>): void {
    const cached = u.cachedContentTokenCount ?? 0;
    const thoughts = u.thoughtsTokenCount ?? 0;
    this.builder.setUsage({
      // Tool-use prompt tokens (grounding, code execution) are billed as input.
      input: (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0) - cached,
      output: (u.candidatesTokenCount ?? 0) + thoughts,
      reasoning: thoughts,
      cacheRead: cached,
      cacheWrite: 0,
      totalTokens: u.totalTokenCount ?? 0,
    });
  }

  private stopReason(): StopReason {
    if (this.finishReason === 'MAX_TOKENS') return 'length';
    if (SAFETY_STOPS.has(this.finishReason ?? '')) return 'error';
    return this.builder.hasToolCalls() ? 'toolUse' : 'stop';
  }

  private errorMessage(): string | undefined {
    if (!SAFETY_STOPS.has(this.finishReason ?? '')) return undefined;
    return `${this.provider} stopped with finishReason ${this.finishReason}${this.finishMessage ? `: ${this.finishMessage}` : ''}`;
  }

  private streamError(error: NonNullable<GoogleChunk['error']>): ProviderError {
    return classifyStreamError({
      message: error.message ?? '',
      type: error.status,
      status: error.code,
      provider: this.provider,
      secrets: this.secrets,
    });
  }

  private invalidLine(line: string): GoogleChunk {
    // A bare JSON error (or an error array) in place of SSE.
    try {
      const parsed = JSON.parse(line) as GoogleChunk | GoogleChunk[];
      const chunk = Array.isArray(parsed) ? parsed[0] : parsed;
      if (chunk?.error) return chunk;
    } catch {
      // not JSON
    }
    throw ProviderError.other(`${this.provider} sent a line that is not SSE: ${excerpt(redactSecrets(line, this.secrets))}`, {
      provider: this.provider,
    });
  }
}

/**
 * The number after the highest invented id (`{idPrefix}{n}`) among the conversation's tool calls,
 * 0 when there is none. Gemini 2.x sends no call ids, so each turn would otherwise invent
 * `{idPrefix}0` again, and ids must stay unique in case the conversation moves to a provider that
 * requires it (Anthropic wants `tool_use` ids unique).
 */
export function nextInventedCallIndex(messages: readonly Message[], idPrefix: string): number {
  let next = 0;
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const block of message.content) {
      if (block.type !== 'toolCall' || !block.id.startsWith(idPrefix)) continue;
      const n = Number(block.id.slice(idPrefix.length));
      if (Number.isInteger(n) && n >= next) next = n + 1;
    }
  }
  return next;
}

/** Sets one `partialArgs` fragment (`$.a.b[0]`) in `args`; string fragments of one value are concatenated. */
function applyPartialArg(args: Record<string, unknown>, fragment: PartialArg): void {
  const path = (fragment.jsonPath ?? '$').replace(/^\$\.?/, '');
  const keys = path === '' ? [] : path.split(/\.|\[(\d+)\]/).filter((k): k is string => k !== undefined && k !== '');
  if (keys.length === 0) return;
  let target: Record<string, unknown> | unknown[] = args;
  keys.slice(0, -1).forEach((key, i) => {
    const record = target as Record<string, unknown>;
    const nextIsIndex = /^\d+$/.test(keys[i + 1]!);
    record[key] ??= nextIsIndex ? [] : {};
    target = record[key] as Record<string, unknown> | unknown[];
  });
  const last = keys[keys.length - 1]!;
  const record = target as Record<string, unknown>;
  if (fragment.stringValue !== undefined) {
    const current = record[last];
    record[last] = (typeof current === 'string' ? current : '') + fragment.stringValue;
  } else if (fragment.numberValue !== undefined) record[last] = fragment.numberValue;
  else if (fragment.boolValue !== undefined) record[last] = fragment.boolValue;
  else if ('nullValue' in fragment) record[last] = null;
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
    const endpoint: GoogleEndpoint = {
      url: geminiStreamUrl(model),
      headers: withModelHeaders({ 'content-type': 'application/json', accept: 'text/event-stream', 'x-goog-api-key': key }, model),
      provider: model.provider,
      secrets: [key],
      idPrefix: 'google-fc-',
    };
    return streamGoogle(request, options, endpoint, http);
  };
}

/** The Gemini Provider with default transport settings. */
export const googleProvider: Provider = createGoogleProvider();
