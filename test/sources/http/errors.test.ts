import { describe, expect, it } from 'vitest';
import {
  classifyHttpError,
  classifyNetworkError,
  classifyStreamError,
  redactSecrets,
  retryAfterMs,
  providerMessageOf,
} from '../../../src/sources/http/errors.js';
import { ProviderError } from '../../../src/types/errors.js';

const anthropicError = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message } });

describe('classifyHttpError', () => {
  it('429 is rateLimited with retry-after seconds', () => {
    const e = classifyHttpError({ status: 429, headers: { 'Retry-After': '7' }, body: anthropicError('rate_limit_error', 'slow down'), provider: 'anthropic' });
    expect(e.kind).toBe('rateLimited');
    expect(e.retryAfterMs).toBe(7000);
    expect(e.status).toBe(429);
    expect(e.provider).toBe('anthropic');
    expect(e.message).toContain('slow down');
    expect(e.retryable).toBe(true);
  });

  it('retry-after-ms wins over retry-after', () => {
    expect(retryAfterMs({ 'retry-after-ms': '1500', 'retry-after': '9' })).toBe(1500);
  });

  it('retry-after as an HTTP date is relative to now', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(retryAfterMs({ 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' }, now)).toBe(30_000);
    expect(retryAfterMs({ 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' }, now)).toBe(0);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs({}, now)).toBeUndefined();
  });

  it('529 and an "overloaded" 503 are rateLimited', () => {
    expect(classifyHttpError({ status: 529, body: anthropicError('overloaded_error', 'Overloaded'), provider: 'a' }).kind).toBe('rateLimited');
    expect(classifyHttpError({ status: 503, body: 'The engine is currently overloaded', provider: 'a' }).kind).toBe('rateLimited');
  });

  it('401 and 403 are auth, not retryable', () => {
    for (const status of [401, 403]) {
      const e = classifyHttpError({ status, body: '{"error":{"message":"invalid x-api-key"}}', provider: 'anthropic' });
      expect(e.kind).toBe('auth');
      expect(e.retryable).toBe(false);
    }
  });

  it('400 and 413 with an overflow phrase are contextOverflow; without one, api', () => {
    const body = anthropicError('invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum');
    expect(classifyHttpError({ status: 400, body, provider: 'anthropic' }).kind).toBe('contextOverflow');
    expect(classifyHttpError({ status: 413, body: 'Request too large', provider: 'x' }).kind).toBe('contextOverflow');
    expect(classifyHttpError({ status: 400, body: '{"error":{"message":"bad tool schema"}}', provider: 'x' }).kind).toBe('api');
    expect(classifyHttpError({ status: 404, body: 'not found', provider: 'x' }).kind).toBe('api');
  });

  it('5xx and 408 are network (retryable)', () => {
    for (const status of [500, 502, 503, 504, 408]) {
      const e = classifyHttpError({ status, body: 'upstream error', provider: 'x' });
      expect(e.kind).toBe('network');
      expect(e.retryable).toBe(true);
    }
  });

  it('never puts the API key in the message', () => {
    const key = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz';
    const e = classifyHttpError({ status: 401, body: `{"error":{"message":"invalid key ${key}"}}`, provider: 'anthropic', secrets: [key] });
    expect(e.message).not.toContain(key);
    expect(e.message).toContain('[REDACTED]');
  });
});

describe('classifyStreamError', () => {
  it('maps error types like the statuses they stand for', () => {
    expect(classifyStreamError({ message: 'Overloaded', type: 'overloaded_error', provider: 'a' }).kind).toBe('rateLimited');
    expect(classifyStreamError({ message: 'Internal server error', type: 'api_error', provider: 'a' }).kind).toBe('network');
    expect(classifyStreamError({ message: "This model's maximum context length is 8192 tokens", provider: 'o' }).kind).toBe('contextOverflow');
    expect(classifyStreamError({ message: 'bad', status: 401, provider: 'o' }).kind).toBe('auth');
    expect(classifyStreamError({ message: 'tool_use_failed', type: 'invalid_request_error', provider: 'groq' }).kind).toBe('api');
  });
});

describe('classifyNetworkError', () => {
  it('connection failures are network; others are other; ProviderErrors pass through', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(classifyNetworkError(refused, 'x').kind).toBe('network');
    expect(classifyNetworkError(new TypeError('fetch failed', { cause: Object.assign(new Error('read'), { code: 'ECONNRESET' }) }), 'x').kind).toBe('network');
    expect(classifyNetworkError(new Error('socket hang up'), 'x').kind).toBe('network');
    expect(classifyNetworkError(new Error('weird'), 'x').kind).toBe('other');
    const original = ProviderError.auth('no');
    expect(classifyNetworkError(original, 'x')).toBe(original);
  });
});

describe('redactSecrets / providerMessageOf', () => {
  it('redacts query keys, bearer tokens and key-shaped strings', () => {
    const out = redactSecrets('GET /v1beta/models?alt=sse&key=AIzaSyA-1234567890abcdefghijklmnopqrstu Bearer abcdefghijk sk-proj-0123456789abcdefXYZ');
    expect(out).not.toMatch(/AIza|abcdefghijk|sk-proj/);
  });
  it('reads error.message, message, or raw text', () => {
    expect(providerMessageOf('{"error":{"message":"m1"}}')).toBe('m1');
    expect(providerMessageOf('[{"error":{"code":400,"message":"m2"}}]')).toBe('m2');
    expect(providerMessageOf('{"message":"m3"}')).toBe('m3');
    expect(providerMessageOf('plain')).toBe('plain');
  });
});
