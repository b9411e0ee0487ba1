import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RunCommand } from '../commands.js';
import { headerOf, sendJson } from './http-io.js';

/**
 * What the event endpoints (`EventStreamHub`, `RedisEventRelay`) check before they serve a request:
 * who may (the `authorize` hook), from which page (`Origin`), with which body type, which ids.
 */

/** What a request asks for: a run's events, or one command to it. */
export interface AuthorizeContext {
  readonly runId: string;
  readonly action: 'events' | 'command';
  /** The command, once its body was read and checked (action `'command'`). */
  readonly command?: RunCommand;
}

/**
 * Decides whether a request may do what it asks: `true` lets it, `false` answers 403, a throw
 * answers the error's `status` (401 or 403; 401 when it has none) with its message. Sync or async.
 */
export type AuthorizeRequest = (req: IncomingMessage, context: AuthorizeContext) => boolean | Promise<boolean>;

/** The `authorize` option: a check, or `'allow-all'` said explicitly (keyless demos, tests). */
export type AuthorizeOption = AuthorizeRequest | 'allow-all';

/** Which pages may call: origins as `scheme://host[:port]`, or a predicate. Same-origin requests always may. */
export type AllowedOrigins = readonly string[] | ((origin: string) => boolean);

/** Throws an error naming the option unless `authorize` is a function or `'allow-all'`. */
export function checkAuthorize(authorize: unknown, who: string): AuthorizeOption {
  if (authorize === 'allow-all' || typeof authorize === 'function') return authorize as AuthorizeOption;
  throw new TypeError(
    `${who}: options.authorize is required: a function (req, { runId, action, command }) => boolean | Promise<boolean> ` +
      `deciding who may read a run's events and send it commands, or 'allow-all' to serve anyone who has a run id (keyless demos only); got ${describe(authorize)}`,
  );
}

/** Asks `authorize`; answers 403 / 401 itself and resolves false when the request may not go on. */
export async function authorized(authorize: AuthorizeOption, req: IncomingMessage, res: ServerResponse, context: AuthorizeContext): Promise<boolean> {
  if (authorize === 'allow-all') return true;
  let allowed: boolean;
  try {
    allowed = (await authorize(req, context)) === true;
  } catch (e) {
    const status = (e as { status?: unknown } | null)?.status;
    sendJson(res, status === 401 || status === 403 ? status : 401, { error: e instanceof Error ? e.message : 'not authorized' });
    return false;
  }
  if (!allowed) sendJson(res, 403, { error: `not allowed to ${context.action === 'events' ? 'read the events of' : 'send commands to'} run "${context.runId}"` });
  return allowed;
}

/** The request's `Origin` when it may not call (not same-origin, not allowed); undefined when it may (or sent none). */
export function refusedOrigin(req: IncomingMessage, allowed: AllowedOrigins | undefined): string | undefined {
  const origin = headerOf(req, 'origin');
  if (origin === undefined) return undefined;
  return sameOrigin(origin, headerOf(req, 'host')) || isListed(origin, allowed) ? undefined : origin;
}

/** CORS headers for an origin listed in `allowedOrigins` (none for same-origin requests, which need none, or for others). */
export function corsHeaders(req: IncomingMessage, allowed: AllowedOrigins | undefined): Record<string, string> {
  const origin = headerOf(req, 'origin');
  if (origin === undefined || !isListed(origin, allowed)) return {};
  return { 'access-control-allow-origin': origin, 'access-control-allow-credentials': 'true', vary: 'Origin' };
}

/** Answers a CORS preflight (`OPTIONS`) on a route: 204 with the allowed method and headers for a listed origin, else 403. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, allowed: AllowedOrigins | undefined, method: 'GET' | 'POST'): void {
  const cors = corsHeaders(req, allowed);
  if (!cors['access-control-allow-origin']) return sendJson(res, 403, { error: `origin ${JSON.stringify(headerOf(req, 'origin') ?? null)} is not allowed (options.allowedOrigins)` });
  res.writeHead(204, {
    ...cors,
    'access-control-allow-methods': method,
    'access-control-allow-headers': 'content-type, authorization, last-event-id',
    'access-control-max-age': '600',
  }).end();
}

/** True when the request's body is declared `application/json` (parameters such as charset allowed). */
export function isJsonBody(req: IncomingMessage): boolean {
  const type = headerOf(req, 'content-type');
  return type !== undefined && type.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/** A `Last-Event-ID` of the hub: decimal digits only (at most 15), else undefined. */
export function parseEventId(raw: string): number | undefined {
  return /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
}

/** The run id in a route, percent-decoded; undefined when it does not decode (a malformed escape). */
export function decodeRunId(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/**
 * The checks every route of a run takes before its own work, shared by the hub and the Redis relay:
 * a run id that decodes, a preflight answered, an allowed origin, the route's method. Answers the
 * request and returns undefined when one fails; else the decoded run id.
 */
export function admitRoute(req: IncomingMessage, res: ServerResponse, rawId: string, route: string, allowed: AllowedOrigins | undefined): string | undefined {
  const runId = decodeRunId(rawId);
  if (runId === undefined) return void sendJson(res, 400, { error: `the run id in ${JSON.stringify(req.url)} is not valid percent-encoding` });
  const method = route === 'events' ? 'GET' : 'POST';
  if (req.method === 'OPTIONS') return void answerPreflight(req, res, allowed, method);
  const origin = refusedOrigin(req, allowed);
  if (origin !== undefined) return void sendJson(res, 403, { error: `origin ${origin} may not call this server (options.allowedOrigins)` });
  if (req.method !== method) return void sendJson(res, 405, { error: `${req.method} is not allowed on ${route} (use ${method})` });
  return runId;
}

/**
 * Runs a request's handling so that nothing escapes: a failure answers 500 with a JSON error (or,
 * once the response has begun, ends it), never throws into node:http.
 */
export function guardRequest(res: ServerResponse, what: string, work: () => void | Promise<void>): void {
  const fail = (e: unknown) => {
    if (!res.headersSent) {
      try {
        return sendJson(res, 500, { error: `${what} failed: ${e instanceof Error ? e.message : String(e)}` });
      } catch {
        // fall through: the response cannot be written, drop the connection
      }
    }
    res.destroy();
  };
  try {
    const pending = work();
    if (pending) pending.catch(fail);
  } catch (e) {
    fail(e);
  }
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

function isListed(origin: string, allowed: AllowedOrigins | undefined): boolean {
  if (allowed === undefined) return false;
  if (typeof allowed === 'function') {
    try {
      return allowed(origin) === true;
    } catch {
      return false;
    }
  }
  return allowed.includes(origin);
}

function describe(value: unknown): string {
  return value === undefined ? 'nothing' : value === null ? 'null' : typeof value === 'string' ? JSON.stringify(value) : typeof value;
}
