/**
 * `phi-rx/providers`: the built-in wire protocols, the ModelConfig constructors, the registry
 * and the HTTP layer they share.
 */
export * from './registry.js';
export * from './builtin-providers.js';
export * from './message-builder.js';
export * from './models.js';
export * from './anthropic.js';
export * from './openai-completions.js';
export * from './azure-openai.js';
export type { ProviderEndpoint, ProviderHttpOptions, WireParser } from './provider-kit.js';
export * from '../sources/http/index.js';
// Part B's protocols.
export * from './openai-responses.js';
export * from './google.js';
export * from './google-vertex.js';
export * from './bedrock.js';
export * from './models-responses-gemini-bedrock.js';
export * from './model-ids.js';
export * from './credentials.js';
export * from './redacting-provider.js';
export * from '../operators/circuit-breaker.js';
