import { Observable, catchError, fromEvent, map, merge, mergeMap, of, take, throwError, timer } from 'rxjs';
import type { SchedulerLike } from 'rxjs';
import { request } from 'undici';
import { ToolError, errorMessage } from '../../types/errors.js';
import type { ToolResult } from '../../types/tool.js';
import type { OpenApiSettings } from './config.js';
import type { OperationSpec } from './operations.js';
import { truncateUtf8 } from './truncate.js';

/** An HTTP request ready to send. */
export interface PreparedRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

/** What the application gets in `details` of every OpenAPI tool result. */
export interface OpenApiCallDetails {
  method: string;
  /** With secrets redacted. */
  url: string;
  status?: number;
  contentType?: string;
  /** Bytes received (stops counting at the limit + 1). */
  bytes?: number;
  truncated?: boolean;
  timedOut?: boolean;
}

/**
 * Builds the request for one operation from the model's arguments: path parameters
 * percent-encoded, query and header parameters serialised by their `style`, auth and custom
 * headers applied, the body as JSON (or a form). Fails with an invalid-arguments ToolError when a
 * path parameter is missing or is a dot segment (`.`, `..`).
 */
export function prepareRequest(op: OperationSpec, args: Record<string, unknown>, baseUrl: string, settings: OpenApiSettings): PreparedRequest {
  let path = op.path;
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.5' };

  for (const param of op.params) {
    const value = args[param.argKey];
    if (param.in === 'path') {
      if (value === undefined || value === null || value === '') {
        throw ToolError.invalidArgs(`missing required path parameter "${param.argKey}" for ${op.operationId} (${op.method} ${op.path})`);
      }
      path = path.split(`{${param.name}}`).join(pathSegment(param.json ? JSON.stringify(value) : simpleValue(value), param.argKey, op));
    }
  }
  const target = new URL(baseUrl + path);
  for (const param of op.params) {
    const value = args[param.argKey];
    if (value === undefined || value === null || param.in === 'path') continue;
    if (param.in === 'query') appendQuery(target.searchParams, param.name, value, param.style, param.explode, param.json);
    else headers[param.name.toLowerCase()] = param.json ? JSON.stringify(value) : simpleValue(value);
  }

  const auth = settings.auth;
  if (auth.kind === 'bearer') headers.authorization = `Bearer ${auth.token}`;
  else if (auth.kind === 'apiKey' && auth.in === 'header') headers[auth.name.toLowerCase()] = auth.value;
  else if (auth.kind === 'apiKey' && auth.in === 'query') target.searchParams.set(auth.name, auth.value);
  for (const [name, value] of Object.entries(settings.customHeaders)) headers[name.toLowerCase()] = value;

  const prepared: PreparedRequest = { method: op.method, url: target, headers };
  const body = op.body ? args[op.body.argKey] : undefined;
  if (op.body && body !== undefined) {
    headers['content-type'] = op.body.contentType;
    prepared.body =
      op.body.encoding === 'json' ? JSON.stringify(body) : op.body.encoding === 'form' ? formBody(body) : typeof body === 'string' ? body : JSON.stringify(body);
  }
  return prepared;
}

/**
 * A path parameter as exactly one percent-encoded segment: `/`, `?`, `#` and `%` are encoded, so
 * `a/b`, `%2e%2e` or `x?y=1` can change neither the path nor the query. A value that is a dot
 * segment (`.`, `..`) cannot be sent: URL parsers (and servers) collapse it, and any encoding of
 * it (`%2E%2E`) as well, so it is refused as an invalid argument instead.
 */
function pathSegment(text: string, argKey: string, op: OperationSpec): string {
  if (text === '.' || text === '..') {
    throw ToolError.invalidArgs(`path parameter "${argKey}" of ${op.operationId} (${op.method} ${op.path}) cannot be "${text}": a dot segment would change the path`);
  }
  return encodeURIComponent(text);
}

/** `simple` style: arrays as `a,b`, objects as `k,v,k,v`. */
function simpleValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(String).join(',');
  if (typeof value === 'object' && value !== null) return Object.entries(value).flat().map(String).join(',');
  return String(value);
}

function appendQuery(params: URLSearchParams, name: string, value: unknown, style: string, explode: boolean, json: boolean): void {
  if (json) return params.append(name, JSON.stringify(value));
  if (Array.isArray(value)) {
    const items = value.map(String);
    if (style === 'form' && explode) for (const item of items) params.append(name, item);
    else params.append(name, items.join(style === 'spaceDelimited' ? ' ' : style === 'pipeDelimited' ? '|' : ','));
    return;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value);
    if (style === 'deepObject') for (const [k, v] of entries) params.append(`${name}[${k}]`, String(v));
    else if (explode) for (const [k, v] of entries) params.append(k, String(v));
    else params.append(name, entries.flat().map(String).join(','));
    return;
  }
  params.append(name, String(value));
}

function formBody(body: unknown): string {
  if (typeof body !== 'object' || body === null) return String(body);
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) form.append(k, String(item));
    else form.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  return form.toString();
}

/**
 * Sends the request and reads the reply as one result: `{METHOD} {URL} → {STATUS}\n\n{BODY}`,
 * `isError` for a non-2xx status, a timeout or a network failure (all of which the model can
 * read). Aborting `signal` fails with a `cancelled` ToolError instead. Unsubscribing aborts the
 * HTTP request.
 *
 * ```
 * http:     -------r|
 * deadline: ------------------T|
 * result:   -------r|          (or T, "timed out", when the deadline comes first)
 * ```
 */
export function callOperation(prepared: PreparedRequest, settings: OpenApiSettings, signal: AbortSignal, scheduler: SchedulerLike): Observable<ToolResult> {
  const shownUrl = settings.redact(prepared.url.toString());
  const line = `${prepared.method} ${shownUrl} →`;
  const details = (extra: Partial<OpenApiCallDetails>): OpenApiCallDetails => ({ method: prepared.method, url: shownUrl, ...extra });

  const http$ = send(prepared, settings).pipe(
    map(({ status, contentType, bytes, total }): ToolResult => {
      const body = describeBody(bytes, contentType, settings.maxResponseBytes);
      const marker = body.truncated ? truncationMarker(settings.maxResponseBytes, total) : '';
      const result: ToolResult = {
        content: [{ type: 'text', text: settings.redact(`${line} ${status}\n\n${body.text}${marker}`) }],
        details: details({ status, bytes: bytes.length, truncated: marker.length > 0, ...(contentType ? { contentType } : {}) }),
      };
      if (status < 200 || status >= 300) result.isError = true;
      return result;
    }),
    catchError((error: unknown) =>
      of<ToolResult>({ content: [{ type: 'text', text: settings.redact(`${line} request failed: ${errorMessage(error)}`) }], isError: true, details: details({}) }),
    ),
  );
  const deadline$ = timer(settings.timeoutMs, scheduler).pipe(
    map((): ToolResult => ({
      content: [{ type: 'text', text: `${line} timed out after ${settings.timeoutMs} ms` }],
      isError: true,
      details: details({ timedOut: true }),
    })),
  );
  const aborted$ = signal.aborted
    ? throwError(() => cancelled(prepared, shownUrl))
    : fromEvent(signal, 'abort').pipe(mergeMap(() => throwError(() => cancelled(prepared, shownUrl))));
  return merge(aborted$, http$, deadline$).pipe(take(1));
}

function cancelled(prepared: PreparedRequest, shownUrl: string): ToolError {
  return new ToolError('cancelled', `${prepared.method} ${shownUrl} was cancelled`);
}

interface RawResponse {
  status: number;
  contentType: string | undefined;
  /** Reading stops once there is more than maxResponseBytes: the excess proves the body was cut. */
  bytes: Buffer;
  /** content-length, when the server sent one. */
  total: number | undefined;
}

/** One undici request; reading stops past the limit and the rest of the body is discarded. */
function send(prepared: PreparedRequest, settings: OpenApiSettings): Observable<RawResponse> {
  return new Observable<RawResponse>((subscriber) => {
    const controller = new AbortController();
    let settled = false;
    const run = async (): Promise<RawResponse> => {
      const response = await request(prepared.url, {
        method: prepared.method as 'GET',
        headers: prepared.headers,
        body: prepared.body ?? null,
        signal: controller.signal,
        ...(settings.dispatcher ? { dispatcher: settings.dispatcher } : {}),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size > settings.maxResponseBytes) {
          response.body.destroy();
          break;
        }
      }
      const length = Number(response.headers['content-length']);
      const contentType = header(response.headers['content-type']);
      return {
        status: response.statusCode,
        contentType,
        bytes: Buffer.concat(chunks, size),
        total: Number.isFinite(length) ? length : undefined,
      };
    };
    run().then(
      (response) => {
        settled = true;
        subscriber.next(response);
        subscriber.complete();
      },
      (error: unknown) => {
        settled = true;
        subscriber.error(error);
      },
    );
    return () => {
      if (!settled) controller.abort();
    };
  });
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const TEXTUAL = /^(text\/|application\/(?:[\w.+-]+\+)?(?:json|xml|yaml|x-yaml|javascript|x-www-form-urlencoded|graphql|problem\+json)\b)/i;

function describeBody(bytes: Buffer, contentType: string | undefined, max: number): { text: string; truncated: boolean } {
  if (contentType && !TEXTUAL.test(contentType)) {
    return { text: `[binary response: ${contentType}, ${bytes.length > max ? `more than ${max}` : bytes.length} bytes, not shown]`, truncated: false };
  }
  return truncateUtf8(bytes, max);
}

function truncationMarker(max: number, total: number | undefined): string {
  return `\n\n[truncated: showing the first ${max} bytes${total === undefined ? '' : ` of ${total}`}]`;
}
