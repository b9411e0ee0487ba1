import type { ModelConfig } from '../types/provider.js';
import type { CostConfig } from '../types/usage.js';

/**
 * Default base URL of OpenAI's API; the endpoints are `{baseUrl}/chat/completions` and `{baseUrl}/responses`.
 * (Here rather than in the provider modules so that model constructors do not load the HTTP stack.)
 */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** Default base URL of the Gemini API. */
export const GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com';

/** What a catalog knows about a model. */
export interface KnownModelInfo {
  contextWindow: number;
  maxTokens: number;
  reasoning: boolean;
  cost: CostConfig;
}

/** The catalog entry of `id`. Longest prefix wins, so `claude-opus-4-5` is not priced as `claude-opus-4`. */
export function knownModel(catalog: Readonly<Record<string, KnownModelInfo>>, id: string): KnownModelInfo | undefined {
  let best: string | undefined;
  for (const prefix of Object.keys(catalog)) {
    if (id.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  }
  return best === undefined ? undefined : catalog[best];
}

/** `base`, then what the catalog knows, then every field set in `options` (which wins). */
export function buildModelConfig(base: ModelConfig, known: KnownModelInfo | undefined, options: object): ModelConfig {
  const config: ModelConfig = { ...base };
  if (known) {
    config.contextWindow = known.contextWindow;
    config.maxTokens = known.maxTokens;
    config.reasoning = known.reasoning;
    config.cost = { ...known.cost };
  }
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
  }
  return config;
}
