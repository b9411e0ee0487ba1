import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenApiAuth, OperationFilter, openApiToolsFromFile, openApiToolsFromUrl } from '../../../src/integrations/openapi/index.js';
import type { Tool } from '../../../src/types/tool.js';
import { byName, resultOf, textOf } from '../mcp/helpers.js';
import { fixture, openApiFixturesMissing } from './fixtures.js';
import { describeNeeding } from '../../support/skip.js';
import { startPetstore } from './petstore-server.js';
import type { PetstoreServer } from './petstore-server.js';

describeNeeding(openApiFixturesMissing)('the Petstore spec against a loopback Petstore', () => {
  let server: PetstoreServer;
  beforeAll(async () => {
    server = await startPetstore({
      '/specs/petstore.yaml': await readFile(fixture('oai__petstore.yaml'), 'utf8'),
      '/specs/relative.json': JSON.stringify({
        openapi: '3.0.3',
        info: { title: 'relative', version: '1' },
        servers: [{ url: '/v1' }],
        paths: { '/pets': { get: { operationId: 'listPets', responses: { 200: { description: 'ok' } } } } },
      }),
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
    server.requireBearer = undefined;
  });

  describe('oai__petstore.yaml', () => {
    let tools: Tool[];
    beforeAll(async () => {
      const loaded = await openApiToolsFromFile(fixture('oai__petstore.yaml'), { baseUrl: `${server.origin}/v1/` });
      expect(loaded.warnings).toEqual([]);
      expect(loaded.baseUrl).toBe(`${server.origin}/v1`);
      expect(loaded.title).toBe('Swagger Petstore');
      tools = loaded.tools;
    });

    it('makes one tool per operation, with a parameter schema from the query, path and body', () => {
      expect(tools.map((t) => t.name)).toEqual(['listPets', 'createPets', 'showPetById']);
      expect(byName(tools, 'listPets')).toMatchObject({
        label: 'List all pets',
        description: 'List all pets',
        parameters: {
          type: 'object',
          properties: { limit: { type: 'integer', maximum: 100, format: 'int32', description: 'How many items to return at one time (max 100)' } },
        },
      });
      expect(byName(tools, 'listPets').parameters.required).toBeUndefined();
      expect(byName(tools, 'showPetById').parameters).toEqual({
        type: 'object',
        properties: { petId: { type: 'string', description: 'The id of the pet to retrieve' } },
        required: ['petId'],
      });
      expect(byName(tools, 'createPets').parameters).toEqual({
        type: 'object',
        properties: {
          body: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' }, tag: { type: 'string' } } },
        },
        required: ['body'],
      });
    });

    it('GETs with a query parameter and reads "{METHOD} {URL} → {STATUS}\\n\\n{BODY}"', async () => {
      const result = await resultOf(byName(tools, 'listPets'), { limit: 2 });
      expect(result.isError).toBeUndefined();
      expect(textOf(result)).toBe(
        `GET ${server.origin}/v1/pets?limit=2 → 200\n\n[{"id":1,"name":"Rex","tag":"dog"},{"id":2,"name":"Tom","tag":"cat"}]`,
      );
      expect(result.details).toMatchObject({ method: 'GET', status: 200, truncated: false, contentType: 'application/json' });
    });

    it('POSTs the body as JSON, then finds the new pet by its path parameter', async () => {
      const created = await resultOf(byName(tools, 'createPets'), { body: { id: 42, name: 'Bubbles', tag: 'fish' } });
      expect(textOf(created)).toBe(`POST ${server.origin}/v1/pets → 201\n\n`);
      expect(server.requests[0]).toMatchObject({ method: 'POST', body: '{"id":42,"name":"Bubbles","tag":"fish"}' });
      expect(server.requests[0]?.headers['content-type']).toBe('application/json');
      const shown = await resultOf(byName(tools, 'showPetById'), { petId: '42' });
      expect(textOf(shown)).toBe(`GET ${server.origin}/v1/pets/42 → 200\n\n{"id":42,"name":"Bubbles","tag":"fish"}`);
    });

    it('percent-encodes path parameters and gives a non-2xx reply as an error result the model can read', async () => {
      const result = await resultOf(byName(tools, 'showPetById'), { petId: 'a b/c?' });
      expect(server.requests[0]?.url).toBe('/v1/pets/a%20b%2Fc%3F');
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(`GET ${server.origin}/v1/pets/a%20b%2Fc%3F → 404\n\n{"code":404,"message":"pet a b/c? not found"}`);
    });

    it('reports a missing path parameter as an error result, both in validate and in execute', async () => {
      const tool = byName(tools, 'showPetById');
      expect(tool.validate?.({})).toEqual({ ok: false, error: 'missing required argument: petId' });
      const result = await resultOf(tool, {});
      expect(result).toEqual({
        content: [{ type: 'text', text: 'showPetById: missing required argument: petId' }],
        isError: true,
      });
      expect(server.requests).toHaveLength(0);
    });

    it('sends the bearer token, and never shows it', async () => {
      server.requireBearer = 'tok-0123456789';
      expect((await resultOf(byName(tools, 'listPets'))).isError).toBe(true);
      const authed = await openApiToolsFromFile(fixture('oai__petstore.yaml'), {
        baseUrl: `${server.origin}/v1`,
        auth: OpenApiAuth.bearer('tok-0123456789'),
      });
      const result = await resultOf(byName(authed.tools, 'listPets'), { limit: 1 });
      expect(result.isError).toBeUndefined();
      expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer tok-0123456789');
      expect(JSON.stringify(result)).not.toContain('tok-0123456789');
      expect(JSON.stringify(authed.settings)).not.toContain('tok-0123456789');
    });

    it("defaults the base URL to the spec's servers[0]", async () => {
      const loaded = await openApiToolsFromFile(fixture('oai__petstore.yaml'));
      expect(loaded.baseUrl).toBe('http://petstore.swagger.io/v1');
    });

    it('filters by operationId, tag and path prefix, and warns about unknown ids', async () => {
      const load = (filter: OperationFilter) => openApiToolsFromFile(fixture('oai__petstore.yaml'), { baseUrl: server.origin }, filter);
      expect((await load(OperationFilter.all())).tools).toHaveLength(3);
      expect((await load(OperationFilter.byTag('pets'))).tools).toHaveLength(3);
      expect((await load(OperationFilter.byTag('stores'))).tools).toHaveLength(0);
      expect((await load(OperationFilter.byPathPrefix('/pets/'))).tools.map((t) => t.name)).toEqual(['showPetById']);
      const byId = await load(OperationFilter.byOperationId('createPets', 'nope'));
      expect(byId.tools.map((t) => t.name)).toEqual(['createPets']);
      expect(byId.warnings).toEqual(['operationId "nope" asked for by the filter is not in the spec']);
    });
  });

  describe('oai__petstore-expanded.yaml (no tags, an operationId with spaces, allOf, an array query)', () => {
    let tools: Tool[];
    let warnings: string[];
    beforeAll(async () => {
      ({ tools, warnings } = await openApiToolsFromFile(fixture('oai__petstore-expanded.yaml'), { baseUrl: `${server.origin}/v2`, namePrefix: 'store' }));
    });

    it('prefixes and sanitizes the names, and says so', () => {
      expect(tools.map((t) => t.name)).toEqual(['store__findPets', 'store__addPet', 'store__find_pet_by_id', 'store__deletePet']);
      expect(warnings).toEqual(['find pet by id (GET /pets/{id}): tool named "store__find_pet_by_id" (tool names allow 1-64 characters of [a-zA-Z0-9_-])']);
    });

    it('repeats an exploded array query parameter', async () => {
      const result = await resultOf(byName(tools, 'store__findPets'), { tags: ['dog', 'cat'], limit: 5 });
      expect(server.requests[0]?.url).toBe('/v2/pets?tags=dog&tags=cat&limit=5');
      expect(JSON.parse(textOf(result).split('\n\n')[1] ?? '')).toEqual([
        { id: 1, name: 'Rex', tag: 'dog' },
        { id: 2, name: 'Tom', tag: 'cat' },
      ]);
    });

    it('adds, finds and deletes a pet', async () => {
      const added = await resultOf(byName(tools, 'store__addPet'), { body: { name: 'Kiwi', tag: 'bird' } });
      const pet = JSON.parse(textOf(added).split('\n\n')[1] ?? '') as { id: number };
      expect(pet).toMatchObject({ name: 'Kiwi', tag: 'bird' });
      expect(textOf(await resultOf(byName(tools, 'store__find_pet_by_id'), { id: pet.id }))).toContain(' → 200\n\n{"id"');
      expect(textOf(await resultOf(byName(tools, 'store__deletePet'), { id: pet.id }))).toBe(`DELETE ${server.origin}/v2/pets/${pet.id} → 204\n\n`);
      const gone = await resultOf(byName(tools, 'store__find_pet_by_id'), { id: pet.id });
      expect(gone.isError).toBe(true);
      expect(textOf(gone)).toContain(' → 404');
    });

    it('filters by tag to nothing when the spec has no tags', async () => {
      const loaded = await openApiToolsFromFile(fixture('oai__petstore-expanded.yaml'), { baseUrl: server.origin }, OperationFilter.byTag('pets'));
      expect(loaded.tools).toEqual([]);
    });
  });

  // The server is on loopback, which a spec URL may reach only with allowPrivateRefs (test/security/openapi-ssrf.test.ts).
  describe('openApiToolsFromUrl', () => {
    it('fetches and loads a YAML spec over HTTP', async () => {
      const loaded = await openApiToolsFromUrl(`${server.origin}/specs/petstore.yaml`, { baseUrl: `${server.origin}/v1`, allowPrivateRefs: true });
      expect(loaded.tools.map((t) => t.name)).toEqual(['listPets', 'createPets', 'showPetById']);
      expect(textOf(await resultOf(byName(loaded.tools, 'listPets'), { limit: 1 }))).toBe(
        `GET ${server.origin}/v1/pets?limit=1 → 200\n\n[{"id":1,"name":"Rex","tag":"dog"}]`,
      );
    });

    it('resolves a relative server URL against the spec URL', async () => {
      const loaded = await openApiToolsFromUrl(`${server.origin}/specs/relative.json`, { allowPrivateRefs: true });
      expect(loaded.baseUrl).toBe(`${server.origin}/v1`);
      expect(textOf(await resultOf(byName(loaded.tools, 'listPets')))).toMatch(new RegExp(`^GET ${server.origin}/v1/pets → 200\n\n\\[`));
    });

    it('fails clearly when the spec URL answers 404', async () => {
      await expect(openApiToolsFromUrl(`${server.origin}/specs/missing.yaml`, { allowPrivateRefs: true })).rejects.toThrow(
        `Fetching the OpenAPI spec ${server.origin}/specs/missing.yaml failed: HTTP 404`,
      );
    });
  });

  it('skips operations without an operationId, with a warning (oai__callback-example.yaml)', async () => {
    const loaded = await openApiToolsFromFile(fixture('oai__callback-example.yaml'));
    expect(loaded.tools).toEqual([]);
    expect(loaded.warnings).toEqual(['POST /streams: skipped, the operation has no operationId']);
  });
});
