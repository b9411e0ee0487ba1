import type { ModelConfig } from '../types/provider.js';
import { ANTHROPIC_MODELS, OPENAI_MODELS } from './models.js';
import type { ModelOptions } from './models.js';
import { buildModelConfig, GEMINI_BASE_URL, knownModel, OPENAI_BASE_URL } from './model-catalog.js';
import type { KnownModelInfo } from './model-catalog.js';
import type { BedrockModelId, GeminiModelId, OpenAiModelId } from './model-ids.js';

/**
 * ModelConfig constructors for the OpenAI Responses API, Gemini, Vertex AI and Bedrock
 * ConverseStream. Like those of models.ts they fill in the protocol, provider id, endpoint and,
 * for models they know, context window, output limit and price per million tokens; anything in
 * `options` wins. Keys are not read here: providers resolve them per call.
 */

export type { KnownModelInfo };

// ---------------------------------------------------------------------------------------------
// OpenAI Responses

export interface OpenAiResponsesOptions extends ModelOptions {
  /**
   * Provider id for a Responses-compatible backend (`openrouter`, `deepseek`, ...), which also
   * picks the key's environment variable. Default `openai`.
   */
  provider?: string;
}

/**
 * An OpenAI Responses API model (`api: 'openai-responses'`). Key: `OPENAI_API_KEY`.
 *
 * @example
 * const model = openaiResponses('gpt-5', { maxTokens: 8192 });
 * const viaOpenRouter = openaiResponses('openai/gpt-oss-20b', { provider: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1' });
 */
export function openaiResponses(id: OpenAiModelId, options: OpenAiResponsesOptions = {}): ModelConfig {
  const { provider = 'openai', ...rest } = options;
  return buildModelConfig(
    { id, api: 'openai-responses', provider, baseUrl: OPENAI_BASE_URL },
    provider === 'openai' ? knownModel(OPENAI_MODELS, id) : undefined,
    rest,
  );
}

// ---------------------------------------------------------------------------------------------
// Gemini and Vertex AI

/** Gemini list prices, $ per million tokens (prompts up to 200k tokens; cacheRead = context-cache reads). */
export const GEMINI_MODELS: Readonly<Record<string, KnownModelInfo>> = {
  'gemini-3-pro': { contextWindow: 1_048_576, maxTokens: 65_536, reasoning: true, cost: { input: 2, output: 12, cacheRead: 0.2 } },
  'gemini-2.5-pro': { contextWindow: 1_048_576, maxTokens: 65_536, reasoning: true, cost: { input: 1.25, output: 10, cacheRead: 0.125 } },
  'gemini-2.5-flash': { contextWindow: 1_048_576, maxTokens: 65_536, reasoning: true, cost: { input: 0.3, output: 2.5, cacheRead: 0.03 } },
  'gemini-2.5-flash-lite': { contextWindow: 1_048_576, maxTokens: 65_536, reasoning: true, cost: { input: 0.1, output: 0.4, cacheRead: 0.01 } },
  'gemini-2.0-flash': { contextWindow: 1_048_576, maxTokens: 8_192, reasoning: false, cost: { input: 0.1, output: 0.4, cacheRead: 0.025 } },
  'gemini-2.0-flash-lite': { contextWindow: 1_048_576, maxTokens: 8_192, reasoning: false, cost: { input: 0.075, output: 0.3 } },
};

/**
 * A Gemini API model (`api: 'google-generative-ai'`). Key: `GEMINI_API_KEY` (or `GOOGLE_API_KEY`).
 *
 * @example
 * const model = google('gemini-2.5-flash');
 */
export function google(id: GeminiModelId, options: ModelOptions = {}): ModelConfig {
  return buildModelConfig({ id, api: 'google-generative-ai', provider: 'google', baseUrl: GEMINI_BASE_URL }, knownModel(GEMINI_MODELS, id), options);
}

export interface GoogleVertexOptions extends ModelOptions {
  /** GCP project id. Default `$GOOGLE_CLOUD_PROJECT` (read per call). */
  project?: string;
  /** Region, e.g. `us-central1`, or `global`. Default `$GOOGLE_CLOUD_LOCATION` (read per call). */
  region?: string;
}

/**
 * A Gemini model on Vertex AI (`api: 'google-vertex'`), authenticated with an OAuth2 access token
 * (`GOOGLE_CLOUD_ACCESS_TOKEN`, a per-call key, or `withCredentials`). `baseUrl`, when given,
 * replaces `https://{region}-aiplatform.googleapis.com`.
 *
 * @example
 * const model = googleVertex('gemini-2.5-pro', { project: 'my-project', region: 'us-central1' });
 */
export function googleVertex(id: GeminiModelId, options: GoogleVertexOptions = {}): ModelConfig {
  return buildModelConfig({ id, api: 'google-vertex', provider: 'google-vertex' }, knownModel(GEMINI_MODELS, id), options);
}

// ---------------------------------------------------------------------------------------------
// Bedrock

/** Bedrock on-demand prices, $ per million tokens, for models that are not Claude (Claude uses ANTHROPIC_MODELS). */
export const BEDROCK_MODELS: Readonly<Record<string, KnownModelInfo>> = {
  'amazon.nova-micro': { contextWindow: 128_000, maxTokens: 10_000, reasoning: false, cost: { input: 0.035, output: 0.14, cacheRead: 0.00875 } },
  'amazon.nova-lite': { contextWindow: 300_000, maxTokens: 10_000, reasoning: false, cost: { input: 0.06, output: 0.24, cacheRead: 0.015 } },
  'amazon.nova-pro': { contextWindow: 300_000, maxTokens: 10_000, reasoning: false, cost: { input: 0.8, output: 3.2, cacheRead: 0.2 } },
  'openai.gpt-oss-120b': { contextWindow: 128_000, maxTokens: 128_000, reasoning: true, cost: { input: 0.15, output: 0.6 } },
  'openai.gpt-oss-20b': { contextWindow: 128_000, maxTokens: 128_000, reasoning: true, cost: { input: 0.07, output: 0.3 } },
};

/** `us.anthropic.claude-…` → `anthropic.claude-…`: cross-region inference profiles price like the model. */
const withoutRegionPrefix = (id: string): string => id.replace(/^(us|eu|apac|jp|au|ca|us-gov|global)\./, '');

function bedrockInfo(id: string): KnownModelInfo | undefined {
  const bare = withoutRegionPrefix(id);
  if (bare.startsWith('anthropic.')) return knownModel(ANTHROPIC_MODELS, bare.slice('anthropic.'.length));
  return knownModel(BEDROCK_MODELS, bare);
}

export interface BedrockOptions extends ModelOptions {
  /** AWS region. Default `$AWS_REGION` / `$AWS_DEFAULT_REGION` / us-east-1 (read per call). */
  region?: string;
}

/**
 * A Bedrock ConverseStream model (`api: 'bedrock-converse-stream'`), by model id or inference
 * profile (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`). Auth: a Bedrock API key
 * (`AWS_BEARER_TOKEN_BEDROCK` or `apiKey`) or SigV4 credentials (see `createBedrockProvider`).
 *
 * @example
 * const model = bedrock('us.amazon.nova-micro-v1:0', { region: 'us-east-1' });
 */
export function bedrock(id: BedrockModelId, options: BedrockOptions = {}): ModelConfig {
  return buildModelConfig({ id, api: 'bedrock-converse-stream', provider: 'bedrock' }, bedrockInfo(id), options);
}
