/**
 * Every built-in provider redacts its credential and every header value the model config adds
 * from its errors, when an endpoint's error body echoes the request headers (over loopback).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastValueFrom } from 'rxjs';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError, anthropic, bedrock, google, openai, openaiResponses, type ModelConfig, type StreamRequest } from '../../src/index.js';
import {
  createAnthropicProvider,
  createBedrockProvider,
  createGoogleProvider,
  createOpenAiCompletionsProvider,
  createOpenAiResponsesProvider,
  type ProviderHttpOptions,
} from '../../src/providers/index.js';
import type { Provider } from '../../src/types/provider.js';
import { DEFAULT_CACHE_CONFIG } from '../../src/types/config.js';

const KEY = 'planted-KEY-0123456789abcdef';
const HEADER = 'planted-HEADER-fedcba9876543210';
const BEARER_HEADER = 'planted-PROXY-TOKEN-55aa55aa55aa';
const headers = { 'x-gateway-key': HEADER, 'proxy-authorization': `Bearer ${BEARER_HEADER}` };

let server: Server;
let url: string;
const dispatcher = new Agent();
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(400, { 'content-type': 'application/json' });
    // Each header value on its own and the whole set: the token after "Bearer" must go too.
    const values = Object.values(req.headers).join(' | ');
    res.end(JSON.stringify({ error: { message: `bad request: ${values} ${JSON.stringify(req.headers)}` } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await dispatcher.close();
  server.close();
});

const cases: Array<[string, (http: ProviderHttpOptions) => Provider, () => ModelConfig]> = [
  ['anthropic', createAnthropicProvider, () => anthropic('claude-sonnet-4-5', { baseUrl: url, apiKey: KEY, headers })],
  ['openai completions', createOpenAiCompletionsProvider, () => openai('gpt-4o-mini', { baseUrl: url, apiKey: KEY, headers })],
  ['openai responses', createOpenAiResponsesProvider, () => openaiResponses('gpt-4o-mini', { baseUrl: url, apiKey: KEY, headers })],
  ['google', createGoogleProvider, () => google('gemini-2.5-flash', { baseUrl: url, apiKey: KEY, headers })],
  ['bedrock', (http) => createBedrockProvider(http), () => bedrock('anthropic.claude-sonnet-4-5-20250929-v1:0', { baseUrl: url, apiKey: KEY, headers })],
];

describe('provider errors that echo the request', () => {
  for (const [name, create, model] of cases) {
    it(`${name}: no key, no header value in the error`, async () => {
      const request: StreamRequest = { model: model(), systemPrompt: '', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 0 }], tools: [], thinkingLevel: 'off', cacheConfig: DEFAULT_CACHE_CONFIG };
      const error = await lastValueFrom(create({ dispatcher })(request, {})).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      const message = (error as ProviderError).message;
      expect(message).toContain('[REDACTED]');
      for (const secret of [KEY, HEADER, BEARER_HEADER]) expect(message).not.toContain(secret);
    });
  }
});
