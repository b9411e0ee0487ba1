import { describe, expect, it } from 'vitest';
import { main } from '../../examples/openapi.js';

describe('examples/openapi.ts', () => {
  it('makes tools of the tagged operations and calls them against its own server', async () => {
    const out = await main();
    expect(out.tools).toEqual(['pets__listPets', 'pets__showPetById']);
    expect(out.list).toMatch(/^GET http:\/\/127\.0\.0\.1:\d+\/v1\/pets\?limit=1 → 200\n\n\[\{"id":1,"name":"Rex"\}\]$/);
    expect(out.missing.isError).toBe(true);
    expect(out.missing.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/\/v1\/pets\/99 → 404\n\n\{"message":"no pet at \/v1\/pets\/99"\}$/) });
  });
});
