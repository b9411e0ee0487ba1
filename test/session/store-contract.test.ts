import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileSessionStore, InMemorySessionStore } from '../../src/session/index.js';
import { sessionStoreContract } from '../../src/testing/store-contract.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('FileSessionStore', () => {
  sessionStoreContract(
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'phi-rx-contract-'));
      dirs.push(dir);
      return new FileSessionStore(join(dir, 'sessions'));
    },
    { describe, it, expect },
  );
});

describe('InMemorySessionStore', () => {
  sessionStoreContract(async () => new InMemorySessionStore(), { describe, it, expect });
});
