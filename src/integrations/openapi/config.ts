import { inspect } from 'node:util';
import type { SchedulerLike } from 'rxjs';
import type { Dispatcher } from 'undici';

/** The spec's OpenApiConfig defaults: 64 KiB of response body, 30 s per request. */
export const DEFAULT_MAX_RESPONSE_BYTES = 65_536;
export const DEFAULT_OPENAPI_TIMEOUT_MS = 30_000;

export const REDACTED = '****';

/** How each request authenticates. Build with {@link OpenApiAuth} so the secret never prints. */
export type OpenApiAuth =
  | { kind: 'none' }
  | { kind: 'bearer'; token: string }
  | { kind: 'apiKey'; in: 'header' | 'query'; name: string; value: string };

/** Which operations become tools. Operations without an operationId never do. */
export type OperationFilter =
  | { kind: 'all' }
  | { kind: 'byOperationId'; ids: readonly string[] }
  | { kind: 'byTag'; tags: readonly string[] }
  | { kind: 'byPathPrefix'; prefix: string };

export interface OpenApiConfig {
  /** Overrides the spec's `servers[0].url`; a trailing slash is dropped. */
  baseUrl?: string;
  auth?: OpenApiAuth;
  /** Added to every request. Values of headers named like credentials are redacted like auth. */
  customHeaders?: Readonly<Record<string, string>>;
  /** Response bodies are cut at a UTF-8 boundary after this many bytes. Default 65 536. */
  maxResponseBytes?: number;
  /** Per-request limit, ms. Default 30 000. */
  timeoutMs?: number;
  /** Tool names become `{namePrefix}__{operationId}`. */
  namePrefix?: string;
  /**
   * undici dispatcher for the API calls (proxy, custom TLS), and for fetching specs from trusted
   * hosts (`allowPrivateRefs`, `trustedHosts`). Any other spec or `$ref` URL is fetched over
   * phi-rx's own connection, made to the address it checked.
   */
  dispatcher?: Dispatcher;
  /** Time source of the per-request timeout when loading a spec by URL. Tool calls use the loop's scheduler. */
  scheduler?: SchedulerLike;
  /**
   * Let the spec URL, its `$ref`s and their redirects reach loopback, private-network, link-local,
   * unique-local and shared (CGNAT) addresses (`127.0.0.1`, `::1`, `10.x`, `192.168.x`,
   * `169.254.x`, `fc00::/7`, `100.64.x`...). Off by default: a spec must not make this process
   * fetch internal endpoints. The check runs on the addresses each host resolves to, and the
   * connection goes to the address checked.
   */
  allowPrivateRefs?: boolean;
  /**
   * Host names (as in the URL, e.g. `specs.internal`) a spec may be fetched from whatever they
   * resolve to: a narrower trust than `allowPrivateRefs`. Every other URL is still checked.
   */
  trustedHosts?: readonly string[];
  /**
   * Resolves a host name to its addresses before the check (default: the system resolver,
   * `dns.lookup`). For tests and for a resolver of your own.
   */
  lookup?: OpenApiLookup;
  /**
   * The directory the file `$ref`s of a spec loaded with `openApiToolsFromFile` may read (default:
   * the spec file's directory). Specs fetched from a URL or passed inline never read files.
   */
  baseDir?: string;
}

/** A host name to the addresses it resolves to, as `dns.promises.lookup(host, { all: true })` gives them. */
export type OpenApiLookup = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

/** Objects whose secret fields print as "****" in `String()`, `JSON.stringify` and `console.log`. */
function redacting<T extends object>(value: T, secretKeys: readonly (keyof T)[]): T {
  const shown = (): Record<string, unknown> => {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    for (const key of secretKeys) copy[key as string] = REDACTED;
    return copy;
  };
  Object.defineProperties(value, {
    toJSON: { value: shown, enumerable: false },
    toString: { value: () => JSON.stringify(shown()), enumerable: false },
    [inspect.custom]: { value: () => shown(), enumerable: false },
  });
  return Object.freeze(value);
}

export const OpenApiAuth = {
  none: (): OpenApiAuth => ({ kind: 'none' }),
  /** `Authorization: Bearer {token}`. */
  bearer: (token: string): OpenApiAuth => redacting({ kind: 'bearer' as const, token }, ['token']),
  /** `{header}: {value}` on every request. */
  apiKey: (header: string, value: string): OpenApiAuth =>
    redacting({ kind: 'apiKey' as const, in: 'header' as const, name: header, value }, ['value']),
  /** `?{param}={value}` on every request. */
  apiKeyQuery: (param: string, value: string): OpenApiAuth =>
    redacting({ kind: 'apiKey' as const, in: 'query' as const, name: param, value }, ['value']),
};

export const OperationFilter = {
  all: (): OperationFilter => ({ kind: 'all' }),
  byOperationId: (...ids: string[]): OperationFilter => ({ kind: 'byOperationId', ids }),
  byTag: (...tags: string[]): OperationFilter => ({ kind: 'byTag', tags }),
  byPathPrefix: (prefix: string): OperationFilter => ({ kind: 'byPathPrefix', prefix }),
};

const SENSITIVE_HEADER = /authorization|cookie|token|secret|key|password|credential/i;

/**
 * The config the tools run with: defaults filled in and every secret known, so it can be
 * redacted from URLs, errors and bodies. Prints without secrets however it is printed.
 */
export class OpenApiSettings {
  readonly auth: OpenApiAuth;
  readonly customHeaders: Readonly<Record<string, string>>;
  readonly maxResponseBytes: number;
  readonly timeoutMs: number;
  readonly namePrefix: string | undefined;
  readonly dispatcher: Dispatcher | undefined;
  readonly scheduler: SchedulerLike | undefined;
  readonly baseUrlOverride: string | undefined;
  readonly allowPrivateRefs: boolean;
  /** Lower-case, without brackets. */
  readonly trustedHosts: readonly string[];
  readonly lookup: OpenApiLookup | undefined;
  readonly baseDir: string | undefined;
  /** Values that must never appear in anything we produce. */
  readonly secrets: readonly string[];

  constructor(config: OpenApiConfig = {}) {
    this.auth = config.auth ?? { kind: 'none' };
    this.customHeaders = { ...config.customHeaders };
    this.maxResponseBytes = positive(config.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
    this.timeoutMs = positive(config.timeoutMs, DEFAULT_OPENAPI_TIMEOUT_MS, 'timeoutMs');
    this.namePrefix = config.namePrefix;
    this.dispatcher = config.dispatcher;
    this.scheduler = config.scheduler;
    this.baseUrlOverride = config.baseUrl;
    this.allowPrivateRefs = config.allowPrivateRefs === true;
    this.trustedHosts = (config.trustedHosts ?? []).map((h) => h.replace(/^\[|\]$/g, '').toLowerCase());
    this.lookup = config.lookup;
    this.baseDir = config.baseDir;
    const secrets: string[] = [];
    if (this.auth.kind === 'bearer') secrets.push(this.auth.token);
    if (this.auth.kind === 'apiKey') secrets.push(this.auth.value);
    for (const [name, value] of Object.entries(this.customHeaders)) if (SENSITIVE_HEADER.test(name)) secrets.push(value);
    this.secrets = secrets.filter((s) => s.length > 0);
  }

  /** `text` with every secret replaced by "****". */
  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join(REDACTED);
    if (this.auth.kind === 'apiKey' && this.auth.in === 'query') {
      // The key's value in a URL, however it was encoded.
      out = out.replace(new RegExp(`([?&]${escapeRegExp(encodeURIComponent(this.auth.name))}=)[^&#\\s]*`, 'g'), `$1${REDACTED}`);
    }
    return out;
  }

  toJSON(): Record<string, unknown> {
    const auth: Record<string, unknown> = { ...this.auth };
    if ('token' in auth) auth.token = REDACTED;
    if ('value' in auth) auth.value = REDACTED;
    const headers = Object.fromEntries(
      Object.entries(this.customHeaders).map(([k, v]) => [k, SENSITIVE_HEADER.test(k) ? REDACTED : v]),
    );
    return {
      baseUrl: this.baseUrlOverride,
      auth,
      customHeaders: headers,
      maxResponseBytes: this.maxResponseBytes,
      timeoutMs: this.timeoutMs,
      namePrefix: this.namePrefix,
      allowPrivateRefs: this.allowPrivateRefs,
      trustedHosts: this.trustedHosts,
      baseDir: this.baseDir,
    };
  }

  toString(): string {
    return `OpenApiSettings ${JSON.stringify(this.toJSON())}`;
  }

  [inspect.custom](): Record<string, unknown> {
    return this.toJSON();
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`OpenApiConfig.${name} must be a positive number, got ${value}`);
  return value;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
