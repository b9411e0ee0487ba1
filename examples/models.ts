/**
 * Which real model the examples use: the first API key found in the environment picks the
 * provider (ANTHROPIC_API_KEY, then OPENAI_API_KEY, then GEMINI_API_KEY); PHI_RX_LIVE_MODEL
 * overrides the model id. Shared by `examples/live.ts` and `npm start` (examples/quickstart.ts).
 */
import { anthropic, google, openai, type ModelConfig } from 'phi-rx';

/** The model for the first key found in `env`, or undefined when there is none. */
export function liveModel(env: Record<string, string | undefined> = process.env): ModelConfig | undefined {
  const override = env['PHI_RX_LIVE_MODEL'];
  if (env['ANTHROPIC_API_KEY']) return anthropic(override ?? 'claude-haiku-4-5', { maxTokens: 1024 });
  if (env['OPENAI_API_KEY']) return openai(override ?? 'gpt-4o-mini', { maxTokens: 1024 });
  if (env['GEMINI_API_KEY']) return google(override ?? 'gemini-2.5-flash', { maxTokens: 1024 });
  return undefined;
}
