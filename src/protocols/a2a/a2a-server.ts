import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { takeWhile } from 'rxjs';
import type { AgentCard, StreamResponse } from '@a2a-js/sdk';
import type { A2ARequestHandler, TaskStore } from '@a2a-js/sdk/server';
import { importOptionalPeer } from '../../util/optional-peer.js';
import { toAsyncIterable } from '../../sources/interop.js';
import { InMemorySessionStore } from '../../session/memory-store.js';
import type { SessionStore } from '../../session/store.js';
import { answerPreflight, guardRequest, refusedOrigin, type AllowedOrigins } from '../transport/node/http-guard.js';
import { headerOf, sendJson } from '../transport/node/http-io.js';
import { TASK_STATE, TERMINAL_STATES } from './a2a-parts.js';
import { buildAgentCard, setCardUrl, type A2aCardOptions, type A2aRoutes } from './a2a-card.js';
import { A2aExecutor } from './a2a-executor.js';
import { type A2aAgentSource, ContextAgents } from './context-agents.js';
import { type A2aPushOptions, pushNotificationsOf } from './push-notifications.js';

/** Which endpoint a request is for. */
export interface A2aAuthorizeContext {
  readonly route: 'card' | 'jsonrpc' | 'rest';
}

/**
 * Decides whether a request may go on: `true` lets it, `false` answers 403, a throw answers the
 * error's `status` (401 or 403; 401 when it has none) with its message. Sync or async. Agent cards
 * are usually public: return true for `route: 'card'` to let anyone discover the agent.
 */
export type A2aAuthorize = (req: IncomingMessage, context: A2aAuthorizeContext) => boolean | Promise<boolean>;

export interface A2aServerOptions {
  /** The agent card's name, description, version, public URL, security schemes (see {@link A2aCardOptions}). */
  card: A2aCardOptions;
  /**
   * Who may call (required): asked before every request is served; `'allow-all'` serves anyone
   * (keyless demos, tests), said explicitly. Check the bearer token or API key your card's
   * `securitySchemes` announce.
   */
  authorize: A2aAuthorize | 'allow-all';
  /** Where each context's conversation is kept (default: in memory). A file or Postgres store lets a restarted server continue a context. */
  store?: SessionStore;
  /** Where the SDK keeps tasks (default: its InMemoryTaskStore). */
  taskStore?: TaskStore;
  /** Path prefix of the endpoints (default ''): `{base}/.well-known/agent-card.json`, `{base}/jsonrpc`, `{base}/rest`. */
  basePath?: string;
  /** Pages of other origins that may call (CORS); by default only same-origin pages. */
  allowedOrigins?: AllowedOrigins;
  /** Request bodies over this many bytes get 413 (default 100 KiB, the SDK's JSON limit). */
  maxBodyBytes?: number;
  /** Agents kept in memory at most (default 256); idle ones past it are reloaded from the store when needed. */
  maxAgents?: number;
  /**
   * Text deltas within this many ms go out as one `working` status update (default 100; 0: one update
   * per delta). The SDK's task store copies the whole task, history included, on every update.
   */
  textChunkMs?: number;
  /** Push notifications (webhooks): off by default; on, with the URLs clients may register (see {@link A2aPushOptions}). */
  pushNotifications?: A2aPushOptions;
  /** Ids of status messages (default `crypto.randomUUID`). */
  ids?: () => string;
}

/** An A2A server for a phi-rx agent, on node:http. */
export interface A2aServer {
  /** The agent card (its interfaces are filled in once the URL is known). */
  readonly card: AgentCard;
  /** The A2A request handler, to mount on another transport of the SDK (gRPC). */
  readonly requestHandler: A2ARequestHandler;
  /** Serves the request if it is for one of the A2A routes and returns true; else returns false and leaves it alone. Never throws. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Listens on `port` (default 0: any free port) and `host` (default 127.0.0.1); resolves the base URL. */
  listen(port?: number, host?: string): Promise<string>;
  /** Stops listening (when `listen` was used) and aborts the runs still going. */
  close(): Promise<void>;
}

interface Peers {
  server: typeof import('@a2a-js/sdk/server');
  errors: typeof import('@a2a-js/sdk/errors');
  express: typeof import('@a2a-js/sdk/server/express');
  app: { default: () => ExpressApp };
}

/** The little of an Express app used here (Express is an optional peer; its types are not needed). */
interface ExpressApp {
  (req: IncomingMessage, res: ServerResponse): void;
  use(...handlers: unknown[]): unknown;
}

const FEATURE = 'phi-rx/a2a';

/**
 * Serves a phi-rx agent as an A2A 1.0 agent with the official `@a2a-js/sdk` (and Express, which its
 * HTTP handlers need; both optional peers, loaded now): the agent card at
 * `/.well-known/agent-card.json`, JSON-RPC at `/jsonrpc` and HTTP+JSON (REST) at `/rest`, each
 * request asked of `authorize` first. Each A2A context gets its own BasicAgent whose conversation is
 * kept in `store`. `SendMessage` / `SendStreamingMessage` run it: text streams as `working` status
 * messages, tool calls as status messages, the answer and the structured output as artifacts;
 * `CancelTask` aborts the run; an approval asks `input-required` and the client's reply answers it;
 * `SubscribeToTask` gives the task as it stands and then every later update exactly once (phi-rx
 * event ids in `metadata['phi-rx']`). Clients of A2A 0.3 get the SDK's version error.
 *
 * @example
 * const server = await a2aServer({ model, tools: [search] }, {
 *   card: { name: 'Researcher', description: 'Finds and summarises sources' },
 *   authorize: (req) => req.headers.authorization === `Bearer ${process.env.A2A_TOKEN}`,
 *   store: new FileSessionStore({ dir: './sessions' }),
 * });
 * const url = await server.listen(8080, '0.0.0.0'); // card at `${url}/.well-known/agent-card.json`
 */
export async function a2aServer(agent: A2aAgentSource, options: A2aServerOptions): Promise<A2aServer> {
  const o = options as Partial<A2aServerOptions> | undefined;
  if (o?.authorize !== 'allow-all' && typeof o?.authorize !== 'function') {
    throw new TypeError(
      `a2aServer: options.authorize is required: a function (req, { route }) => boolean | Promise<boolean> deciding who may call the agent, or 'allow-all' to serve anyone (keyless demos only); got ${o?.authorize === undefined ? 'nothing' : typeof o.authorize}`,
    );
  }
  const agents = new ContextAgents(agent, options.store ?? new InMemorySessionStore(), options.maxAgents);
  const base = (options.basePath ?? '').replace(/\/+$/, '');
  const routes: A2aRoutes = { card: `${base}/.well-known/agent-card.json`, jsonRpc: `${base}/jsonrpc`, rest: `${base}/rest` };
  const card = buildAgentCard(options.card, agents.probe().toolList, routes, options.pushNotifications !== undefined);
  const peers = await loadPeers();
  const push = options.pushNotifications ? pushNotificationsOf(options.pushNotifications, peers.server, peers.errors) : undefined;
  const executor = new A2aExecutor(agents, options.ids ?? randomUUID, options.textChunkMs);
  const inner = new peers.server.DefaultRequestHandler(card, options.taskStore ?? new peers.server.InMemoryTaskStore(), executor, undefined, push?.store, push?.sender);
  const requestHandler = withPhiRxRules(inner, executor, peers.errors);
  const app = peers.app.default();
  const userBuilder = peers.express.UserBuilder.noAuthentication;
  app.use(routes.card, peers.express.agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(routes.jsonRpc, peers.express.jsonRpcHandler({ requestHandler, userBuilder }));
  app.use(routes.rest, peers.express.restHandler({ requestHandler, userBuilder }));
  app.use((req: IncomingMessage, res: ServerResponse) => sendJson(res, 404, { error: `no A2A route ${req.method} ${req.url}` }));
  let urlKnown = options.card.url !== undefined;
  if (options.card.url !== undefined) setCardUrl(card, options.card.url, routes);
  const maxBody = options.maxBodyBytes ?? 100 * 1024;
  let server: Server | undefined;

  const routeOf = (url: string): A2aAuthorizeContext['route'] | undefined => {
    const path = url.split(/[?#]/)[0]!;
    if (path === routes.card) return 'card';
    if (path === routes.jsonRpc || path === `${routes.jsonRpc}/`) return 'jsonrpc';
    if (path === routes.rest || path.startsWith(`${routes.rest}/`)) return 'rest';
    return undefined;
  };

  const serve = async (req: IncomingMessage, res: ServerResponse, route: A2aAuthorizeContext['route']): Promise<void> => {
    if (req.method === 'OPTIONS') return answerPreflight(req, res, options.allowedOrigins, route === 'card' || (route === 'rest' && req.headers['access-control-request-method'] === 'GET') ? 'GET' : 'POST');
    const origin = refusedOrigin(req, options.allowedOrigins);
    if (origin !== undefined) return sendJson(res, 403, { error: `origin ${origin} may not call this server (options.allowedOrigins)` });
    const length = Number(headerOf(req, 'content-length') ?? 0);
    if (length > maxBody) {
      res.shouldKeepAlive = false;
      return sendJson(res, 413, { error: `the request body is over ${maxBody} bytes (options.maxBodyBytes)` });
    }
    if (!urlKnown) return sendJson(res, 500, { error: 'a2aServer: options.card.url is required when serving with handle() (the agent card names its endpoints with it)' });
    if (!(await allowed(options.authorize, req, res, { route }))) return;
    app(req, res);
  };

  const a2a: A2aServer = {
    card,
    requestHandler,
    handle(req, res) {
      const route = typeof req.url === 'string' ? routeOf(req.url) : undefined;
      if (!route) return false;
      guardRequest(res, 'a2aServer', () => serve(req, res, route));
      return true;
    },
    async listen(port = 0, host = '127.0.0.1') {
      if (server) throw new Error('a2aServer: listen() was called already');
      const s = createServer((req, res) => {
        if (!a2a.handle(req, res)) sendJson(res, 404, { error: `no A2A route ${req.method} ${req.url}` });
      });
      server = s;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(port, host, () => resolve());
      });
      const address = s.address() as AddressInfo;
      const url = options.card.url ?? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
      if (!urlKnown) setCardUrl(card, url, routes);
      urlKnown = true;
      return url.replace(/\/+$/, '');
    },
    async close() {
      executor.abortAll();
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
  return a2a;
}

/** The SDK first, then Express: one at a time, so that without both the error names the SDK. */
async function loadPeers(): Promise<Peers> {
  const server = await importOptionalPeer<Peers['server']>('@a2a-js/sdk/server', FEATURE);
  const errors = await importOptionalPeer<Peers['errors']>('@a2a-js/sdk/errors', FEATURE);
  const express = await importOptionalPeer<Peers['express']>('@a2a-js/sdk/server/express', FEATURE);
  const app = await importOptionalPeer<Peers['app']>('express', FEATURE);
  return { server, errors, express, app };
}

/** Asks `authorize`; answers 403 / 401 itself and resolves false when the request may not go on. */
async function allowed(authorize: A2aAuthorize | 'allow-all', req: IncomingMessage, res: ServerResponse, context: A2aAuthorizeContext): Promise<boolean> {
  if (authorize === 'allow-all') return true;
  let ok: boolean;
  try {
    ok = (await authorize(req, context)) === true;
  } catch (e) {
    const status = (e as { status?: unknown } | null)?.status;
    sendJson(res, status === 401 || status === 403 ? status : 401, { error: e instanceof Error ? e.message : 'not authorized' });
    return false;
  }
  if (!ok) sendJson(res, 403, { error: `not allowed to call this agent (${context.route})` });
  return ok;
}

/**
 * The SDK's request handler with phi-rx's rules on top:
 * - an exact `SubscribeToTask` for tasks this server is running: the task as it stands, then every
 *   later update once, taken in one step (the SDK's own reads the task from the store while
 *   listening to the bus). Ends when the task waits for input or ends, as the SDK's does. Other
 *   tasks go to the SDK.
 * - a message to a task that is at work (not waiting for input) is refused with
 *   `UnsupportedOperationError`: the SDK would serve it on the task's event bus, which breaks the
 *   stream of the request the task is running for.
 */
function withPhiRxRules(inner: A2ARequestHandler, executor: A2aExecutor, errors: Peers['errors']): A2ARequestHandler {
  const resubscribe: A2ARequestHandler['resubscribe'] = async function* (params, context) {
    const run = executor.runOf(params.id);
    if (!run || run.ended) return yield* inner.resubscribe(params, context);
    const updates = run.snapshot().pipe(takeWhile((r) => !pauses(r), true));
    yield* toAsyncIterable(updates);
  };
  const checkBusy = (params: Parameters<A2ARequestHandler['sendMessage']>[0]): void => {
    const taskId = params.message?.taskId;
    const run = taskId ? executor.runOf(taskId) : undefined;
    if (run && !run.ended && run.state !== TASK_STATE.inputRequired) {
      throw new errors.UnsupportedOperationError(`task ${taskId} is at work: send a message to it when it asks for input (input-required), or cancel it (CancelTask)`);
    }
  };
  const sendMessage: A2ARequestHandler['sendMessage'] = (params, context) => {
    checkBusy(params);
    return inner.sendMessage(params, context);
  };
  const sendMessageStream: A2ARequestHandler['sendMessageStream'] = async function* (params, context) {
    checkBusy(params);
    yield* inner.sendMessageStream(params, context);
  };
  const own: Record<string | symbol, unknown> = { resubscribe, sendMessage, sendMessageStream };
  return new Proxy(inner, {
    get(target, key) {
      if (key in own) return own[key];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function pauses(response: StreamResponse): boolean {
  const p = response.payload;
  const state = p?.$case === 'statusUpdate' ? p.value.status?.state : p?.$case === 'task' ? p.value.status?.state : undefined;
  return state !== undefined && (state === TASK_STATE.inputRequired || TERMINAL_STATES.has(state));
}
