/**
 * Which real model the examples use: the first API key found in the environment picks the
 * provider (ANTHROPIC_API_KEY, then OPENAI_API_KEY, then GEMINI_API_KEY); PHI_RX_LIVE_MODEL
 * overrides the model id. `examples/live.ts` and `npm start` (examples/quickstart.ts) carry a copy.
 * PHI_RX_PROVIDER (anthropic | openai | google) picks the provider whether or not its key is set
 * (a missing key is then the run's error), and PHI_RX_BASE_URL points it at another endpoint.
 */
import { pathToFileURL } from 'node:url';
import { anthropic, google, openai, type ModelConfig } from 'phi-rx';

/** The model for the first key found in `env`, or undefined when there is none. */
export function liveModel(env: Record<string, string | undefined> = process.env): ModelConfig | undefined {
  const override = env['PHI_RX_LIVE_MODEL'];
  const options = { maxTokens: 1024, ...(env['PHI_RX_BASE_URL'] ? { baseUrl: env['PHI_RX_BASE_URL'] } : {}) };
  const chosen = env['PHI_RX_PROVIDER'];
  if (chosen !== undefined && !['anthropic', 'openai', 'google'].includes(chosen)) {
    throw new Error(`PHI_RX_PROVIDER must be anthropic, openai or google, not "${chosen}"`);
  }
  if (chosen === 'anthropic' || (!chosen && env['ANTHROPIC_API_KEY'])) return anthropic(override ?? 'claude-haiku-4-5', options);
  if (chosen === 'openai' || (!chosen && env['OPENAI_API_KEY'])) return openai(override ?? 'gpt-4o-mini', options);
  if (chosen === 'google' || (!chosen && env['GEMINI_API_KEY'])) return google(override ?? 'gemini-2.5-flash', options);
  return undefined;
}

// `npm run example examples/models.ts`: which model this environment would use, with its catalogue defaults.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const model = liveModel();
  if (!model) console.log('No API key set (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY): the examples use the scripted provider.');
  else console.log(`${model.provider} / ${model.id}: context ${model.contextWindow ?? '?'} tokens, $${model.cost?.input ?? '?'} / $${model.cost?.output ?? '?'} per million tokens in / out`);
  for (const example of [anthropic('claude-sonnet-4-5'), openai('gpt-5-mini'), google('gemini-2.5-flash')]) {
    console.log(`  ${example.api.padEnd(22)} ${example.id.padEnd(18)} context ${example.contextWindow}, $${example.cost?.input} / $${example.cost?.output}`);
  }
}
