import { runtimeEnv } from './runtime-env.js';
import type { CostConfig } from '../types/usage.js';
import type { ModelConfig, OpenAiCompat } from '../types/provider.js';
import { buildModelConfig, knownModel } from './model-catalog.js';
import type { KnownModelInfo } from './model-catalog.js';
import type { AnthropicModelId, OpenAiModelId } from './model-ids.js';

/**
 * ModelConfig constructors for Anthropic, OpenAI Chat Completions, Azure OpenAI and the
 * OpenAI-compatible backends. Each fills in the wire protocol, provider id, base URL, compat
 * flags and, for models it knows, context window, output limit and price per million tokens, so
 * that `Usage.estimatedCost` can price a run. Anything passed in `options` wins.
 *
 * API keys are not read here: providers resolve them per call (the call's `getApiKey`, the
 * config's `apiKey`, else the provider's environment variable), so configs can be logged and
 * saved without carrying secrets.
 */

/** What every constructor accepts; set fields override the defaults. */
export interface ModelOptions {
  name?: string;
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  maxTokens?: number;
  contextWindow?: number;
  cost?: CostConfig;
  reasoning?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Anthropic

/** Anthropic list prices, $ per million tokens (cache write = 5-minute TTL). */
export const ANTHROPIC_MODELS: Readonly<Record<string, KnownModelInfo>> = {
  'claude-opus-4-5': { contextWindow: 200_000, maxTokens: 64_000, reasoning: true, cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
  'claude-opus-4-1': { contextWindow: 200_000, maxTokens: 32_000, reasoning: true, cost: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 } },
  'claude-opus-4': { contextWindow: 200_000, maxTokens: 32_000, reasoning: true, cost: { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 } },
  'claude-sonnet-4': { contextWindow: 200_000, maxTokens: 64_000, reasoning: true, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
  'claude-3-7-sonnet': { contextWindow: 200_000, maxTokens: 64_000, reasoning: true, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
  'claude-haiku-4-5': { contextWindow: 200_000, maxTokens: 64_000, reasoning: true, cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } },
  'claude-3-5-haiku': { contextWindow: 200_000, maxTokens: 8_192, reasoning: false, cost: { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 } },
};

/**
 * An Anthropic Messages API model (`api: 'anthropic-messages'`). Key: `ANTHROPIC_API_KEY`.
 *
 * @example
 * const model = anthropic('claude-sonnet-4-5', { maxTokens: 4096 });
 */
export function anthropic(id: AnthropicModelId, options: ModelOptions = {}): ModelConfig {
  return buildModelConfig(
    { id, api: 'anthropic-messages', provider: 'anthropic', baseUrl: 'https://api.anthropic.com' },
    knownModel(ANTHROPIC_MODELS, id),
    options,
  );
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

/** OpenAI list prices, $ per million tokens (cacheRead = cached input). */
export const OPENAI_MODELS: Readonly<Record<string, KnownModelInfo>> = {
  'gpt-5': { contextWindow: 400_000, maxTokens: 128_000, reasoning: true, cost: { input: 1.25, output: 10, cacheRead: 0.125 } },
  'gpt-5-mini': { contextWindow: 400_000, maxTokens: 128_000, reasoning: true, cost: { input: 0.25, output: 2, cacheRead: 0.025 } },
  'gpt-5-nano': { contextWindow: 400_000, maxTokens: 128_000, reasoning: true, cost: { input: 0.05, output: 0.4, cacheRead: 0.005 } },
  'gpt-4.1': { contextWindow: 1_047_576, maxTokens: 32_768, reasoning: false, cost: { input: 2, output: 8, cacheRead: 0.5 } },
  'gpt-4.1-mini': { contextWindow: 1_047_576, maxTokens: 32_768, reasoning: false, cost: { input: 0.4, output: 1.6, cacheRead: 0.1 } },
  'gpt-4.1-nano': { contextWindow: 1_047_576, maxTokens: 32_768, reasoning: false, cost: { input: 0.1, output: 0.4, cacheRead: 0.025 } },
  'gpt-4o': { contextWindow: 128_000, maxTokens: 16_384, reasoning: false, cost: { input: 2.5, output: 10, cacheRead: 1.25 } },
  'gpt-4o-mini': { contextWindow: 128_000, maxTokens: 16_384, reasoning: false, cost: { input: 0.15, output: 0.6, cacheRead: 0.075 } },
  o3: { contextWindow: 200_000, maxTokens: 100_000, reasoning: true, cost: { input: 2, output: 8, cacheRead: 0.5 } },
  'o3-mini': { contextWindow: 200_000, maxTokens: 100_000, reasoning: true, cost: { input: 1.1, output: 4.4, cacheRead: 0.55 } },
  'o4-mini': { contextWindow: 200_000, maxTokens: 100_000, reasoning: true, cost: { input: 1.1, output: 4.4, cacheRead: 0.275 } },
};

/** True for OpenAI's reasoning families (o1, o3, o4, gpt-5), which take different parameters. */
export function isOpenAiReasoningModel(id: string): boolean {
  return /^(o\d|gpt-5)/.test(id);
}

/**
 * Compat flags for an OpenAI model: reasoning models get `max_completion_tokens`, the
 * `developer` role and `reasoning_effort`; older chat models (gpt-4o, gpt-4.1), which reject
 * `reasoning_effort`, get `max_tokens` and `system`.
 */
export function openAiCompatFor(id: string): OpenAiCompat {
  const reasoning = isOpenAiReasoningModel(id);
  return {
    maxTokensField: reasoning ? 'max_completion_tokens' : 'max_tokens',
    supportsDeveloperRole: reasoning,
    supportsReasoningEffort: reasoning,
    reasoningField: 'reasoning_content',
    supportsUsageInStreaming: true,
    supportsStore: true,
  };
}

/**
 * An OpenAI Chat Completions model (`api: 'openai-completions'`). Key: `OPENAI_API_KEY`.
 *
 * @example
 * const model = openai('gpt-4o-mini');
 */
export function openai(id: OpenAiModelId, options: ModelOptions & { compat?: Partial<OpenAiCompat> } = {}): ModelConfig {
  const { compat, ...rest } = options;
  return buildModelConfig(
    {
      id,
      api: 'openai-completions',
      provider: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      compat: { ...openAiCompatFor(id), ...compat },
    },
    knownModel(OPENAI_MODELS, id),
    rest,
  );
}

// ---------------------------------------------------------------------------------------------
// Azure OpenAI

export const AZURE_OPENAI_DEFAULT_API_VERSION = '2025-01-01-preview';

export interface AzureOpenAiOptions extends ModelOptions {
  /** Resource name: the `{resource}` of `https://{resource}.openai.azure.com`. Default `$AZURE_OPENAI_RESOURCE_NAME`. */
  resource?: string;
  /** `api-version` query parameter. Default {@link AZURE_OPENAI_DEFAULT_API_VERSION} for deployment URLs. */
  apiVersion?: string;
  /**
   * Wire format. `responses` (default, spec 000 §5) speaks the Responses API; `chat` speaks
   * Chat Completions. The choice is recorded as the presence of `compat` (Chat Completions
   * flags) on the config: a config with `compat` uses Chat Completions.
   */
  wire?: 'responses' | 'chat';
  /** Overrides of the Chat Completions flags (wire `chat` only). */
  compat?: Partial<OpenAiCompat>;
  /** Environment read for the resource name; default `process.env`. */
  env?: Record<string, string | undefined>;
}

/**
 * An Azure OpenAI deployment (`api: 'azure-openai'`), authenticated with the `api-key` header
 * (`AZURE_OPENAI_API_KEY`). The base URL is `options.baseUrl`, else
 * `https://{resource}.openai.azure.com/openai/deployments/{deployment}` with `api-version`.
 * For the v1 API pass `baseUrl: 'https://{resource}.openai.azure.com/openai/v1'` and no apiVersion.
 *
 * @example
 * const model = azureOpenai('my-gpt-5-mini', { resource: 'contoso', wire: 'chat', reasoning: true });
 */
export function azureOpenai(deployment: string, options: AzureOpenAiOptions = {}): ModelConfig {
  const { resource, apiVersion, wire = 'responses', compat, env = runtimeEnv(), ...rest } = options;
  const resourceName = resource ?? env['AZURE_OPENAI_RESOURCE_NAME'];
  const base: ModelConfig = { id: deployment, api: 'azure-openai', provider: 'azure-openai' };
  if (rest.baseUrl === undefined && resourceName) {
    base.baseUrl = `https://${resourceName}.openai.azure.com/openai/deployments/${encodeURIComponent(deployment)}`;
    base.apiVersion = apiVersion ?? AZURE_OPENAI_DEFAULT_API_VERSION;
  } else if (apiVersion !== undefined) {
    base.apiVersion = apiVersion;
  }
  if (wire === 'chat') {
    base.compat = {
      maxTokensField: 'max_completion_tokens',
      supportsDeveloperRole: false,
      supportsReasoningEffort: rest.reasoning ?? false,
      reasoningField: 'none',
      supportsUsageInStreaming: true,
      ...compat,
    };
  }
  return buildModelConfig(base, knownModel(OPENAI_MODELS, deployment), rest);
}

// ---------------------------------------------------------------------------------------------
// OpenAI-compatible backends

export type OpenAiCompatiblePreset =
  | 'xai'
  | 'groq'
  | 'cerebras'
  | 'mistral'
  | 'deepseek'
  | 'openrouter'
  | 'together'
  | 'fireworks'
  | 'ollama'
  | 'vllm'
  | 'lmstudio'
  | 'zai'
  | 'llamacpp';

export interface OpenAiCompatiblePresetInfo {
  provider: string;
  baseUrl: string;
  compat: OpenAiCompat;
  /** Where the key is read from; undefined for local servers that need none. */
  apiKeyEnv?: string;
  /** Prices of models this backend is known to serve, $ per million tokens. */
  models?: Readonly<Record<string, KnownModelInfo>>;
}

const compat = (overrides: Partial<OpenAiCompat>): OpenAiCompat => ({
  maxTokensField: 'max_tokens',
  supportsDeveloperRole: false,
  supportsReasoningEffort: false,
  reasoningField: 'reasoning_content',
  supportsUsageInStreaming: true,
  ...overrides,
});

/**
 * Base URL and compat flags per backend (spec 000 §5). Where reasoning arrives is a hint: the
 * parser reads `reasoning_content` and `reasoning` alike and prefers the named one.
 */
export const OPENAI_COMPATIBLE_PRESETS: Readonly<Record<OpenAiCompatiblePreset, OpenAiCompatiblePresetInfo>> = {
  xai: { provider: 'xai', baseUrl: 'https://api.x.ai/v1', apiKeyEnv: 'XAI_API_KEY', compat: compat({ reasoningField: 'reasoning' }) },
  groq: { provider: 'groq', baseUrl: 'https://api.groq.com/openai/v1', apiKeyEnv: 'GROQ_API_KEY', compat: compat({ reasoningField: 'reasoning' }) },
  cerebras: { provider: 'cerebras', baseUrl: 'https://api.cerebras.ai/v1', apiKeyEnv: 'CEREBRAS_API_KEY', compat: compat({ reasoningField: 'reasoning' }) },
  // Mistral rejects unknown fields such as stream_options; it sends usage on its own.
  mistral: { provider: 'mistral', baseUrl: 'https://api.mistral.ai/v1', apiKeyEnv: 'MISTRAL_API_KEY', compat: compat({ reasoningField: 'none', supportsUsageInStreaming: false }) },
  deepseek: {
    provider: 'deepseek',
    baseUrl: 'https://api.deepseek.com/v1',
    apiKeyEnv: 'DEEPSEEK_API_KEY',
    compat: compat({ reasoningField: 'reasoning_content' }),
    models: {
      'deepseek-chat': { contextWindow: 128_000, maxTokens: 8_192, reasoning: false, cost: { input: 0.28, output: 0.42, cacheRead: 0.028 } },
      'deepseek-reasoner': { contextWindow: 128_000, maxTokens: 65_536, reasoning: true, cost: { input: 0.28, output: 0.42, cacheRead: 0.028 } },
    },
  },
  openrouter: { provider: 'openrouter', baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'OPENROUTER_API_KEY', compat: compat({ reasoningField: 'reasoning' }) },
  together: { provider: 'together', baseUrl: 'https://api.together.xyz/v1', apiKeyEnv: 'TOGETHER_API_KEY', compat: compat({ reasoningField: 'reasoning' }) },
  fireworks: { provider: 'fireworks', baseUrl: 'https://api.fireworks.ai/inference/v1', apiKeyEnv: 'FIREWORKS_API_KEY', compat: compat({ supportsReasoningEffort: true }) },
  ollama: { provider: 'ollama', baseUrl: 'http://localhost:11434/v1', compat: compat({ reasoningField: 'reasoning' }) },
  vllm: { provider: 'vllm', baseUrl: 'http://localhost:8000/v1', compat: compat({}) },
  lmstudio: { provider: 'lmstudio', baseUrl: 'http://localhost:1234/v1', compat: compat({}) },
  zai: { provider: 'zai', baseUrl: 'https://api.z.ai/api/paas/v4', apiKeyEnv: 'ZAI_API_KEY', compat: compat({}) },
  llamacpp: { provider: 'llamacpp', baseUrl: 'http://localhost:8080/v1', compat: compat({}) },
};

/** A backend not in the presets: name its provider id and base URL, adjust the flags. */
export interface OpenAiCompatibleOptions extends ModelOptions {
  id: string;
  provider: string;
  baseUrl: string;
  compat?: Partial<OpenAiCompat>;
}

/**
 * A model on an OpenAI-compatible backend (`api: 'openai-completions'`): a preset name and a
 * model id, or a full description of another backend.
 *
 * @example
 * openaiCompatible('groq', 'moonshotai/kimi-k2-instruct-0905');
 * openaiCompatible('ollama', 'qwen3:8b', { reasoning: true });
 * openaiCompatible({ id: 'my-model', provider: 'acme', baseUrl: 'https://llm.acme.test/v1' });
 */
export function openaiCompatible(preset: OpenAiCompatiblePreset, id: string, options?: ModelOptions & { compat?: Partial<OpenAiCompat> }): ModelConfig;
export function openaiCompatible(options: OpenAiCompatibleOptions): ModelConfig;
export function openaiCompatible(
  presetOrOptions: OpenAiCompatiblePreset | OpenAiCompatibleOptions,
  id?: string,
  options: ModelOptions & { compat?: Partial<OpenAiCompat> } = {},
): ModelConfig {
  if (typeof presetOrOptions !== 'string') {
    const { id: modelId, provider, baseUrl, compat: overrides, ...rest } = presetOrOptions;
    return buildModelConfig({ id: modelId, api: 'openai-completions', provider, baseUrl, compat: compat(overrides ?? {}) }, undefined, rest);
  }
  const info = OPENAI_COMPATIBLE_PRESETS[presetOrOptions];
  if (!info) throw new TypeError(`Unknown OpenAI-compatible preset "${String(presetOrOptions)}"; known: ${Object.keys(OPENAI_COMPATIBLE_PRESETS).join(', ')}`);
  if (!id) throw new TypeError(`openaiCompatible('${presetOrOptions}', id): the model id is required`);
  const { compat: overrides, ...rest } = options;
  return buildModelConfig(
    { id, api: 'openai-completions', provider: info.provider, baseUrl: info.baseUrl, compat: { ...info.compat, ...overrides } },
    info.models ? knownModel(info.models, id) : undefined,
    rest,
  );
}
