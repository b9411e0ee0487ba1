import { parseSession, type Session } from './model.js';
import { formatPath } from '../types/json-check.js';

/**
 * Where sessions are kept. Async so that any backend fits (files, a database, an object store).
 * Every implementation is expected to pass `sessionStoreContract` from `phi-rx/testing`:
 * - `save` replaces the whole session under its `sessionId` (no partial merges), atomically;
 * - `load` returns a detached copy, validated, or throws SessionNotFoundError / SessionCorruptError;
 * - `listIds` lists every id, most recently saved first;
 * - `delete` removes a session, SessionNotFoundError when there is none;
 * - `listForAgent` loads the sessions of one agent, most recently saved first.
 */
export interface SessionStore {
  save(session: Session): Promise<void>;
  load(sessionId: string): Promise<Session>;
  listIds(): Promise<string[]>;
  delete(sessionId: string): Promise<void>;
  listForAgent(agentId: string): Promise<Session[]>;
}

export type SessionStoreErrorCode = 'SessionNotFound' | 'SessionLocked' | 'SessionCorrupt' | 'InvalidSessionId';

/** Base of the store's typed errors: branch on `code`. */
export class SessionStoreError extends Error {
  override name = 'SessionStoreError';
  constructor(
    readonly code: SessionStoreErrorCode,
    message: string,
    readonly sessionId: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export class SessionNotFoundError extends SessionStoreError {
  override name = 'SessionNotFoundError';
  constructor(sessionId: string, where: string) {
    super('SessionNotFound', `Session "${sessionId}" not found in ${where}`, sessionId);
  }
}

/** Another writer held the session's lock for longer than the store would wait. */
export class SessionLockedError extends SessionStoreError {
  override name = 'SessionLockedError';
  constructor(
    sessionId: string,
    readonly lockFile: string,
    readonly waitedMs: number,
    readonly holder?: string,
  ) {
    super(
      'SessionLocked',
      `Session "${sessionId}" is locked by another writer${holder ? ` (${holder})` : ''}: ` +
        `gave up after ${waitedMs} ms waiting for ${lockFile}`,
      sessionId,
    );
  }
}

/** The stored data is not a valid session. `path` is the first invalid field, when there is one. */
export class SessionCorruptError extends SessionStoreError {
  override name = 'SessionCorruptError';
  constructor(
    sessionId: string,
    readonly file: string,
    readonly detail: string,
    readonly path?: string,
    options?: { cause?: unknown },
  ) {
    super('SessionCorrupt', `Session file ${file} is corrupt: ${detail}`, sessionId, options);
  }
}

/** An id a store cannot use as a key (for the file store: one that is not a safe file name). */
export class InvalidSessionIdError extends SessionStoreError {
  override name = 'InvalidSessionIdError';
  constructor(sessionId: string, reason: string) {
    super('InvalidSessionId', `Invalid session id ${JSON.stringify(sessionId)}: ${reason}`, sessionId);
  }
}

export function isSessionStoreError(e: unknown, code?: SessionStoreErrorCode): e is SessionStoreError {
  return e instanceof SessionStoreError && (code === undefined || e.code === code);
}

/**
 * Parses and validates a stored session: what every store's `load` should do with the text it
 * kept. `where` names the storage location in errors (a file path, a table row).
 */
export function decodeSession(json: string, sessionId: string, where: string): Session {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    throw new SessionCorruptError(sessionId, where, `not valid JSON (${(e as Error).message})`, undefined, { cause: e });
  }
  return validateSession(raw, sessionId, where);
}

/** Validates already-parsed JSON as the session stored under `sessionId`. */
export function validateSession(raw: unknown, sessionId: string, where: string): Session {
  const parsed = parseSession(raw);
  if (!parsed.success) {
    const path = formatPath('session', parsed.error.path);
    throw new SessionCorruptError(sessionId, where, `${path}: ${parsed.error.problem}`, path, { cause: parsed.error });
  }
  if (parsed.data.sessionId !== sessionId) {
    throw new SessionCorruptError(
      sessionId,
      where,
      `session.sessionId: expected ${JSON.stringify(sessionId)}, found ${JSON.stringify(parsed.data.sessionId)}`,
      'session.sessionId',
    );
  }
  return parsed.data;
}
