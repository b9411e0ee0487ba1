import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
    // A file cut short, as a crash of another writer without this store's atomic rename would leave it.
    { corrupt: (store, id) => writeFile(store.fileOf(id), '{ "version": 1, "sessionId": "') },
  );
});

describe('InMemorySessionStore', () => {
  sessionStoreContract(async () => new InMemorySessionStore(), { describe, it, expect });
});
