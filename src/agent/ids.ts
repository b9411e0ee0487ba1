import type { ModelConfig } from '../types/provider.js';

/**
 * A random UUID from the Web Crypto API (`globalThis.crypto`): Node ≥ 19, browsers, Deno, Bun, workers.
 * Node builds it as a rope of some twenty concatenated pieces (≈600 bytes); joined anew it is one
 * flat string (≈80 bytes) before the agent keeps it and puts it in every loop id.
 */
export const defaultIds = (): string => globalThis.crypto.randomUUID().split('-').join('-');

/** The stable `{configId}` segment of a loop id: the config's own id, else provider-model. */
export function configSegment(config: { configId?: string; model: ModelConfig }): string {
  const raw = config.configId ?? `${config.model.provider}-${config.model.id}`;
  return raw.replace(/[^a-zA-Z0-9_-]+/g, '-');
}

export function loopIdFor(sessionId: string, segment: string, n: number): string {
  return `${sessionId}.${segment}.${n}`;
}

/** An RFC 3339 tag for Rerun / Branch continuations. */
export function continuationTag(now: number): string {
  return new Date(now).toISOString();
}
