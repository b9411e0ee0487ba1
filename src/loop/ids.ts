import type { ModelConfig } from '../types/provider.js';

const HEX = '0123456789abcdef';
/** Random bytes for 64 ids, drawn from the Web Crypto API (`globalThis.crypto`: Node ≥ 19, browsers, Deno, Bun, workers). */
const randomBytes = new Uint8Array(16 * 64);
let nextByte = randomBytes.length;
/** The 36 character codes of the id being written. */
const idCodes: number[] = new Array<number>(36).fill(0);

/**
 * A random (version 4) UUID, written as one flat 36-character string. Node's `crypto.randomUUID()`
 * builds a rope of some twenty concatenated pieces (≈600 bytes), which had to be copied flat before
 * the agent kept it and put it in every loop id; this costs a quarter of that (bytes drawn from the
 * Web Crypto API 64 ids at a time).
 */
export const defaultIds = (): string => {
  if (nextByte === randomBytes.length) {
    globalThis.crypto.getRandomValues(randomBytes);
    nextByte = 0;
  }
  let at = 0;
  for (let i = 0; i < 16; i++) {
    let byte = randomBytes[nextByte + i]!;
    if (i === 6) byte = (byte & 0x0f) | 0x40; // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80; // variant 10xx
    if (i === 4 || i === 6 || i === 8 || i === 10) idCodes[at++] = 45; // '-'
    idCodes[at++] = HEX.charCodeAt(byte >> 4);
    idCodes[at++] = HEX.charCodeAt(byte & 15);
  }
  nextByte += 16;
  return String.fromCharCode.apply(null, idCodes);
};

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
