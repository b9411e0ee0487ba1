import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { decodeEventStream, type EventStreamDecoder } from '../../src/providers/bedrock-reader.js';
import { ProviderError } from '../../src/types/errors.js';

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const decoder = codec as unknown as EventStreamDecoder;
const frame = (eventType: string, payload: object): Uint8Array =>
  codec.encode({
    headers: { ':event-type': { type: 'string', value: eventType }, ':message-type': { type: 'string', value: 'event' }, ':content-type': { type: 'string', value: 'application/json' } },
    body: fromUtf8(JSON.stringify(payload)),
  });

const body = Buffer.concat([frame('messageStart', { role: 'assistant' }), frame('contentBlockDelta', { delta: { text: 'x'.repeat(5000) } }), frame('messageStop', { stopReason: 'end_turn' })]);
const decode = (chunks: Uint8Array[], max?: number) => lastValueFrom(from(chunks).pipe(decodeEventStream(decoder, 'bedrock', [], max), toArray()));
const cut = (bytes: Uint8Array, size: number): Uint8Array[] => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe('decodeEventStream', () => {
  it('cuts the same frames whatever the chunks: one byte, three bytes (preludes split), all at once', async () => {
    const whole = await decode([body]);
    expect(whole.map((m) => m.type)).toEqual(['messageStart', 'contentBlockDelta', 'messageStop']);
    expect(await decode(cut(body, 1))).toEqual(whole);
    expect(await decode(cut(body, 3))).toEqual(whole);
  });

  it('refuses a frame whose prelude claims more than maxFrameBytes, from its first 4 bytes', async () => {
    const error = await decode(cut(body, 2), 1024).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toContain('over 1024 bytes without completing an event');
  });

  it('a body that ends inside a frame is a retryable network error', async () => {
    const error = await decode([body.subarray(0, body.length - 3)]).catch((e: unknown) => e);
    expect((error as ProviderError).kind).toBe('network');
    const last = frame('messageStop', { stopReason: 'end_turn' }).length;
    expect((error as ProviderError).message).toBe(`bedrock stream ended inside an event-stream frame (${last - 3} bytes left)`);
  });
});
