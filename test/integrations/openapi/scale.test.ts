import { describe, expect, it } from 'vitest';
import { openApiToolsFromFile } from '../../../src/integrations/openapi/index.js';
import { fixture, openApiFixturesMissing } from './fixtures.js';
import { describeNeeding } from '../../support/skip.js';

describeNeeding(openApiFixturesMissing)('a large real-world spec (Spotify Web API, 97 operations, 286 KB of YAML)', () => {
  it('loads every operation as a tool with a serialisable schema', async () => {
    const started = performance.now();
    const { tools, warnings, baseUrl } = await openApiToolsFromFile(fixture('sonallux__fixed-spotify-open-api.yml'));
    const elapsed = performance.now() - started;
    const schemaBytes = JSON.stringify(tools.map((t) => t.parameters)).length;
    console.log(`Spotify spec: ${tools.length} tools in ${elapsed.toFixed(0)} ms; ${schemaBytes} bytes of parameter schemas`);

    expect(tools).toHaveLength(97);
    expect(warnings).toEqual([]);
    expect(baseUrl).toBe('https://api.spotify.com/v1');
    expect(new Set(tools.map((t) => t.name)).size).toBe(97);
    for (const tool of tools) {
      expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(tool.description.length).toBeGreaterThan(0);
      expect(tool.description.length).toBeLessThanOrEqual(1024);
    }
    const album = tools.find((t) => t.name === 'get-an-album');
    expect(album?.parameters).toMatchObject({ type: 'object', required: ['id'], properties: { id: { type: 'string' }, market: { type: 'string' } } });
    // The base64 JPEG upload is a string body, sent as is.
    expect(tools.find((t) => t.name === 'upload-custom-playlist-cover')?.parameters).toMatchObject({ required: ['playlist_id', 'body'] });
    expect(elapsed).toBeLessThan(5000);
  });
});
