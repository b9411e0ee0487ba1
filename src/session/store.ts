import { parseSession, type Session } from './model.js';
import { formatPath } from '../types/json-check.js';

/**
 * Where sessions are kept. Async so that any backend fits (files, a database, an object store).
 * Every implementation is expected to pass `sessionStoreContract` from `phi-rx/testing`:
 * - `save` replaces the whole session under its `sessionId` (no partial merges), atomically, and
 *   refuses (InvalidSessionError, nothing written) a session that would not load back;
 * - `load` returns a detached copy, validated, or throws SessionNotFoundError / SessionCorruptError;
 * - `listIds` lists every id, most recently saved first;
 * - `delete` removes a session, SessionNotFoundError when there is none;
 * - `listForAgent` loads the sessions of one agent, most recently saved first, skipping a corrupt
 *   one with a warning that names it (`onSkipped`).
 */
export interface SessionStore {
  save(session: Session): Promise<void>;
  load(sessionId: string): Promise<Session>;
  listIds(): Promise<string[]>;
  delete(sessionId: string): Promise<void>;
  listForAgent(agentId: string, options?: SessionListOptions): Promise<Session[]>;
}

/** What a listing does with a stored session it cannot load. */
export interface SessionListOptions {
  /** Told of each corrupt session skipped (default: `console.warn` of the error's message, which names where it is stored). */
  onSkipped?: (error: SessionCorruptError) => void;
}

export type SessionStoreErrorCode = 'SessionNotFound' | 'SessionLocked' | 'SessionCorrupt' | 'InvalidSessionId' | 'InvalidSession';

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

/** `save` was given a session that would not load back; `path` is the first invalid field. Nothing was written. */
export class InvalidSessionError extends SessionStoreError {
  override name = 'InvalidSessionError';
  constructor(
    sessionId: string,
    readonly where: string,
    readonly detail: string,
    readonly path?: string,
    options?: { cause?: unknown },
  ) {
    super('InvalidSession', `Session "${sessionId}" cannot be saved in ${where}: ${detail}; it would not load back, so nothing was written`, sessionId, options);
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

/**
 * The JSON text of `session`, checked to load back (what every store's `save` should do before it
 * writes): a value JSON cannot hold as given (`NaN` and `Infinity` become `null`, a `Date` a
 * string, `undefined` in an array `null`), a missing field or an unknown role fails here with an
 * InvalidSessionError naming the field, instead of on the next `load`.
 */
export function encodeSession(session: Session, where: string): string {
  const id = String((session as { sessionId?: unknown }).sessionId);
  let json: string | undefined;
  try {
    json = JSON.stringify(session);
  } catch (e) {
    throw new InvalidSessionError(id, where, `it cannot be written as JSON (${(e as Error).message})`, undefined, { cause: e });
  }
  if (json === undefined) throw new InvalidSessionError(id, where, 'it cannot be written as JSON');
  const parsed = parseSession(JSON.parse(json));
  if (!parsed.success) {
    const path = formatPath('session', parsed.error.path);
    throw new InvalidSessionError(id, where, `${path}: ${parsed.error.problem} (as JSON)`, path, { cause: parsed.error });
  }
  return json;
}

/** Tells `options.onSkipped` (or the console) of a corrupt session a listing skipped. */
export function reportSkipped(error: SessionCorruptError, options: SessionListOptions | undefined): void {
  if (options?.onSkipped) options.onSkipped(error);
  else console.warn(`phi-rx: skipped a corrupt session: ${error.message}`);
}
