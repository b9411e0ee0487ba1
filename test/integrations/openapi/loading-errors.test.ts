import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiError, openApiToolsFromSpec, openApiToolsFromUrl } from '../../../src/integrations/openapi/index.js';
import { startPetstore } from './petstore-server.js';
import type { PetstoreServer } from './petstore-server.js';

const MAIN = `openapi: 3.0.3
info: { title: Split spec, version: '1' }
paths:
  /v1/pets:
    get:
      operationId: listPets
      parameters: [{ $ref: 'params.yaml#/Limit' }]
      responses: { '200': { description: ok } }
`;
const PARAMS = `Limit: { name: limit, in: query, schema: { type: integer } }\n`;

describe('loading an OpenAPI spec: specs and $refs on private hosts, specs without paths', () => {
  let server: PetstoreServer;
  beforeAll(async () => {
    server = await startPetstore({ '/specs/split.yaml': MAIN, '/specs/params.yaml': PARAMS });
  });
  afterAll(() => server.close());

  it('refuses by default to fetch a spec from a loopback URL, and says how to allow it', async () => {
    const loading = openApiToolsFromUrl(`${server.origin}/specs/split.yaml`, { baseUrl: server.origin });
    await expect(loading).rejects.toBeInstanceOf(OpenApiError);
    await expect(loading).rejects.toThrow(
      `Fetching the OpenAPI spec ${server.origin}/specs/split.yaml failed: refused: 127.0.0.1 is a loopback address; a fetched spec, its $refs and redirects may not reach loopback, private-network, link-local, unique-local and shared (CGNAT) addresses (set allowPrivateRefs: true, or list the host in trustedHosts, for a spec you trust)`,
    );
    expect(server.requests).toEqual([]);
  });

  it('resolves them with allowPrivateRefs: true, and the $ref parameter works on the wire', async () => {
    server.requests.length = 0;
    const { tools } = await openApiToolsFromUrl(`${server.origin}/specs/split.yaml`, { baseUrl: server.origin, allowPrivateRefs: true });
    expect(tools.map((t) => t.name)).toEqual(['listPets']);
    expect(tools[0]?.parameters).toMatchObject({ properties: { limit: { type: 'integer' } } });
    expect(server.requests.map((r) => r.url)).toEqual(['/specs/split.yaml', '/specs/params.yaml']);
    expect(tools[0]?.validate?.({ limit: 'ten' })).toMatchObject({ ok: false });
  });

  it('says that a spec has no paths', async () => {
    await expect(openApiToolsFromSpec({ openapi: '3.0.3', info: { title: 't', version: '1' } })).rejects.toThrow(
      'Invalid OpenAPI spec inline spec: it has no "paths" object, so there are no operations to make tools of',
    );
    await expect(openApiToolsFromSpec('swagger: "2.0"\ninfo: { title: t, version: "1" }\npaths: []\n')).rejects.toThrow(/has no "paths" object/);
    await expect(openApiToolsFromSpec({ info: { title: 't' }, paths: {} })).rejects.toThrow(
      'Invalid OpenAPI spec inline spec: it has neither an "openapi" nor a "swagger" version field',
    );
  });
});
