import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentFromConfig } from 'phi-rx/config';
import { scriptedProvider } from 'phi-rx/testing';
import { PARAMS, specWithRef, startSpecServer } from './openapi-spec-server.js';
import type { SpecServer } from './openapi-spec-server.js';

let dir: string;
let server: SpecServer;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'phi-rx-config-openapi-'));
  server = await startSpecServer({ '/spec.yaml': specWithRef('params.yaml#/Limit'), '/params.yaml': PARAMS });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function load(extra: string) {
  const file = path.join(dir, `agent-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, `model: { provider: scripted, id: m }\nopenapi:\n  - spec: http://127.0.0.1:${server.port}/spec.yaml\n${extra}`);
  return createAgentFromConfig(file, { provider: scriptedProvider([]) });
}

describe('an OpenAPI spec named by URL in a config file', () => {
  it('is refused on a loopback address, as any fetched spec', async () => {
    await expect(load('')).rejects.toThrow(/openapi\[0\]\.spec: cannot load the OpenAPI spec: Fetching the OpenAPI spec .* failed: refused: 127\.0\.0\.1 is a loopback address/);
  });

  it('loads with allowPrivateRefs: true, or with its host in trustedHosts', async () => {
    for (const extra of ['    allowPrivateRefs: true\n', '    trustedHosts: [127.0.0.1]\n']) {
      const { agent, close } = await load(extra);
      try {
        expect(agent.toolList.map((t) => t.name)).toEqual(['listPets']);
      } finally {
        await close();
      }
    }
  });
});
