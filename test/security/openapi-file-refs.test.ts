import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiToolsFromFile, openApiToolsFromSpec, openApiToolsFromUrl } from 'phi-rx/openapi';
import { PARAMS, specWithRef, startSpecServer, stubLookup } from './openapi-spec-server.js';
import type { SpecServer } from './openapi-spec-server.js';

/** A value that must never reach a tool schema or an error: it stands for /etc/passwd or a key file. */
const SECRET = 'planted-secret-7f3a9c';
const SECRET_PARAMS = `Limit: { name: limit, in: query, schema: { type: integer, description: ${SECRET} } }\n`;

let dir: string;
/** Outside the spec's directory: what a `$ref` must not read. */
let secretFile: string;
let server: SpecServer;
const { lookup } = stubLookup({ 'specs.test': ['127.0.0.1'] });

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'phi-rx-openapi-refs-'));
  await mkdir(path.join(dir, 'specs'));
  await mkdir(path.join(dir, 'outside'));
  secretFile = path.join(dir, 'outside', 'secret.yaml');
  await writeFile(secretFile, SECRET_PARAMS);
  await writeFile(path.join(dir, 'specs', 'params.yaml'), PARAMS);
  await symlink(secretFile, path.join(dir, 'specs', 'link.yaml'));
  server = await startSpecServer({
    '/by-file-url.yaml': specWithRef(`${pathToFileURL(secretFile).href}#/Limit`),
    '/by-relative.yaml': specWithRef('../outside/secret.yaml#/Limit'),
    '/etc-passwd.yaml': specWithRef('file:///etc/passwd#/Limit'),
  });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** The load must fail, and neither its error nor anything it returned holds the secret. */
async function refused(loading: Promise<unknown>, message: string | RegExp): Promise<void> {
  const error = await loading.then(
    (value) => {
      throw new Error(`loaded: ${JSON.stringify(value)}`);
    },
    (e: unknown) => e as Error,
  );
  expect(error.message).toMatch(message);
  expect(`${error.message} ${String(error.cause)}`).not.toContain(SECRET);
}

describe('a spec fetched from a URL', () => {
  it('cannot $ref a file:// URL', async () => {
    await refused(
      openApiToolsFromUrl(`http://specs.test:${server.port}/by-file-url.yaml`, { lookup, trustedHosts: ['specs.test'] }),
      `$ref "${pathToFileURL(secretFile).href}" points to a local file, and a spec fetched from a URL may not read files (file $refs resolve only for a spec loaded with openApiToolsFromFile, within its baseDir)`,
    );
  });

  it('cannot $ref a file even with allowPrivateRefs (which is about addresses, not files)', async () => {
    await refused(
      openApiToolsFromUrl(`http://127.0.0.1:${server.port}/by-file-url.yaml`, { allowPrivateRefs: true }),
      `$ref "${pathToFileURL(secretFile).href}" points to a local file, and a spec fetched from a URL may not read files`,
    );
  });

  it('cannot $ref /etc/passwd, even with allowPrivateRefs', async () => {
    await refused(
      openApiToolsFromUrl(`http://specs.test:${server.port}/etc-passwd.yaml`, { lookup, trustedHosts: ['specs.test'], allowPrivateRefs: true }),
      `$ref "file:///etc/passwd" points to a local file, and a spec fetched from a URL may not read files`,
    );
  });

  it('resolves a relative $ref against its URL, never against the disk', async () => {
    server.seen.length = 0;
    await refused(
      openApiToolsFromUrl(`http://specs.test:${server.port}/by-relative.yaml`, { lookup, trustedHosts: ['specs.test'] }),
      `Fetching $ref "http://specs.test:${server.port}/outside/secret.yaml" failed: HTTP 404`,
    );
    expect(server.seen).toEqual(['/by-relative.yaml', '/outside/secret.yaml']);
  });
});

describe('a spec passed inline', () => {
  it('cannot $ref a file by URL, by absolute path or by a path relative to the working directory', async () => {
    for (const ref of [pathToFileURL(secretFile).href, secretFile, path.relative(process.cwd(), secretFile)]) {
      await refused(openApiToolsFromSpec(specWithRef(`${ref}#/Limit`)), /points to a local file, and a spec passed inline may not read files/);
    }
  });
});

describe('a spec loaded from disk', () => {
  it('resolves a $ref to a file in its directory', async () => {
    const spec = path.join(dir, 'specs', 'ok.yaml');
    await writeFile(spec, specWithRef('params.yaml#/Limit'));
    const { tools } = await openApiToolsFromFile(spec);
    expect(tools[0]?.parameters).toMatchObject({ properties: { limit: { type: 'integer' } } });
  });

  it('cannot $ref a file outside its directory, by a relative path, an absolute file URL or a symlink', async () => {
    for (const [name, ref] of [
      ['up.yaml', '../outside/secret.yaml'],
      ['absolute.yaml', pathToFileURL(secretFile).href],
      ['etc.yaml', 'file:///etc/passwd'],
      ['link.yaml', 'link.yaml'],
    ] as const) {
      const spec = path.join(dir, 'specs', name === 'link.yaml' ? 'via-link.yaml' : name);
      await writeFile(spec, specWithRef(`${ref}#/Limit`));
      await refused(openApiToolsFromFile(spec), /is outside baseDir .*specs \(the spec's directory unless config\.baseDir says otherwise\)/);
    }
  });

  it('reads outside its directory only within an explicit baseDir', async () => {
    const spec = path.join(dir, 'specs', 'up-allowed.yaml');
    await writeFile(spec, specWithRef('../outside/secret.yaml#/Limit'));
    const { tools } = await openApiToolsFromFile(spec, { baseDir: dir });
    expect(JSON.stringify(tools[0]?.parameters)).toContain(SECRET);
  });
});
