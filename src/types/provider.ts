import type { Observable, SchedulerLike } from 'rxjs';
import type { AssistantMessage, Message } from './message.js';
import type { CacheConfig, ThinkingLevel } from './config.js';
import type { JsonSchema, ToolDefinition } from './tool.js';
import type { CostConfig } from './usage.js';

/** The wire protocol a model speaks; the registry dispatches on it. */
export type ApiProtocol =
  | 'anthropic-messages'
  | 'openai-completions'
  | 'openai-responses'
  | 'azure-openai'
  | 'google-generative-ai'
  | 'google-vertex'
  | 'bedrock-converse-stream'
  | 'scripted';

/** Differences among OpenAI-compatible backends. */
export interface OpenAiCompat {
  /** `max_tokens` or `max_completion_tokens`. */
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
  /** Send the system prompt with role `developer` instead of `system`. */
  supportsDeveloperRole: boolean;
  supportsReasoningEffort: boolean;
  /** Where streamed reasoning text arrives. */
  reasoningField: 'reasoning_content' | 'reasoning' | 'none';
  /** Send `stream_options: { include_usage: true }`. */
  supportsUsageInStreaming: boolean;
  supportsStore?: boolean;
}

/** Full provider identity for one model. */
export interface ModelConfig {
  /** Model id sent to the API. */
  id: string;
  name?: string;
  api: ApiProtocol;
  /** Stable lowercase provider id: "anthropic", "openai", "groq", ... */
  provider: string;
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  maxTokens?: number;
  contextWindow?: number;
  cost?: CostConfig;
  compat?: OpenAiCompat;
  reasoning?: boolean;
  /** Cloud placement for Vertex / Bedrock / Azure. */
  region?: string;
  project?: string;
  apiVersion?: string;
}

/** What the loop sends to a provider for one turn. */
export interface StreamRequest {
  model: ModelConfig;
  systemPrompt: string;
  messages: Message[];
  tools: ToolDefinition[];
  thinkingLevel: ThinkingLevel;
  maxTokens?: number;
  temperature?: number;
  cacheConfig: CacheConfig;
  /** Resolved per call by `getApiKey`, else the model's own key. */
  apiKey?: string;
  /** The model must call a tool: any one of `tools` (`required`) or the one named. Absent: the model chooses. */
  toolChoice?: ToolChoice;
  sessionId?: string;
  /**
   * Structured output (`config.output`): the answer must be JSON matching `schema`. OpenAI and
   * Gemini send it as their response format; Anthropic and Bedrock as a forced output tool whose
   * arguments they report as the message's text.
   */
  responseFormat?: ResponseFormat;
}

/** A tool call the request forces (`StreamRequest.toolChoice`): any tool offered, or the one named. */
export type ToolChoice = 'required' | { readonly tool: string };

/** The JSON the answer must be: a name the API sees, and an object's JSON Schema. */
export interface ResponseFormat {
  name: string;
  description?: string;
  schema: JsonSchema;
  /** OpenAI's strict schema adherence. */
  strict: boolean;
}

export interface ProviderOptions {
  signal?: AbortSignal;
  scheduler?: SchedulerLike;
}

/**
 * A provider's stream. Delta events carry `partial`: the message being built, shared and
 * mutated in place so that a delta costs O(1). Copy it if you keep it.
 */
export type StreamEvent =
  | { type: 'start'; partial: AssistantMessage }
  | { type: 'textDelta'; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: 'thinkingDelta'; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: 'toolCallStart'; contentIndex: number; id: string; name: string; partial: AssistantMessage }
  | { type: 'toolCallDelta'; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: 'done'; message: AssistantMessage };

/** Cold: nothing happens until subscribed; unsubscribing aborts the request. Errors are ProviderErrors. */
export type Provider = (request: StreamRequest, options: ProviderOptions) => Observable<StreamEvent>;
