/**
 * Model ids of the built-in catalogue, as string literal unions for editor completion. Each
 * union ends in `(string & {})`: any other id is still accepted (new models, fine-tunes,
 * deployments), it just gets no completion and no catalogue defaults. Every id listed here is
 * priced by its constructor's catalogue (test/sources/providers/model-ids.test.ts checks that).
 */

/** Anthropic Messages API ids (aliases that track the latest snapshot). */
export const ANTHROPIC_MODEL_IDS = [
  'claude-opus-4-5', 'claude-opus-4-1', 'claude-opus-4-0', 'claude-sonnet-4-5', 'claude-sonnet-4-0',
  'claude-3-7-sonnet-latest', 'claude-haiku-4-5', 'claude-3-5-haiku-latest',
] as const;

/** OpenAI ids, for Chat Completions (`openai`) and Responses (`openaiResponses`). */
export const OPENAI_MODEL_IDS = [
  'gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-4o', 'gpt-4o-mini',
  'o3', 'o3-mini', 'o4-mini',
] as const;

/** Gemini ids, for the Gemini API (`google`) and Vertex AI (`googleVertex`). */
export const GEMINI_MODEL_IDS = [
  'gemini-3-pro-preview', 'gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-2.0-flash', 'gemini-2.0-flash-lite',
] as const;

/** Bedrock model ids; cross-region inference profiles (`us.…`, `eu.…`) are accepted and priced alike. */
export const BEDROCK_MODEL_IDS = [
  'anthropic.claude-opus-4-5-20251101-v1:0', 'anthropic.claude-sonnet-4-5-20250929-v1:0', 'anthropic.claude-haiku-4-5-20251001-v1:0',
  'us.anthropic.claude-sonnet-4-5-20250929-v1:0', 'amazon.nova-micro-v1:0', 'amazon.nova-lite-v1:0', 'amazon.nova-pro-v1:0',
  'us.amazon.nova-micro-v1:0', 'openai.gpt-oss-120b-1:0', 'openai.gpt-oss-20b-1:0',
] as const;

export type AnthropicModelId = (typeof ANTHROPIC_MODEL_IDS)[number] | (string & {});
export type OpenAiModelId = (typeof OPENAI_MODEL_IDS)[number] | (string & {});
export type GeminiModelId = (typeof GEMINI_MODEL_IDS)[number] | (string & {});
export type BedrockModelId = (typeof BEDROCK_MODEL_IDS)[number] | (string & {});
