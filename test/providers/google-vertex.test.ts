import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createGoogleVertexProvider, googleVertexProvider, vertexStreamUrl } from '../../src/providers/google-vertex.js';
import type { ModelConfig } from '../../src/types/provider.js';
import { fixtureBody, fixturesAvailable, loadManifest, readCassette } from './fixture-server.js';
import { expectMatchesGoogleFacts, request, run, runToError, useFixtureServer, user } from './harness.js';

const TOKEN = 'ya29.test-oauth-token-0123456789';
const FAMILY = 'google';

const model = (baseUrl: string | undefined, overrides: Partial<ModelConfig> = {}): ModelConfig => ({
  id: 'gemini-2.5-flash',
  api: 'google-vertex',
  provider: 'google-vertex',
  ...(baseUrl ? { baseUrl } : {}),
  project: 'my-project',
  region: 'us-east5',
  apiKey: TOKEN,
  ...overrides,
});

const server = await useFixtureServer();

const present = fixturesAvailable(FAMILY);
// The Vertex recordings: the plain Vertex stream and Vertex Gemini 3.1's streamed function-call arguments.
const entries = present ? loadManifest(FAMILY).filter((e) => e.file.includes('vertex') || (e.facts['partial_args_chunks'] as number) > 0) : [];

describe.skipIf(!present)('Vertex AI fixtures', () => {
  it('has the Vertex recordings', () => expect(entries.map((e) => e.file).sort()).toHaveLength(2));

  entries.forEach((entry, i) => {
    it(`parses ${entry.file} with an OAuth bearer token at the project/region URL`, async () => {
      server.enqueue({ body: fixtureBody(FAMILY, entry.file), chunking: { seed: 11 + i, maxChunk: 23 } });
      const { message } = await run(googleVertexProvider, request(model(server.url)));
      expectMatchesGoogleFacts(message, entry, 'vertex-fc-');
      const sent = server.requests.at(-1)!;
      expect(sent.url).toBe(
        '/v1/projects/my-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      );
      expect(sent.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(sent.headers['x-goog-api-key']).toBeUndefined();
    });
  });

  it('sends the body of the recorded Vertex request', async () => {
    const cassette = readCassette('charmbracelet__fantasy/providertests/testdata/TestGoogleCommon/vertex-gemini-2-5-flash/simple_streaming.yaml');
    if (!cassette) return console.warn('[phi-rx tests] cassette missing; skipped');
    const recorded = JSON.parse((parseYaml(cassette) as { interactions: Array<{ request: { body: string } }> }).interactions[0]!.request.body) as Record<string, unknown>;
    server.enqueue({ body: fixtureBody(FAMILY, 'fantasy__vertex-gemini-2-5-flash__simple_streaming.sse') });
    await run(googleVertexProvider, request(model(server.url), { messages: [user('Say hi in Portuguese')], maxTokens: 4000 }));
    const sent = server.requests.at(-1)!.json();
    expect(sent['contents']).toEqual(recorded['contents']);
    expect(sent['generationConfig']).toEqual(recorded['generationConfig']);
    expect((sent['systemInstruction'] as { parts: unknown }).parts).toEqual((recorded['systemInstruction'] as { parts: unknown }).parts);
  });
});

describe('Vertex AI endpoint', () => {
  it('builds the regional and global URLs of spec 000 §5', () => {
    expect(vertexStreamUrl(model(undefined), 'p', 'europe-west4')).toBe(
      'https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(vertexStreamUrl(model(undefined), 'p', 'global')).toMatch(/^https:\/\/aiplatform\.googleapis\.com\/v1\/projects\/p\/locations\/global\//);
  });

  it('fails with a clear error when the project or region is missing, and reads them from the environment', async () => {
    const { project: _p, ...noProject } = model(server.url);
    const provider = createGoogleVertexProvider({ env: {} });
    const { error } = await runToError(provider(request(noProject as ModelConfig), {}));
    expect(error.kind).toBe('other');
    expect(error.message).toMatch(/needs a project and a region/);
    // The project may come from the environment instead.
    server.enqueue({ body: 'data: {"candidates":[{"content":{"parts":[{"text":"ok"}]},"finishReason":"STOP"}]}\n\n' });
    const viaEnv = createGoogleVertexProvider({ env: { GOOGLE_CLOUD_PROJECT: 'env-project' } });
    await run(viaEnv, request(noProject as ModelConfig));
    expect(server.requests.at(-1)!.url).toMatch(/^\/v1\/projects\/env-project\/locations\/us-east5\//);
  });

  it('an expired token (401) is an auth error that never shows the token', async () => {
    server.enqueue({ status: 401, body: JSON.stringify({ error: { code: 401, message: `Request had invalid authentication credentials: Bearer ${TOKEN}`, status: 'UNAUTHENTICATED' } }) });
    const { error } = await runToError(googleVertexProvider(request(model(server.url)), {}));
    expect(error.kind).toBe('auth');
    expect(error.message).not.toContain(TOKEN);
  });
});
