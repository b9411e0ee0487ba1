import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiError, openApiToolsFromSpec, openApiToolsFromUrl } from 'phi-rx/openapi';
import { PARAMS, specWithRef, startSpecServer, stubLookup } from './openapi-spec-server.js';
import type { SpecServer } from './openapi-spec-server.js';

/** Every way of writing "this machine" in a URL's host that the WHATWG parser and the resolver accept. */
const LOOPBACK_SPELLINGS = [
  '127.0.0.1',
  '127.1',
  '2130706433',
  '0x7f000001',
  '0177.0.0.1',
  '0.0.0.0',
  '[::1]',
  '[::]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:ffff:7f00:1]',
  '[::127.0.0.1]',
  '[2002:7f00:1::]',
  '[64:ff9b::7f00:1]',
  'localhost',
];

let server: SpecServer;
/** `specs.test` is the trusted spec host (the stub answers it with loopback). */
const dns = stubLookup({ 'specs.test': ['127.0.0.1'], localhost: ['127.0.0.1', '::1'] });
const trusted = { lookup: dns.lookup, trustedHosts: ['specs.test'] };
const at = (host: string, path: string) => `http://${host}:${server.port}${path}`;

beforeAll(async () => {
  server = await startSpecServer({
    '/spec.yaml': specWithRef('params.yaml#/Limit', 'http://specs.test:9/v1'),
    '/params.yaml': PARAMS,
    '/metadata.yaml': specWithRef('params.yaml#/Limit', 'http://169.254.169.254/latest'),
  });
});
afterAll(() => server.close());

describe('a spec URL', () => {
  it.each(LOOPBACK_SPELLINGS)('is refused on %s, and nothing is requested', async (host) => {
    server.seen.length = 0;
    const loading = openApiToolsFromUrl(at(host, '/spec.yaml'));
    await expect(loading).rejects.toBeInstanceOf(OpenApiError);
    await expect(loading).rejects.toThrow(/^Fetching the OpenAPI spec http:\/\/.+\/spec\.yaml failed: refused: .+ (is|resolves to .+,) an? (loopback|unspecified) address; .*set allowPrivateRefs: true, or list the host in trustedHosts/);
    expect(server.seen).toEqual([]);
  });

  it.each([
    ['10.1.2.3', 'private-network'],
    ['172.16.5.4', 'private-network'],
    ['192.168.1.1', 'private-network'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['fe80::1', 'link-local'],
    ['fd12:3456::1', 'unique-local'],
    ['::ffff:10.0.0.1', 'private-network'],
  ])('is refused when its name resolves to %s (%s)', async (address, kind) => {
    const { lookup } = stubLookup({ 'api.example.com': ['93.184.216.34', address] });
    await expect(openApiToolsFromUrl('http://api.example.com/spec.yaml', { lookup })).rejects.toThrow(
      `Fetching the OpenAPI spec http://api.example.com/spec.yaml failed: refused: api.example.com resolves to ${address}, a ${kind} address`,
    );
  });

  it('is fetched from a trusted host, over a connection to the address the lookup gave (asked once)', async () => {
    dns.asked.length = 0;
    server.seen.length = 0;
    // specs.test is in no real DNS: reaching the server proves the connection used the stub's answer.
    const { tools } = await openApiToolsFromUrl(at('specs.test', '/spec.yaml'), trusted);
    expect(tools.map((t) => t.name)).toEqual(['listPets']);
    expect(server.seen).toEqual(['/spec.yaml', '/params.yaml']);
    expect(dns.asked).toEqual(['specs.test', 'specs.test']); // once per document, none again to connect
  });
});

describe("a spec's $refs", () => {
  it.each(LOOPBACK_SPELLINGS)('are refused on %s, and only the spec is requested', async (host) => {
    server.seen.length = 0;
    const loading = openApiToolsFromSpec(specWithRef(at(host, '/params.yaml#/Limit')));
    await expect(loading).rejects.toThrow(/^Invalid OpenAPI spec inline spec: Fetching \$ref "http:\/\/.+\/params\.yaml" .*failed: refused: /);
    expect(server.seen).toEqual([]);
  });

  it.each(LOOPBACK_SPELLINGS)('are refused on %s from a spec fetched from a trusted host', async (host) => {
    server.seen.length = 0;
    const files = await startSpecServer({ '/spec.yaml': specWithRef(at(host, '/params.yaml#/Limit')) });
    try {
      const loading = openApiToolsFromUrl(`http://specs.test:${files.port}/spec.yaml`, trusted);
      await expect(loading).rejects.toThrow(/Invalid OpenAPI spec http:\/\/specs\.test:\d+\/spec\.yaml: Fetching \$ref .* failed: refused: /);
      expect(files.seen).toEqual(['/spec.yaml']);
      expect(server.seen).toEqual([]);
    } finally {
      await files.close();
    }
  });

  it('resolve on loopback with allowPrivateRefs: true (the refused $refs above would be served)', async () => {
    const { tools } = await openApiToolsFromSpec(specWithRef(at('127.0.0.1', '/params.yaml#/Limit')), { allowPrivateRefs: true });
    expect(tools[0]?.parameters).toMatchObject({ properties: { limit: { type: 'integer' } } });
    const v6 = await openApiToolsFromSpec(specWithRef(at('[::ffff:7f00:1]', '/params.yaml#/Limit')), { allowPrivateRefs: true });
    expect(v6.tools.map((t) => t.name)).toEqual(['listPets']);
  });
});

describe('redirects', () => {
  it('are checked at every hop: a trusted host redirecting a $ref to loopback is refused', async () => {
    server.seen.length = 0;
    const target = encodeURIComponent(at('127.0.0.1', '/params.yaml'));
    const spec = specWithRef(`http://specs.test:${server.port}/redirect?to=${target}#/Limit`);
    await expect(openApiToolsFromSpec(spec, trusted)).rejects.toThrow(
      `Fetching $ref "http://specs.test:${server.port}/redirect?to=${target}" (redirected to http://127.0.0.1:${server.port}/params.yaml) failed: refused: 127.0.0.1 is a loopback address`,
    );
    expect(server.seen).toEqual(['/redirect']);
  });

  it('to a file: URL are refused', async () => {
    const spec = specWithRef(`http://specs.test:${server.port}/redirect?to=${encodeURIComponent('file:///etc/passwd')}#/Limit`);
    await expect(openApiToolsFromSpec(spec, trusted)).rejects.toThrow('(redirected to file:///etc/passwd) failed: only http and https URLs are fetched, not file:');
  });

  it('between trusted hops are followed', async () => {
    const spec = specWithRef(`http://specs.test:${server.port}/redirect?to=${encodeURIComponent(at('specs.test', '/params.yaml'))}#/Limit`);
    const { tools } = await openApiToolsFromSpec(spec, trusted);
    expect(tools[0]?.parameters).toMatchObject({ properties: { limit: { type: 'integer' } } });
  });
});

describe('a public address', () => {
  it('passes the check, and the connection goes to the address the lookup gave, not to a second lookup', async () => {
    // api.phi-rx.test is in no DNS: a second lookup would fail with ENOTFOUND. 198.51.100.7 (TEST-NET-2) routes
    // nowhere, or to whatever a sandbox's proxy puts there: the load fails on connecting or on the answer, never on the check.
    const { lookup, asked } = stubLookup({ 'api.phi-rx.test': ['198.51.100.7'] });
    const error = await openApiToolsFromUrl('http://api.phi-rx.test/spec.yaml', { lookup, timeoutMs: 300 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/^Fetching the OpenAPI spec http:\/\/api\.phi-rx\.test\/spec\.yaml failed: /);
    expect(error?.message).not.toMatch(/refused|ENOTFOUND|getaddrinfo|cannot resolve/);
    expect(asked).toEqual(['api.phi-rx.test']);
  });

  it('is not followed through more than 5 redirects', async () => {
    const hop = (n: number): string => (n === 0 ? at('specs.test', '/params.yaml') : `http://specs.test:${server.port}/redirect?to=${encodeURIComponent(hop(n - 1))}`);
    await expect(openApiToolsFromSpec(specWithRef(`${hop(6)}#/Limit`), trusted)).rejects.toThrow('failed: more than 5 redirects');
    const { tools } = await openApiToolsFromSpec(specWithRef(`${hop(5)}#/Limit`), trusted);
    expect(tools.map((t) => t.name)).toEqual(['listPets']);
  });
});

describe("a fetched spec's server", () => {
  it('may not point the tools at an internal endpoint', async () => {
    await expect(openApiToolsFromUrl(at('specs.test', '/metadata.yaml'), trusted)).rejects.toThrow(
      `The server http://169.254.169.254/latest of the OpenAPI spec http://specs.test:${server.port}/metadata.yaml is refused: 169.254.169.254 is a link-local address;`,
    );
  });

  it('is replaced by config.baseUrl, which is yours and not checked', async () => {
    const { baseUrl } = await openApiToolsFromUrl(at('specs.test', '/metadata.yaml'), { ...trusted, baseUrl: 'http://127.0.0.1:9/v1' });
    expect(baseUrl).toBe('http://127.0.0.1:9/v1');
  });
});
