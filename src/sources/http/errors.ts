import { ProviderError, isContextOverflowMessage, isProviderError } from '../../types/errors.js';

/**
 * How HTTP and stream failures become typed {@link ProviderError}s. Every provider goes through
 * these functions, so a status code or an error code means the same thing whichever API sent it.
 *
 * | Cause                                                      | kind              | retryable |
 * |------------------------------------------------------------|-------------------|-----------|
 * | HTTP 429, HTTP 529, or any text saying "overloaded"        | `rateLimited`     | yes (`retryAfterMs` from `retry-after-ms` / `retry-after`) |
 * | ECONNREFUSED, ECONNRESET, socket hang up, EPIPE, timeouts, DNS failures, idle stream, stream ended early | `network` | yes |
 * | HTTP 5xx (500, 502, 503, 504, ...) and HTTP 408           | `network`         | yes: a server-side hiccup, worth another try |
 * | HTTP 401, 403                                              | `auth`            | no |
 * | HTTP 400 / 413 whose text has a context-overflow phrase    | `contextOverflow` | no (the loop compacts instead) |
 * | any other 4xx                                              | `api`             | no |
 *
 * Messages keep the provider's own words, prefixed with the status; secrets (API keys, bearer
 * tokens, `key=` query parameters) are replaced with `[REDACTED]` before they reach a message.
 */

/** Longest provider text kept in an error message. */
const MAX_MESSAGE_CHARS = 2_000;
const REDACTED = '[REDACTED]';

/** What an HTTP error needs to be classified; header names are matched case-insensitively. */
export interface HttpErrorInfo {
  status: number;
  /** Response headers; a plain record or anything with `get(name)` (fetch `Headers`). */
  headers?: HeaderSource;
  /** The raw response body text (JSON or not). */
  body: string;
  provider: string;
  /** Values that must never appear in the message (the API key). */
  secrets?: readonly string[];
  /** Epoch ms used to turn an HTTP-date `retry-after` into a delay. Default `Date.now()`. */
  now?: number;
}

export type HeaderSource =
  | Record<string, string | string[] | undefined>
  | { get(name: string): string | null | undefined };

/** Classifies a non-2xx HTTP response. */
export function classifyHttpError(info: HttpErrorInfo): ProviderError {
  const { status, provider } = info;
  const providerText = providerMessageOf(info.body) || `HTTP ${status}`;
  const message = redactSecrets(`${provider} HTTP ${status}: ${truncate(providerText)}`, info.secrets);
  const init = { status, provider };
  const lowered = `${providerText} ${errorTypeOf(info.body) ?? ''}`.toLowerCase();

  if (status === 429 || status === 529 || lowered.includes('overloaded')) {
    return ProviderError.rateLimited(message, retryAfterMs(info.headers, info.now ?? Date.now()), init);
  }
  if (status === 401 || status === 403) return ProviderError.auth(message, init);
  if ((status === 400 || status === 413) && isContextOverflowMessage(providerText)) {
    return ProviderError.contextOverflow(message, init);
  }
  if (status === 408 || status >= 500) return ProviderError.network(message, init);
  return ProviderError.api(message, init);
}

/** What a mid-stream error event said: its text and, when the API gives them, a type/code and status. */
export interface StreamErrorInfo {
  message: string;
  /** The API's error type or code (`overloaded_error`, `rate_limit_exceeded`, `insufficient_quota`, ...). */
  type?: string | undefined;
  status?: number | undefined;
  provider: string;
  secrets?: readonly string[];
}

/**
 * Classifies an error the server reported inside a 200 stream (Anthropic `event: error`, an
 * OpenAI-style `{"error": ...}` chunk, Groq `event: error`) the same way as the HTTP status it
 * stands for.
 */
export function classifyStreamError(info: StreamErrorInfo): ProviderError {
  const type = (info.type ?? '').toLowerCase();
  const text = info.message || info.type || 'unknown error';
  const message = redactSecrets(`${info.provider} stream error${info.type ? ` (${info.type})` : ''}: ${truncate(text)}`, info.secrets);
  const init = { provider: info.provider, ...(info.status === undefined ? {} : { status: info.status }) };
  const lowered = `${text} ${type}`.toLowerCase();

  if (info.status === 429 || info.status === 529 || /overloaded|rate_limit|rate limit|too_many_requests/.test(lowered)) {
    return ProviderError.rateLimited(message, undefined, init);
  }
  if (info.status === 401 || info.status === 403 || /authentication|permission|unauthorized|invalid_api_key/.test(type)) {
    return ProviderError.auth(message, init);
  }
  if (isContextOverflowMessage(text) || isContextOverflowMessage(type)) return ProviderError.contextOverflow(message, init);
  if (
    (info.status !== undefined && (info.status >= 500 || info.status === 408)) ||
    /api_error|server_error|internal|timeout|unavailable/.test(type)
  ) {
    return ProviderError.network(message, init);
  }
  return ProviderError.api(message, init);
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
]);
const NETWORK_TEXT = /socket hang up|other side closed|terminated|timed? ?out|econnre|network|premature close/i;

/**
 * Classifies a transport failure (thrown by undici or Node's net stack). ProviderErrors pass
 * through unchanged; connection and timeout failures become `network`; anything else `other`.
 */
export function classifyNetworkError(error: unknown, provider: string, secrets?: readonly string[]): ProviderError {
  if (isProviderError(error)) return error;
  const code = errorCodeOf(error);
  const text = describeError(error);
  const message = redactSecrets(`${provider} request failed: ${text}`, secrets);
  if ((code !== undefined && NETWORK_CODES.has(code)) || NETWORK_TEXT.test(text)) {
    return ProviderError.network(message, { provider, cause: error });
  }
  return ProviderError.other(message, { provider, cause: error });
}

/**
 * The server's requested delay in ms: `retry-after-ms` (ms), else `retry-after` as seconds or as
 * an HTTP date (relative to `now`). Undefined when absent or unparseable; never negative.
 */
export function retryAfterMs(headers: HeaderSource | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headerValue(headers, 'retry-after-ms');
  if (ms !== undefined && ms.trim() !== '') {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return Math.round(n);
  }
  const after = headerValue(headers, 'retry-after');
  if (after === undefined || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Reads one header from a plain record (any case) or a `Headers`-like object. */
export function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null | undefined }).get(name) ?? undefined;
  }
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== lower || value === undefined) continue;
    return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}

/**
 * Replaces every secret (and anything that looks like an API key or bearer token) with
 * `[REDACTED]`. Used on every error message built from request or response text.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    // Very short values would redact ordinary words; real keys are long.
    if (secret && secret.length >= 6) out = out.split(secret).join(REDACTED);
  }
  return out
    .replace(/([?&](?:key|api-key|api_key|access_token)=)[^&\s"']+/gi, `$1${REDACTED}`)
    .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g, `$1${REDACTED}`)
    .replace(/\bsk-[A-Za-z0-9_-]{16,}/g, REDACTED)
    .replace(/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED);
}

/**
 * The human-readable message inside an error body: `error.message` (Anthropic, OpenAI, Azure),
 * `message`, a Google-style `[{error: ...}]` array, or the raw text when it is not JSON.
 */
export function providerMessageOf(body: string): string {
  const trimmed = body.trim();
  if (trimmed === '') return '';
  const parsed = tryParseJson(trimmed);
  if (parsed === undefined) return trimmed;
  const found = findErrorField(parsed, 'message');
  return typeof found === 'string' && found !== '' ? found : trimmed;
}

/** The error type or code inside an error body (`overloaded_error`, `context_length_exceeded`, ...). */
export function errorTypeOf(body: string): string | undefined {
  const parsed = tryParseJson(body.trim());
  if (parsed === undefined) return undefined;
  const type = findErrorField(parsed, 'type') ?? findErrorField(parsed, 'code') ?? findErrorField(parsed, 'status');
  return typeof type === 'string' ? type : undefined;
}

function findErrorField(value: unknown, field: string): unknown {
  const root = Array.isArray(value) ? value[0] : value;
  if (root === null || typeof root !== 'object') return undefined;
  const record = root as Record<string, unknown>;
  const inner = record['error'];
  if (inner !== null && typeof inner === 'object') {
    const v = (inner as Record<string, unknown>)[field];
    if (v !== undefined && v !== null) return v;
  }
  if (typeof inner === 'string' && field === 'message') return inner;
  return record[field] ?? undefined;
}

function tryParseJson(text: string): unknown {
  if (!text.startsWith('{') && !text.startsWith('[')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function errorCodeOf(error: unknown): string | undefined {
  // undici and fetch wrap the socket error in `cause`; the code may sit a level or two down.
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      parts.push(typeof code === 'string' && !current.message.includes(code) ? `${current.message} (${code})` : current.message);
      current = current.cause;
    } else {
      parts.push(String(current));
      break;
    }
  }
  return parts.filter((p, i) => p && parts.indexOf(p) === i).join(': ') || 'unknown error';
}

function truncate(text: string, max = MAX_MESSAGE_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more chars)`;
}

/** Shortens a piece of received data for an error message. */
export function excerpt(text: string, max = 200): string {
  return truncate(text, max);
}
