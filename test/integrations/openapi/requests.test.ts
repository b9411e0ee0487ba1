import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenApiAuth, OpenApiError, openApiToolsFromSpec } from '../../../src/integrations/openapi/index.js';
import type { OpenApiConfig } from '../../../src/integrations/openapi/index.js';
import { ToolError } from '../../../src/types/errors.js';
import type { Tool } from '../../../src/types/tool.js';
import { byName, eventually, resultOf, textOf } from '../mcp/helpers.js';
import { startPetstore } from './petstore-server.js';
import type { PetstoreServer } from './petstore-server.js';

/** A spec over the test server's utility routes, written as YAML text like most real specs. */
const ECHO_SPEC = `
openapi: 3.0.3
info: { title: Echo, version: '1.0' }
servers: [{ url: 'http://example.invalid' }]
paths:
  /echo/{id}:
    parameters:
      - { name: id, in: path, required: true, schema: { type: string } }
    get:
      operationId: getEcho
      tags: [echo]
      parameters:
        - { name: q, in: query, schema: { type: array, items: { type: string } } }
        - { name: csv, in: query, explode: false, schema: { type: array, items: { type: integer } } }
        - { name: filter, in: query, style: deepObject, schema: { type: object, additionalProperties: { type: string } } }
        - { name: X-Trace-Id, in: header, schema: { type: string } }
        - { name: Accept, in: header, schema: { type: string } }
        - { name: session, in: cookie, schema: { type: string } }
        - { name: id, in: query, schema: { type: string }, description: same name as the path parameter }
      responses: { '200': { description: ok } }
    post:
      operationId: postEcho
      parameters:
        - { name: body, in: query, schema: { type: string } }
      requestBody:
        required: true
        content:
          application/json:
            schema: { type: object, properties: { note: { type: string, nullable: true } } }
      responses: { '200': { description: ok } }
  /big:
    get:
      operationId: getBig
      parameters: [{ name: bytes, in: query, required: true, schema: { type: integer } }]
      responses: { '200': { description: ok } }
  /slow:
    get: { operationId: getSlow, responses: { '200': { description: ok } } }
  /image:
    get: { operationId: getImage, responses: { '200': { description: ok } } }
  /form:
    post:
      operationId: postForm
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: { type: object, properties: { a: { type: string }, b: { type: integer } } }
      responses: { '200': { description: ok } }
`;

describe('OpenAPI tool requests on the wire', () => {
  let server: PetstoreServer;
  let tools: Tool[];
  let warnings: string[];
  const load = (config: OpenApiConfig = {}) => openApiToolsFromSpec(ECHO_SPEC, { baseUrl: server.origin, ...config });
  /** The request the echo route saw, as it reported it. */
  const echoed = (text: string) => JSON.parse(text.slice(text.indexOf('\n\n') + 2)) as { path: string; query: [string, string][]; headers: Record<string, string>; body: string };

  beforeAll(async () => {
    server = await startPetstore();
    ({ tools, warnings } = await load());
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });

  it('keys the arguments apart when names collide, and ignores Accept and cookie parameters', () => {
    expect(byName(tools, 'getEcho').parameters).toMatchObject({
      properties: { id: { type: 'string' }, query_id: { type: 'string', description: 'same name as the path parameter' } },
      required: ['id'],
    });
    expect(Object.keys((byName(tools, 'getEcho').parameters as { properties: object }).properties)).toEqual(['id', 'q', 'csv', 'filter', 'X-Trace-Id', 'query_id']);
    expect(byName(tools, 'postEcho').parameters).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string' },
        body: { type: 'string' },
        _request_body: { type: 'object', properties: { note: { type: ['string', 'null'] } } },
      },
      required: ['id', '_request_body'],
    });
    expect(warnings).toEqual(['getEcho (GET /echo/{id}): cookie parameter "session" is not supported and is never sent']);
  });

  it('serialises path, query (exploded, comma-separated, deepObject) and header parameters', async () => {
    const result = await resultOf(byName(tools, 'getEcho'), {
      id: 'ü/1',
      q: ['a b', 'c&d'],
      csv: [1, 2],
      filter: { color: 'red', size: 'L' },
      'X-Trace-Id': 'trace-7',
      query_id: 'qq',
    });
    const seen = echoed(textOf(result));
    expect(seen.path).toBe('/echo/%C3%BC%2F1');
    expect(seen.query).toEqual([
      ['q', 'a b'],
      ['q', 'c&d'],
      ['csv', '1,2'],
      ['filter[color]', 'red'],
      ['filter[size]', 'L'],
      ['id', 'qq'],
    ]);
    expect(seen.headers['x-trace-id']).toBe('trace-7');
    expect(textOf(result).split('\n')[0]).toBe(
      `GET ${server.origin}/echo/%C3%BC%2F1?q=a+b&q=c%26d&csv=1%2C2&filter%5Bcolor%5D=red&filter%5Bsize%5D=L&id=qq → 200`,
    );
  });

  it('sends the JSON body under "_request_body" when "body" is taken by a parameter', async () => {
    const seen = echoed(textOf(await resultOf(byName(tools, 'postEcho'), { id: '1', body: 'query-side', _request_body: { note: 'hi' } })));
    expect(seen.body).toBe('{"note":"hi"}');
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.query).toEqual([['body', 'query-side']]);
  });

  it('sends a form body url-encoded', async () => {
    await resultOf(byName(tools, 'postForm'), { body: { a: 'x y', b: 2 } });
    expect(server.requests[0]).toMatchObject({ method: 'POST', body: 'a=x+y&b=2' });
    expect(server.requests[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('adds custom headers and API key auth in a header, and redacts the key and secret-looking headers everywhere', async () => {
    const secret = 'key-SECRET-9876';
    const loaded = await load({ auth: OpenApiAuth.apiKey('X-Api-Key', secret), customHeaders: { 'X-Client': 'phi-rx', 'X-Session-Token': 'sess-SECRET-1234' } });
    const result = await resultOf(byName(loaded.tools, 'getEcho'), { id: '1' });
    const headers = server.requests[0]?.headers ?? {};
    expect(headers['x-api-key']).toBe(secret);
    expect(headers['x-client']).toBe('phi-rx');
    expect(headers['x-session-token']).toBe('sess-SECRET-1234');
    // The echo body carries the secrets back; the model must not see them.
    expect(textOf(result)).toContain('"x-api-key":"****"');
    expect(JSON.stringify(result)).not.toMatch(/SECRET/);
    for (const shown of [String(loaded.settings), JSON.stringify(loaded.settings), inspect(loaded.settings), inspect(OpenApiAuth.apiKey('X', secret)), String(OpenApiAuth.apiKey('X', secret)), JSON.stringify(OpenApiAuth.apiKey('X', secret))]) {
      expect(shown).not.toMatch(/SECRET/);
      expect(shown).toContain('****');
    }
  });

  it('puts a query API key on the URL and redacts it from the result and from network errors', async () => {
    const secret = 'qk-SECRET-5555';
    const loaded = await load({ auth: OpenApiAuth.apiKeyQuery('api_key', secret) });
    const result = await resultOf(byName(loaded.tools, 'getEcho'), { id: '1' });
    expect(server.requests[0]?.url).toBe(`/echo/1?api_key=${secret}`);
    expect(textOf(result).split('\n')[0]).toBe(`GET ${server.origin}/echo/1?api_key=**** → 200`);
    expect(JSON.stringify(result)).not.toMatch(/SECRET/);

    const unreachable = await openApiToolsFromSpec(ECHO_SPEC, { baseUrl: 'http://127.0.0.1:1', auth: OpenApiAuth.apiKeyQuery('api_key', secret) });
    const failed = await resultOf(byName(unreachable.tools, 'getSlow'));
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^GET http:\/\/127\.0\.0\.1:1\/slow\?api_key=\*\*\*\* → request failed: /);
    expect(JSON.stringify(failed)).not.toMatch(/SECRET/);
  });

  it('truncates a long response at a UTF-8 boundary, with a marker', async () => {
    const loaded = await load({ maxResponseBytes: 1000 });
    const result = await resultOf(byName(loaded.tools, 'getBig'), { bytes: 99_999 });
    const [line, body] = textOf(result).split('\n\n');
    expect(line).toBe(`GET ${server.origin}/big?bytes=99999 → 200`);
    // 1000 bytes hold 333 whole three-byte characters; the 334th would be split, so it is left out.
    expect(body).toBe('€'.repeat(333));
    expect(textOf(result).endsWith('\n\n[truncated: showing the first 1000 bytes of 99999]')).toBe(true);
    expect(textOf(result)).not.toContain('\uFFFD');
    expect(result.details).toMatchObject({ truncated: true, status: 200 });
  });

  it('keeps the default limit of 64 KiB', async () => {
    const result = await resultOf(byName(tools, 'getBig'), { bytes: 30_000 });
    expect(result.details).toMatchObject({ truncated: false });
    const big = await resultOf(byName(tools, 'getBig'), { bytes: 300_000 });
    expect(Buffer.byteLength(textOf(big).split('\n\n')[1] ?? '')).toBe(65_535);
    expect(textOf(big)).toContain('[truncated: showing the first 65536 bytes of 300000]');
  });

  it('times out with an error result and drops the connection', async () => {
    const loaded = await load({ timeoutMs: 200 });
    const started = Date.now();
    const result = await resultOf(byName(loaded.tools, 'getSlow'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: `GET ${server.origin}/slow → timed out after 200 ms` }] });
    expect(result.details).toMatchObject({ timedOut: true });
    await eventually(() => (server.pendingSlow() === 0 ? true : undefined));
  });

  it('fails with a cancelled ToolError when aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const error = await resultOf(byName(tools, 'getSlow'), {}, controller.signal).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect(error).toMatchObject({ kind: 'cancelled', message: `GET ${server.origin}/slow was cancelled` });
    await eventually(() => (server.pendingSlow() === 0 ? true : undefined));
  });

  it('describes a binary response instead of decoding it', async () => {
    expect(textOf(await resultOf(byName(tools, 'getImage')))).toBe(`GET ${server.origin}/image → 200\n\n[binary response: image/png, 4 bytes, not shown]`);
  });
});

describe('loading specs', () => {
  it('reads OpenAPI 3.1 and JSON text', async () => {
    const spec = JSON.stringify({
      openapi: '3.1.0',
      info: { title: 'v31', version: '2' },
      servers: [{ url: 'https://{region}.example.com/api/', variables: { region: { default: 'eu' } } }],
      paths: { '/things/{id}': { get: { operationId: 'getThing', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: ['string', 'null'] } }], responses: { 200: { description: 'ok' } } } } },
    });
    const loaded = await openApiToolsFromSpec(spec);
    expect(loaded.baseUrl).toBe('https://eu.example.com/api');
    expect(loaded.version).toBe('2');
    expect(loaded.tools[0]?.parameters).toEqual({ type: 'object', properties: { id: { type: ['string', 'null'] } }, required: ['id'] });
  });

  it('reads Swagger 2.0, with its body parameter and host', async () => {
    const spec = {
      swagger: '2.0',
      info: { title: 'v2', version: '1' },
      host: 'api.example.com',
      basePath: '/v2',
      schemes: ['https'],
      paths: {
        '/pets': {
          post: {
            operationId: 'addPet',
            parameters: [
              { name: 'pet', in: 'body', required: true, schema: { type: 'object', properties: { name: { type: 'string' } } } },
              { name: 'tags', in: 'query', type: 'array', items: { type: 'string' }, collectionFormat: 'pipes' },
            ],
            responses: { 200: { description: 'ok' } },
          },
        },
      },
    };
    const copy = structuredClone(spec);
    const loaded = await openApiToolsFromSpec(spec);
    expect(spec).toEqual(copy); // the caller's object is left alone
    expect(loaded.baseUrl).toBe('https://api.example.com/v2');
    expect(loaded.tools[0]?.parameters).toEqual({
      type: 'object',
      properties: { tags: { type: 'array', items: { type: 'string' } }, body: { type: 'object', properties: { name: { type: 'string' } } } },
      required: ['body'],
    });
  });

  it('rejects invalid documents with an OpenApiError naming the problem', async () => {
    await expect(openApiToolsFromSpec('openapi: 3.0.0\ninfo: { title: t }\npaths: {}')).rejects.toThrow(
      /^Invalid OpenAPI spec inline spec: .*#\/info must have required property 'version'/s,
    );
    await expect(openApiToolsFromSpec('{ "openapi": ')).rejects.toThrow(/^The OpenAPI spec inline spec is not valid JSON: /);
    await expect(openApiToolsFromSpec('openapi: [3.0\n  - :')).rejects.toBeInstanceOf(OpenApiError);
    await expect(openApiToolsFromSpec('just text')).rejects.toThrow('The OpenAPI spec inline spec is not an object');
  });

  it('needs a base URL when the spec has no servers', async () => {
    const spec = { openapi: '3.0.0', info: { title: 't', version: '1' }, paths: { '/x': { get: { operationId: 'x', responses: { 200: { description: 'ok' } } } } } };
    await expect(openApiToolsFromSpec(spec)).rejects.toThrow('The OpenAPI spec inline spec declares no server; set config.baseUrl');
    expect((await openApiToolsFromSpec(spec, { baseUrl: 'http://127.0.0.1:9/' })).baseUrl).toBe('http://127.0.0.1:9');
  });

  it('refuses nonsense limits', async () => {
    await expect(openApiToolsFromSpec({}, { timeoutMs: 0 })).rejects.toThrow('OpenApiConfig.timeoutMs must be a positive number, got 0');
  });
});
