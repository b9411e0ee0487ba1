import type { ThinkingLevel } from '../types/config.js';
import type { ModelConfig, OpenAiCompat } from '../types/provider.js';

/*
 * The `compat` flags of OpenAI Chat Completions backends: how a backend differs from OpenAI
 * (max-tokens field, developer role, reasoning_effort, where reasoning arrives). Read by the
 * request builder and the stream reader of openai-completions.ts.
 */

/** What OpenAI itself accepts; backends without `compat` get {@link GENERIC_COMPAT}. */
export const OPENAI_COMPAT: OpenAiCompat = {
  maxTokensField: 'max_completion_tokens',
  supportsDeveloperRole: true,
  supportsReasoningEffort: true,
  reasoningField: 'reasoning_content',
  supportsUsageInStreaming: true,
  supportsStore: true,
};

/** The conservative flags that most OpenAI-compatible servers accept. */
export const GENERIC_COMPAT: OpenAiCompat = {
  maxTokensField: 'max_tokens',
  supportsDeveloperRole: false,
  supportsReasoningEffort: false,
  reasoningField: 'reasoning_content',
  supportsUsageInStreaming: true,
};

/** The compat flags in force for a model. */
export function compatOf(model: ModelConfig): OpenAiCompat {
  return model.compat ?? (model.provider === 'openai' ? OPENAI_COMPAT : GENERIC_COMPAT);
}

/** Spec 000 §5: `reasoning_effort` is low | medium | high; `minimal` is sent as low. */
export function reasoningEffortOf(level: ThinkingLevel): 'low' | 'medium' | 'high' | undefined {
  if (level === 'off') return undefined;
  return level === 'minimal' ? 'low' : level;
}
