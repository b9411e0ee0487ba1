import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresSessionStore, POSTGRES_SESSION_SCHEMA_VERSION } from '../../../src/integrations/postgres/index.js';
import { isSessionStoreError } from '../../../src/session/index.js';
import { sampleSession, sessionStoreContract } from '../../../src/testing/store-contract.js';
import { missingServer, startPostgres, type RunningServer } from '../../support/servers.js';
import { describeNeeding } from '../../support/skip.js';

const missing = missingServer('postgres');

describeNeeding(missing)('PostgresSessionStore against a real PostgreSQL', () => {
  let server: RunningServer;
  const pools: pg.Pool[] = [];
  let schemas = 0;
  const pool = (): pg.Pool => {
    const p = new pg.Pool({ connectionString: server.url, max: 8 });
    // Idle clients still closing when the server stops get its shutdown notice (57P01): expected then.
    p.on('error', (e: Error & { code?: string }) => {
      if (e.code !== '57P01') throw e;
    });
    pools.push(p);
    return p;
  };
  /** A store in a schema of its own: an empty store per test. */
  const freshStore = (p = pool(), options: { lockTimeoutMs?: number } = {}): PostgresSessionStore =>
    new PostgresSessionStore(p, { schema: `t${++schemas}`, ...options });

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await server?.stop();
  });

  /** Where each contract store keeps its rows, for `corrupt`. */
  const tables = new WeakMap<PostgresSessionStore, { pool: pg.Pool; table: string }>();
  sessionStoreContract(
    async () => {
      const p = pool();
      const schema = `t${++schemas}`;
      const store = new PostgresSessionStore(p, { schema });
      tables.set(store, { pool: p, table: `"${schema}"."phi_rx_sessions"` });
      return store;
    },
    { describe, it, expect },
    {
      // A row whose jsonb is not a session, as a hand edit or another program would leave it.
      corrupt: async (store, id) => {
        const { pool: p, table } = tables.get(store)!;
        await p.query(`UPDATE ${table} SET session = jsonb_build_object('version', 1, 'sessionId', session_id) WHERE session_id = $1`, [id]);
      },
    },
  );

  it('is seen at once by a second store on another pool (no cache), and saves from both serialise', async () => {
    const schema = `shared${++schemas}`;
    const a = new PostgresSessionStore(pool(), { schema });
    const b = new PostgresSessionStore(pool(), { schema });
    await a.save(sampleSession('s', 'agent'));
    expect((await b.load('s')).loops[0]!.metadata).toEqual({ note: 'first' });
    await b.save(sampleSession('s', 'agent', 'from-b'));
    expect((await a.load('s')).loops[0]!.metadata).toEqual({ note: 'from-b' });

    const tags = Array.from({ length: 40 }, (_, i) => `w${i}`);
    await Promise.all(tags.map((tag, i) => (i % 2 ? a : b).save(sampleSession('s', 'agent', tag))));
    const loaded = await a.load('s');
    const tag = (loaded.loops[0]!.metadata as { note: string }).note;
    expect(tags).toContain(tag);
    expect(loaded).toEqual(sampleSession('s', 'agent', tag));
  });

  it('creates the schema once when many stores start together, and records its version', async () => {
    const schema = `race${++schemas}`;
    const p = pool();
    const stores = Array.from({ length: 6 }, () => new PostgresSessionStore(pool(), { schema }));
    await Promise.all(stores.map((s, i) => s.save(sampleSession(`r${i}`, 'agent'))));
    const { rows } = await p.query(`SELECT version FROM "${schema}".phi_rx_schema_version`);
    expect(rows).toEqual([{ version: POSTGRES_SESSION_SCHEMA_VERSION }]);
    expect((await stores[0]!.listIds()).length).toBe(6);
  });

  it('refuses tables at a newer schema version, naming the table and both versions', async () => {
    const schema = `newer${++schemas}`;
    const p = pool();
    await new PostgresSessionStore(p, { schema }).listIds();
    await p.query(`UPDATE "${schema}".phi_rx_schema_version SET version = 99`);
    const err = await new PostgresSessionStore(p, { schema }).listIds().catch((e: Error) => e);
    expect(String(err)).toContain(`"${schema}"."phi_rx_schema_version" is at version 99, newer than this phi-rx knows (1)`);
  });

  it('lists by agent through the (agent_id, seq) index', async () => {
    const p = pool();
    const store = freshStore(p);
    await store.save(sampleSession('x', 'agent-x'));
    const client = await p.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const { rows } = await client.query(
        `EXPLAIN SELECT session_id, session FROM "t${schemas}".phi_rx_sessions WHERE agent_id = $1 ORDER BY seq DESC`,
        ['agent-x'],
      );
      expect(rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')).toContain('phi_rx_sessions_agent');
    } finally {
      client.release();
    }
  });

  it('fails a save held up by another writer with SessionLocked after lockTimeoutMs, writing nothing', async () => {
    const p = pool();
    const store = freshStore(p, { lockTimeoutMs: 200 });
    await store.save(sampleSession('held', 'agent'));
    const holder = await p.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "t${schemas}".phi_rx_sessions WHERE session_id = 'held' FOR UPDATE`);
      const err = await store.save(sampleSession('held', 'agent', 'blocked')).catch((e: unknown) => e);
      expect(isSessionStoreError(err, 'SessionLocked')).toBe(true);
      expect(String(err)).toContain('gave up after 200 ms');
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    expect((await store.load('held')).loops[0]!.metadata).toEqual({ note: 'first' });
  });

  it('rejects text jsonb cannot hold (a NUL character) with a clear error, keeping the stored session', async () => {
    const store = freshStore();
    await store.save(sampleSession('nul', 'agent'));
    const err = await store.save(sampleSession('nul', 'agent', 'a\u0000b')).catch((e: unknown) => e);
    expect(String(err)).toMatch(/Session "nul" cannot be saved in PostgreSQL table .*jsonb rejects its text/);
    expect((await store.load('nul')).loops[0]!.metadata).toEqual({ note: 'first' });
  });

  it('reports a row edited into an invalid session as SessionCorrupt, naming the field', async () => {
    const p = pool();
    const store = freshStore(p);
    await store.save(sampleSession('bad', 'agent'));
    await p.query(`UPDATE "t${schemas}".phi_rx_sessions SET session = jsonb_set(session, '{loops,0,status}', '"exploded"')`);
    const err = await store.load('bad').catch((e: unknown) => e);
    expect(isSessionStoreError(err, 'SessionCorrupt')).toBe(true);
    expect(String(err)).toContain('loops');
  });

  it('rejects unsafe schema names before touching the database', () => {
    expect(() => new PostgresSessionStore(pool(), { schema: 'x"; DROP TABLE y; --' })).toThrow(/option schema must match/);
  });
});
