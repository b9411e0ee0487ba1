import { runtimeEnv } from './runtime-env.js';
import { defer, from, Observable, switchMap } from 'rxjs';
import type { OperatorFunction } from 'rxjs';
import type { ModelConfig, Provider, StreamEvent, StreamRequest } from '../../types/provider.js';
import type { AssistantMessage, Message, StopReason, ToolResultMessage, UserMessage } from '../../types/message.js';
import type { ImageContent } from '../../types/content.js';
import type { ThinkingLevel } from '../../types/config.js';
import { ProviderError } from '../../types/errors.js';
import { classifyStreamError, excerpt, joinUrl, redactSecrets } from '../http/index.js';
import { loadOptionalPeer } from '../optional-peer.js';
import type { AssistantMessageBuilder } from './message-builder.js';
import {
  compact,
  isOwnMessage,
  maxTokensOf,
  repairToolPairs,
  resolveApiKey,
  streamProvider,
  thinkingAsText,
  toolResultImages,
  toolResultText,
  withModelHeaders,
} from './provider-kit.js';
import type { ProviderHttpOptions, WireParser } from './provider-kit.js';

/*
 * Amazon Bedrock ConverseStream: `POST {baseUrl}/model/{model}/converse-stream`, answered with an
 * AWS event stream (binary frames, `application/vnd.amazon.eventstream`). Frames are decoded and
 * checksummed by @smithy/eventstream-codec; requests are signed by @smithy/signature-v4, or carry a
 * Bedrock API key as a bearer token. Both @smithy packages load lazily, on the first call.
 */

// ---------------------------------------------------------------------------------------------
// Request

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
  return compact({
    messages,
    system: request.systemPrompt === '' ? undefined : [{ text: request.systemPrompt }, ...(cache.system ? [CACHE_POINT] : [])],
    inferenceConfig: compact({ maxTokens, temperature: thinking ? undefined : request.temperature }),
    toolConfig:
      request.tools.length === 0
        ? undefined
        : {
            tools: [
              ...request.tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters } } })),
              ...(cache.tools ? [CACHE_POINT] : []),
            ],
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

// ---------------------------------------------------------------------------------------------
// Event stream

/** One decoded event-stream message: its type headers and JSON payload. */
export interface BedrockStreamMessage {
  /** `:message-type`: `event`, `exception` or `error`. */
  messageType: string;
  /** `:event-type` or `:exception-type`. */
  type: string;
  payload: Record<string, unknown>;
  /** `:error-code` / `:error-message` of `error` messages. */
  errorCode?: string;
  errorMessage?: string;
}

/** What @smithy/eventstream-codec gives us; loaded lazily so `import 'phi-rx'` stays light. */
export interface EventStreamDecoder {
  decode(frame: Uint8Array): { headers: Record<string, { type: string; value: unknown }>; body: Uint8Array };
}

let decoderPromise: Promise<EventStreamDecoder> | undefined;

/** The event-stream codec, imported on first use. */
export function loadEventStreamDecoder(): Promise<EventStreamDecoder> {
  decoderPromise ??= (async () => {
    const [{ EventStreamCodec }, { toUtf8, fromUtf8 }] = await Promise.all([
      loadOptionalPeer('@smithy/eventstream-codec', 'The Bedrock provider', () => import('@smithy/eventstream-codec')),
      loadOptionalPeer('@smithy/util-utf8', 'The Bedrock provider', () => import('@smithy/util-utf8')),
    ]);
    return new EventStreamCodec(toUtf8, fromUtf8) as EventStreamDecoder;
  })();
  return decoderPromise;
}

/**
 * Cuts a byte stream into whole event-stream frames (each starts with its total length, a
 * big-endian uint32) and decodes each with the codec, which checks both CRCs and parses the
 * headers. A body that ends inside a frame fails with a retryable network error.
 *
 * ```
 * bytes:    --[frame1 + half of frame2]--[rest of frame2]--|
 * messages: --m1---------------------------m2---------------|
 * ```
 */
export function decodeEventStream(decoder: EventStreamDecoder, provider: string, secrets: readonly string[] = []): OperatorFunction<Uint8Array, BedrockStreamMessage> {
  return (source) =>
    new Observable<BedrockStreamMessage>((subscriber) => {
      let pending = new Uint8Array(0);
      const drain = (): void => {
        while (pending.length >= 4) {
          const total = new DataView(pending.buffer, pending.byteOffset, pending.byteLength).getUint32(0, false);
          if (total < 16) throw ProviderError.other(`${provider} sent a malformed event-stream frame (length ${total})`, { provider });
          if (pending.length < total) return;
          const frame = pending.slice(0, total);
          pending = pending.subarray(total);
          subscriber.next(decodeFrame(decoder, frame, provider, secrets));
        }
      };
      return source.subscribe({
        next: (chunk) => {
          const merged = new Uint8Array(pending.length + chunk.length);
          merged.set(pending);
          merged.set(chunk, pending.length);
          pending = merged;
          try {
            drain();
          } catch (error) {
            subscriber.error(error);
          }
        },
        error: (error: unknown) => subscriber.error(error),
        complete: () => {
          if (pending.length > 0) {
            subscriber.error(ProviderError.network(`${provider} stream ended inside an event-stream frame (${pending.length} bytes left)`, { provider }));
            return;
          }
          subscriber.complete();
        },
      });
    });
}

function decodeFrame(decoder: EventStreamDecoder, frame: Uint8Array, provider: string, secrets: readonly string[]): BedrockStreamMessage {
  let decoded: ReturnType<EventStreamDecoder['decode']>;
  try {
    decoded = decoder.decode(frame);
  } catch (e) {
    throw ProviderError.other(`${provider} sent a corrupt event-stream frame: ${(e as Error).message}`, { provider });
  }
  const header = (name: string): string | undefined => {
    const value = decoded.headers[name]?.value;
    return typeof value === 'string' ? value : undefined;
  };
  const text = new TextDecoder().decode(decoded.body);
  let payload: Record<string, unknown> = {};
  if (text.trim() !== '') {
    try {
      payload = JSON.parse(text) as Record<string, unknown>;
    } catch (e) {
      throw ProviderError.other(
        redactSecrets(`${provider} sent a malformed JSON event payload (${(e as Error).message}): ${excerpt(text)}`, secrets),
        { provider },
      );
    }
  }
  const messageType = header(':message-type') ?? 'event';
  const message: BedrockStreamMessage = {
    messageType,
    type: header(messageType === 'exception' ? ':exception-type' : ':event-type') ?? '',
    payload,
  };
  const errorCode = header(':error-code');
  const errorMessage = header(':error-message');
  if (errorCode !== undefined) message.errorCode = errorCode;
  if (errorMessage !== undefined) message.errorMessage = errorMessage;
  return message;
}

/** HTTP statuses the ConverseStream exceptions stand for, so they classify like HTTP errors. */
const EXCEPTION_STATUS: Record<string, number> = {
  throttlingException: 429,
  serviceUnavailableException: 503,
  internalServerException: 500,
  modelStreamErrorException: 500,
  modelTimeoutException: 408,
  validationException: 400,
  accessDeniedException: 403,
  resourceNotFoundException: 404,
};

interface ContentBlockStart {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string; type?: string }; toolResult?: unknown };
}

interface ContentBlockDelta {
  contentBlockIndex?: number;
  delta?: {
    text?: string;
    toolUse?: { input?: string };
    reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
  };
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'toolUse',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  guardrail_intervened: 'guardRail',
  content_filtered: 'error',
};

/**
 * Parses ConverseStream events. Blocks are keyed by `contentBlockIndex`. Server-side tool blocks
 * (`type: "server_tool_use"` and their results, e.g. Nova's code interpreter) ran at AWS; they
 * are not tool calls for the loop to run and are left out of the message.
 */
export class BedrockStreamParser implements WireParser<BedrockStreamMessage> {
  private stopReason: string | undefined;
  private readonly serverBlocks = new Set<number>();

  constructor(
    private readonly builder: AssistantMessageBuilder,
    private readonly provider: string,
    private readonly secrets: readonly string[] = [],
  ) {}

  push(message: BedrockStreamMessage, emit: (event: StreamEvent) => void): void {
    if (message.messageType === 'exception') throw this.exception(message.type, message.payload['message']);
    if (message.messageType === 'error') throw this.exception(message.errorCode ?? 'error', message.errorMessage);
    switch (message.type) {
      case 'contentBlockStart':
        return this.blockStart(message.payload as ContentBlockStart, emit);
      case 'contentBlockDelta':
        return this.blockDelta(message.payload as ContentBlockDelta, emit);
      case 'messageStop':
        this.stopReason = typeof message.payload['stopReason'] === 'string' ? message.payload['stopReason'] : 'end_turn';
        return;
      case 'metadata':
        return this.usage(message.payload['usage']);
      default:
        // messageStart, contentBlockStop, ...: nothing to build. Unknown events are ignored on purpose:
        // AWS adds event types without notice.
        return;
    }
  }

  end(emit: (event: StreamEvent) => void): void {
    if (this.stopReason === undefined) throw ProviderError.network(`${this.provider} stream ended before messageStop`, { provider: this.provider });
    const reason = STOP_REASONS[this.stopReason] ?? (this.builder.hasToolCalls() ? 'toolUse' : 'stop');
    const errorMessage = reason === 'error' || reason === 'guardRail' ? `${this.provider} stopped: ${this.stopReason}` : undefined;
    emit(this.builder.finish(reason, errorMessage));
  }

  private blockStart(event: ContentBlockStart, emit: (event: StreamEvent) => void): void {
    const index = event.contentBlockIndex ?? 0;
    const toolUse = event.start?.toolUse;
    if (event.start?.toolResult !== undefined || toolUse?.type === 'server_tool_use') {
      this.serverBlocks.add(index);
      return;
    }
    if (toolUse) emit(this.builder.toolCallStart(toolUse.toolUseId ?? `tooluse_${index}`, toolUse.name ?? '', index));
  }

  private blockDelta(event: ContentBlockDelta, emit: (event: StreamEvent) => void): void {
    const index = event.contentBlockIndex ?? 0;
    const delta = event.delta;
    if (!delta || this.serverBlocks.has(index)) return;
    const b = this.builder;
    if (typeof delta.text === 'string') {
      if (delta.text !== '') emit(b.text(delta.text, index));
    } else if (delta.toolUse) {
      if (typeof delta.toolUse.input === 'string') emit(b.toolCallDelta(delta.toolUse.input, index));
    } else if (delta.reasoningContent) {
      const r = delta.reasoningContent;
      if (typeof r.text === 'string' && r.text !== '') emit(b.thinking(r.text, index));
      if (typeof r.signature === 'string') b.thinkingSignature(r.signature, index, true);
      if (typeof r.redactedContent === 'string') emit(b.redactedThinking(r.redactedContent, index));
    }
  }

  private usage(value: unknown): void {
    if (value === null || typeof value !== 'object') return;
    const u = value as { inputTokens?: number; outputTokens?: number; totalTokens?: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number };
    this.builder.setUsage({
      input: u.inputTokens ?? 0,
      output: u.outputTokens ?? 0,
      cacheRead: u.cacheReadInputTokens ?? 0,
      cacheWrite: u.cacheWriteInputTokens ?? 0,
      totalTokens: u.totalTokens ?? 0,
    });
  }

  private exception(type: string, message: unknown): ProviderError {
    return classifyStreamError({
      message: typeof message === 'string' ? message : '',
      type,
      status: EXCEPTION_STATUS[type],
      provider: this.provider,
      secrets: this.secrets,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Auth and provider

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockProviderOptions extends ProviderHttpOptions {
  /**
   * AWS credentials for SigV4, or a function returning them (called per request, so it can refresh).
   * Default: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`. Ignored when a bearer
   * key is available.
   */
  credentials?: AwsCredentials | (() => AwsCredentials | Promise<AwsCredentials>);
}

type Env = Record<string, string | undefined>;

/** The AWS region of a model: `model.region`, else `AWS_REGION` / `AWS_DEFAULT_REGION`, else us-east-1. */
export function bedrockRegion(model: ModelConfig, env: Env = runtimeEnv()): string {
  return model.region ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1';
}

/** `{baseUrl ?? https://bedrock-runtime.{region}.amazonaws.com}/model/{model}/converse-stream` */
export function bedrockStreamUrl(model: ModelConfig, env: Env = runtimeEnv()): string {
  const base = model.baseUrl ?? `https://bedrock-runtime.${bedrockRegion(model, env)}.amazonaws.com`;
  return joinUrl(base, `model/${encodeURIComponent(model.id)}/converse-stream`);
}

export const AWS_BEARER_TOKEN_ENV = 'AWS_BEARER_TOKEN_BEDROCK';

function envCredentials(env: Env): AwsCredentials | undefined {
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey) return undefined;
  const sessionToken = env['AWS_SESSION_TOKEN'];
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

/** Signs a request with SigV4 for service `bedrock`; returns the headers to send. */
export async function signBedrockRequest(
  url: string,
  headers: Record<string, string>,
  body: string,
  region: string,
  credentials: AwsCredentials,
): Promise<Record<string, string>> {
  const [{ SignatureV4 }, { Sha256 }] = await Promise.all([
    loadOptionalPeer('@smithy/signature-v4', 'Bedrock request signing', () => import('@smithy/signature-v4')),
    loadOptionalPeer('@aws-crypto/sha256-js', 'Bedrock request signing', () => import('@aws-crypto/sha256-js')),
  ]);
  const target = new URL(url);
  const signer = new SignatureV4({ credentials, region, service: 'bedrock', sha256: Sha256 });
  const query: Record<string, string> = {};
  target.searchParams.forEach((value, key) => (query[key] = value));
  const signed = await signer.sign({
    method: 'POST',
    protocol: target.protocol,
    hostname: target.hostname,
    ...(target.port ? { port: Number(target.port) } : {}),
    path: target.pathname,
    query,
    headers: { ...headers, host: target.host },
    body,
  });
  // undici writes the same Host header from the URL; sending it twice would be an error.
  const { host: _host, ...rest } = signed.headers as Record<string, string>;
  return rest;
}

/**
 * A Provider for Bedrock ConverseStream. Auth, in order: a bearer key (the call's key, the
 * model's `apiKey`, else `AWS_BEARER_TOKEN_BEDROCK`); SigV4 with `options.credentials` or the
 * `AWS_*` environment; else the model's own `headers` (e.g. a gateway's auth header).
 *
 * @example
 * registry.register('bedrock-converse-stream', createBedrockProvider({ credentials: () => fetchRoleCredentials() }));
 */
export function createBedrockProvider(options: BedrockProviderOptions = {}): Provider {
  const { credentials, ...http } = options;
  return (request, providerOptions) =>
    defer(() => {
      const { model } = request;
      const provider = model.provider;
      const env = http.env ?? runtimeEnv();
      const url = bedrockStreamUrl(model, env);
      const body = JSON.stringify(buildBedrockBody(request));
      const bearer = resolveApiKey(request, AWS_BEARER_TOKEN_ENV, http);
      const baseHeaders = withModelHeaders({ 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream' }, model);
      const prepare = async (): Promise<{ decoder: EventStreamDecoder; headers: Record<string, string>; secrets: string[] }> => {
        const decoder = await loadEventStreamDecoder();
        if (bearer) return { decoder, headers: { ...baseHeaders, authorization: `Bearer ${bearer}` }, secrets: [bearer] };
        const aws = typeof credentials === 'function' ? await credentials() : credentials ?? envCredentials(env);
        if (aws) {
          const headers = await signBedrockRequest(url, baseHeaders, body, bedrockRegion(model, env), aws);
          return { decoder, headers, secrets: [aws.secretAccessKey, ...(aws.sessionToken ? [aws.sessionToken] : [])] };
        }
        if (Object.keys(model.headers ?? {}).some((h) => h.toLowerCase() === 'authorization')) {
          return { decoder, headers: baseHeaders, secrets: [] };
        }
        throw ProviderError.auth(
          `No credentials for Bedrock model "${model.id}": set a Bedrock API key (apiKey / AWS_BEARER_TOKEN_BEDROCK) ` +
            `or AWS credentials (createBedrockProvider({ credentials }) / AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY).`,
          { provider },
        );
      };
      return from(prepare()).pipe(
        switchMap(({ decoder, headers, secrets }) =>
          streamProvider(
            request,
            providerOptions,
            {
              url,
              headers,
              provider,
              secrets,
              body: () => body,
              decode: decodeEventStream(decoder, provider, secrets),
              parser: (builder) => new BedrockStreamParser(builder, provider, secrets),
            },
            http,
          ),
        ),
      );
    });
}

/** The Bedrock Provider with default transport settings and credentials from the environment. */
export const bedrockProvider: Provider = createBedrockProvider();
