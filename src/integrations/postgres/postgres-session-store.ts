import type { Session } from '../../session/model.js';
import {
  SessionLockedError,
  SessionNotFoundError,
  SessionStoreError,
  validateSession,
  encodeSession,
  reportSkipped,
  SessionCorruptError,
  type SessionListOptions,
  type SessionStore,
} from '../../session/store.js';

/** What the store needs of a `pg` client: `query`. A `pg.Pool` fits, as does a `pg.Client` (no concurrency). */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }>;
}

/** What the store needs of a `pg.Pool`: a client of its own for a transaction, released after. */
export interface PgPoolLike extends PgQueryable {
  connect(): Promise<PgQueryable & { release(error?: Error | boolean): void }>;
}

export interface PostgresSessionStoreOptions {
  /** The PostgreSQL schema holding the tables (created if missing). Default `public`. */
  schema?: string;
  /** Prefix of the table names. Default `phi_rx`: tables `phi_rx_sessions` and `phi_rx_schema_version`. */
  tablePrefix?: string;
  /** How long a save waits for another writer's lock on the same session before failing with SessionLocked. Default 10 000 ms. */
  lockTimeoutMs?: number;
}

/** The version of the tables this code writes; a database at a newer version is refused. */
export const POSTGRES_SESSION_SCHEMA_VERSION = 1;

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,40}$/;

/**
 * A SessionStore in PostgreSQL, shared by every process that connects to the same database.
 *
 * - Each session is one row: the whole session as `jsonb`, with its agent id and a save sequence
 *   (newest first); `listForAgent` reads through an index on (agent_id, seq).
 * - The tables are created on first use, in a transaction holding an advisory lock so that
 *   processes starting together do not race; their version is kept in `<prefix>_schema_version`.
 * - Concurrent saves of one session serialise on its row lock: a save is one
 *   `INSERT … ON CONFLICT DO UPDATE`, which locks the row; a second writer waits for the first to
 *   commit, then replaces the session whole (last writer wins, no merge, no torn mix). A writer
 *   that waits longer than `lockTimeoutMs` fails with SessionLockedError and writes nothing.
 * - No cache: every `load` reads the row, so a session saved by another process is seen at once.
 *
 * `pg` is not imported here: pass your own `pg.Pool`.
 *
 * @example
 * import pg from 'pg';
 * import { PostgresSessionStore } from 'phi-rx/postgres';
 * const store = new PostgresSessionStore(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 * const agent = new BasicAgent({ model, store });
 */
export class PostgresSessionStore implements SessionStore {
  private readonly sessions: string;
  private readonly versions: string;
  private readonly sequence: string;
  private readonly schema: string;
  private readonly prefix: string;
  private readonly lockTimeoutMs: number;
  private ready: Promise<void> | undefined;

  constructor(
    private readonly pool: PgPoolLike,
    options: PostgresSessionStoreOptions = {},
  ) {
    this.schema = checkIdentifier('schema', options.schema ?? 'public');
    this.prefix = checkIdentifier('tablePrefix', options.tablePrefix ?? 'phi_rx');
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
    if (!Number.isInteger(this.lockTimeoutMs) || this.lockTimeoutMs < 1) {
      throw new TypeError(`PostgresSessionStore: lockTimeoutMs must be a positive integer, got ${String(options.lockTimeoutMs)}`);
    }
    this.sessions = `"${this.schema}"."${this.prefix}_sessions"`;
    this.versions = `"${this.schema}"."${this.prefix}_schema_version"`;
    this.sequence = `"${this.schema}"."${this.prefix}_save_seq"`;
  }

  async save(session: Session): Promise<void> {
    await this.migrated();
    const json = encodeSession(session, this.where());
    const client = await this.pool.connect();
    let failed: Error | undefined;
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL lock_timeout = ${this.lockTimeoutMs}`);
      await client.query(
        `INSERT INTO ${this.sessions} (session_id, agent_id, seq, session, saved_at)
         VALUES ($1, $2, nextval('${this.sequence}'), $3::jsonb, now())
         ON CONFLICT (session_id) DO UPDATE
           SET agent_id = EXCLUDED.agent_id, seq = nextval('${this.sequence}'), session = EXCLUDED.session, saved_at = now()`,
        [session.sessionId, session.agentId, json],
      );
      await client.query('COMMIT');
    } catch (e) {
      failed = e as Error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw this.translate(e, session.sessionId);
    } finally {
      client.release(failed !== undefined && !isPgError(failed));
    }
  }

  async load(sessionId: string): Promise<Session> {
    await this.migrated();
    const { rows } = await this.pool.query(`SELECT session FROM ${this.sessions} WHERE session_id = $1`, [sessionId]);
    const row = rows[0];
    if (!row) throw new SessionNotFoundError(sessionId, this.where());
    return validateSession(row['session'], sessionId, `${this.where()} row "${sessionId}"`);
  }

  async listIds(): Promise<string[]> {
    await this.migrated();
    const { rows } = await this.pool.query(`SELECT session_id FROM ${this.sessions} ORDER BY seq DESC`);
    return rows.map((r) => String(r['session_id']));
  }

  async delete(sessionId: string): Promise<void> {
    await this.migrated();
    const { rowCount } = await this.pool.query(`DELETE FROM ${this.sessions} WHERE session_id = $1`, [sessionId]);
    if (!rowCount) throw new SessionNotFoundError(sessionId, this.where());
  }

  /** The agent's sessions; a row that does not validate is skipped and reported to `onSkipped`. */
  async listForAgent(agentId: string, options?: SessionListOptions): Promise<Session[]> {
    await this.migrated();
    const { rows } = await this.pool.query(
      `SELECT session_id, session FROM ${this.sessions} WHERE agent_id = $1 ORDER BY seq DESC`,
      [agentId],
    );
    const out: Session[] = [];
    for (const r of rows) {
      try {
        out.push(validateSession(r['session'], String(r['session_id']), `${this.where()} row "${String(r['session_id'])}"`));
      } catch (e) {
        if (!(e instanceof SessionCorruptError)) throw e;
        reportSkipped(e, options);
      }
    }
    return out;
  }

  /** Creates or checks the tables, once per store (again after a failure). */
  migrated(): Promise<void> {
    this.ready ??= this.migrate().catch((e: unknown) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    let failed: unknown;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`phi-rx schema ${this.schema}.${this.prefix}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${this.schema}"`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${this.versions} (version integer NOT NULL)`);
      const { rows } = await client.query(`SELECT max(version) AS version FROM ${this.versions}`);
      const found = rows[0]?.['version'] == null ? 0 : Number(rows[0]['version']);
      if (found > POSTGRES_SESSION_SCHEMA_VERSION) {
        throw new Error(
          `PostgresSessionStore: ${this.versions} is at version ${found}, newer than this phi-rx knows (${POSTGRES_SESSION_SCHEMA_VERSION}); upgrade phi-rx`,
        );
      }
      if (found < 1) {
        await client.query(`CREATE SEQUENCE IF NOT EXISTS ${this.sequence}`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${this.sessions} (
             session_id text PRIMARY KEY,
             agent_id text NOT NULL,
             seq bigint NOT NULL,
             session jsonb NOT NULL,
             saved_at timestamptz NOT NULL
           )`,
        );
        await client.query(`CREATE INDEX IF NOT EXISTS "${this.prefix}_sessions_seq" ON ${this.sessions} (seq DESC)`);
        await client.query(`CREATE INDEX IF NOT EXISTS "${this.prefix}_sessions_agent" ON ${this.sessions} (agent_id, seq DESC)`);
        await client.query(`INSERT INTO ${this.versions} (version) VALUES (1)`);
      }
      await client.query('COMMIT');
    } catch (e) {
      failed = e;
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release(failed !== undefined && !isPgError(failed));
    }
  }

  private where(): string {
    return `PostgreSQL table ${this.sessions}`;
  }

  private translate(e: unknown, sessionId: string): unknown {
    const code = isPgError(e) ? e.code : undefined;
    if (code === '55P03') return new SessionLockedError(sessionId, `${this.where()} row "${sessionId}"`, this.lockTimeoutMs, 'another transaction');
    if (code === '22P05' || code === '22021') {
      return new SessionStoreError(
        'SessionCorrupt',
        `Session "${sessionId}" cannot be saved in ${this.where()}: PostgreSQL jsonb rejects its text (${(e as Error).message}); nothing was written`,
        sessionId,
        { cause: e },
      );
    }
    return e;
  }
}

function checkIdentifier(option: string, value: string): string {
  if (!IDENTIFIER.test(value)) {
    throw new TypeError(`PostgresSessionStore: option ${option} must match ${IDENTIFIER} (lower-case letters, digits, _), got ${JSON.stringify(value)}`);
  }
  return value;
}

function isPgError(e: unknown): e is Error & { code: string } {
  const code: unknown = e instanceof Error ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
