import type { AgUiRunAgentInput } from './ag-ui-event.js';
import type { AgUiAgentOptions } from './run-ag-ui.js';
import { importOptionalPeer } from '../../util/optional-peer.js';

/** What a request asks: to run the agent for this input. */
export interface AgUiAuthorizeContext {
  readonly threadId: string;
  readonly runId: string;
  readonly input: AgUiRunAgentInput;
}

/**
 * Decides whether a request may run the agent: `true` lets it, `false` answers 403, a throw answers
 * the error's `status` (401 or 403; 401 when it has none) with its message. Sync or async.
 */
export type AgUiAuthorize<R> = (request: R, context: AgUiAuthorizeContext) => boolean | Promise<boolean>;

/** The handlers' options: the agent, who may run it, and the limits. */
export interface AgUiHandlerOptions<R> extends AgUiAgentOptions {
  /** Who may run the agent (required): a check, or `'allow-all'` said explicitly (keyless demos, tests). */
  authorize: AgUiAuthorize<R> | 'allow-all';
  /** The largest RunAgentInput body, in bytes (default 1 MiB); past it, 413. */
  maxBodyBytes?: number;
  /**
   * The most bytes of events held for a client that does not read them (default 16 MiB): past it,
   * the run is aborted and the response ended, so a stalled client cannot make the server hold a
   * whole run.
   */
  maxBufferedBytes?: number;
  /** Pages of other origins that may call (CORS); by default only same-origin pages (`Origin` matching `Host`). */
  allowedOrigins?: readonly string[] | ((origin: string) => boolean);
}

/** The default body limit of the handlers. */
export const MAX_AG_UI_BODY_BYTES = 1024 * 1024;

/** The default limit of event bytes held for a client that does not read. */
export const MAX_AG_UI_BUFFERED_BYTES = 16 * 1024 * 1024;

/** Throws an error naming the option unless `authorize` is a function or `'allow-all'`. */
export function checkAgUiAuthorize(authorize: unknown, who: string): void {
  if (authorize === 'allow-all' || typeof authorize === 'function') return;
  throw new TypeError(
    `${who}: options.authorize is required: a function (request, { threadId, runId, input }) => boolean | Promise<boolean> ` +
      `deciding who may run the agent, or 'allow-all' to let anyone run it (keyless demos only); got ${authorize === undefined ? 'nothing' : typeof authorize}`,
  );
}

/** The answer of `authorize`: undefined when allowed, else the status and message to answer. */
export async function askAuthorize<R>(authorize: AgUiAuthorize<R> | 'allow-all', request: R, context: AgUiAuthorizeContext): Promise<{ status: 401 | 403; error: string } | undefined> {
  if (authorize === 'allow-all') return undefined;
  try {
    if ((await authorize(request, context)) === true) return undefined;
    return { status: 403, error: `not allowed to run thread "${context.threadId}"` };
  } catch (e) {
    const status = (e as { status?: unknown } | null)?.status;
    return { status: status === 403 ? 403 : 401, error: e instanceof Error ? e.message : 'not authorized' };
  }
}

/** Whether `origin` is listed in `allowed`. */
export function isAllowedOrigin(origin: string, allowed: AgUiHandlerOptions<unknown>['allowedOrigins']): boolean {
  if (allowed === undefined) return false;
  if (typeof allowed !== 'function') return allowed.includes(origin);
  try {
    return allowed(origin) === true;
  } catch {
    return false;
  }
}

/** `Origin` may call: none sent, same origin as `host`, or listed. */
export function originMayCall(origin: string | undefined | null, host: string | undefined | null, allowed: AgUiHandlerOptions<unknown>['allowedOrigins']): boolean {
  if (origin === undefined || origin === null) return true;
  if (isAllowedOrigin(origin, allowed)) return true;
  try {
    return host !== undefined && host !== null && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/** What encodes events for a client: SSE, or AG-UI's protobuf framing when its `Accept` asks for it. */
export interface AgUiEncoder {
  getContentType(): string;
  encodeBinary(event: object): Uint8Array;
}

/** AG-UI's protobuf media type. */
export const AG_UI_PROTO_MEDIA_TYPE = 'application/vnd.ag-ui.event+proto';

/**
 * `@ag-ui/encoder`'s EventEncoder for a request's `Accept` (an optional peer, loaded on first use):
 * protobuf only when `Accept` names AG-UI's media type, SSE otherwise (the encoder alone would pick
 * protobuf for the `*` + `/*` that `fetch` and curl send by default).
 */
export async function agUiEncoder(accept: string | undefined | null): Promise<AgUiEncoder> {
  const { EventEncoder } = await importOptionalPeer<{ EventEncoder: new (params?: { accept?: string }) => AgUiEncoder }>('@ag-ui/encoder', 'phi-rx/ag-ui (the AG-UI server handlers)');
  return new EventEncoder(accept?.toLowerCase().includes(AG_UI_PROTO_MEDIA_TYPE) ? { accept } : {});
}
