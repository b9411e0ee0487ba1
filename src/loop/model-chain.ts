import type { ModelConfig, Provider } from '../types/provider.js';
import type { AssistantMessage } from '../types/message.js';
import type { CostConfig } from '../types/usage.js';
import { AgentError } from '../types/errors.js';
import { callModelWithFallback, type ChainedModel, modelName } from './stages/call-model-with-fallback.js';
import type { CallModelOptions } from './stages/call-model.js';
import type { LoopStage } from './kernel/loop-state.js';
import { defaultProviderRegistry } from '../providers/registry.js';
import type { AgentLoopConfig } from './config.js';
import { kindOf } from './check-prompts.js';

/**
 * One entry of a `models` chain: a ModelConfig (its provider comes from the registry, as for
 * `model`), or a model with the Provider that serves it.
 */
export type ModelChoice = ModelConfig | { readonly model: ModelConfig; readonly provider: Provider };

/** The model of a chain entry. */
export function modelOf(choice: ModelChoice): ModelConfig {
  return isPair(choice) ? choice.model : choice;
}


/**
 * Checks `config.models` against `config.model` and `config.provider`: an array of one or more
 * ModelConfigs or `{ model, provider }` pairs, whose first entry is the primary, `config.model`
 * itself (same provider, id and api). A pair in first place brings the primary's provider, so
 * `config.provider` must then be absent or that same provider. Throws AgentError('InvalidConfig')
 * naming the entry (`config.models[1].provider: …`).
 *
 * @example
 * checkModelChain([gpt, { model: claude, provider: anthropic }], gpt, undefined); // passes
 * checkModelChain([claude, gpt], gpt, undefined); // throws: config.models[0]: the primary must be config.model …
 */
export function checkModelChain(models: unknown, primary: ModelConfig, primaryProvider: Provider | undefined): void {
  if (!Array.isArray(models)) throw invalid('models', `expected an array of models ([primary, ...fallbacks]), got ${kindOf(models)}`);
  if (models.length === 0) throw invalid('models', 'expected at least one model (the primary, config.model)');
  models.forEach((entry: unknown, i) => checkChoice(entry, `models[${i}]`));
  const first = models[0] as ModelChoice;
  const model = modelOf(first);
  if (model.provider !== primary.provider || model.id !== primary.id || model.api !== primary.api) {
    throw invalid('models[0]', `the primary must be config.model (${modelName(primary)}, api ${primary.api}), got ${modelName(model)} (api ${model.api}); put config.model first or leave models out`);
  }
  if (isPair(first) && primaryProvider !== undefined && primaryProvider !== first.provider) {
    throw invalid('models[0].provider', 'differs from config.provider: give the primary\'s provider in one place');
  }
}

function checkChoice(entry: unknown, at: string): void {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    throw invalid(at, `expected a ModelConfig ({ id, api, provider }) or { model, provider }, got ${kindOf(entry)}`);
  }
  const record = entry as Record<string, unknown>;
  if ('model' in record) {
    if (typeof record.provider !== 'function') throw invalid(`${at}.provider`, `expected a Provider function, got ${kindOf(record.provider)}`);
    checkModel(record.model, `${at}.model`);
  } else {
    checkModel(entry, at);
  }
}

function checkModel(value: unknown, at: string): void {
  if (value === null || typeof value !== 'object') throw invalid(at, `expected a ModelConfig ({ id, api, provider }), got ${kindOf(value)}`);
  const model = value as Record<string, unknown>;
  for (const field of ['id', 'api', 'provider'] as const) {
    if (typeof model[field] !== 'string' || model[field] === '') throw invalid(`${at}.${field}`, `expected a non-empty string, got ${kindOf(model[field])}`);
  }
}

/**
 * The chain with a Provider for every entry: a pair's own, the primary's (`config.provider` or the
 * registry's) for a plain first entry, `resolve` (the registry) for the others.
 */
export function resolveModelChain(models: readonly ModelChoice[], primaryProvider: Provider, resolve: (model: ModelConfig) => Provider): ChainedModel[] {
  return models.map((choice, i) => {
    if (isPair(choice)) return { model: choice.model, provider: choice.provider };
    return { model: choice, provider: i === 0 ? primaryProvider : resolve(choice) };
  });
}

function isPair(choice: ModelChoice): choice is { readonly model: ModelConfig; readonly provider: Provider } {
  return 'model' in choice && typeof (choice as { model?: unknown }).model === 'object';
}

function invalid(field: string, reason: string): AgentError {
  return new AgentError('InvalidConfig', `config.${field}: ${reason}`);
}

/**
 * The loop's model-call stage for a config with `models`: {@link callModelWithFallback} over the
 * resolved chain, with the call options the loop would give `callModel` and the config's `getApiKey`.
 * A context overflow falls back once it is beyond recovery: no `contextConfig`, the one
 * compaction-and-retry spent (`overflowRecovered`), or part of the message already shown.
 */
export function fallbackModels(config: AgentLoopConfig, options: CallModelOptions): LoopStage {
  const { provider, ...callOptions } = options;
  const registry = (model: ModelConfig): Provider => defaultProviderRegistry().resolve(model);
  const compacts = config.contextConfig !== undefined;
  return callModelWithFallback({
    ...callOptions,
    models: resolveModelChain(config.models ?? [config.model], provider, registry),
    overflowFallsBack: (failed) => !compacts || failed.overflowRecovered === true || failed.partial !== undefined,
    ...(config.getApiKey ? { getApiKey: config.getApiKey } : {}),
  });
}

/**
 * The cost limit's prices for a config: `model.cost`, or with a chain, the cost of the model that
 * answered each turn (by provider and id), so that turns served by a fallback are priced as such.
 */
export function pricingOf(config: AgentLoopConfig): { pricing?: CostConfig | ((message: AssistantMessage) => CostConfig | undefined) } {
  const models = config.models;
  if (!models) return config.model.cost ? { pricing: config.model.cost } : {};
  const chain = models.map(modelOf);
  return { pricing: (message) => chain.find((m) => m.provider === message.provider && m.id === message.model)?.cost ?? config.model.cost };
}
