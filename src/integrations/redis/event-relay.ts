import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerOf, readCommand, sendJson } from '../../protocols/transport/node/http-io.js';
import { admitRoute, authorized, checkAuthorize, corsHeaders, guardRequest, type AllowedOrigins, type AuthorizeOption } from '../../protocols/transport/node/http-guard.js';
import { SseConnection } from '../../protocols/transport/node/sse-connection.js';
import { asyncScheduler, map, type SchedulerLike, type Subscription } from 'rxjs';
import type { RunCommand } from '../../protocols/transport/commands.js';
import { withHeartbeats } from '../../protocols/transport/heartbeats.js';
import { encodeTransportFrame, HEARTBEAT_FRAME, toWireEvent, TRANSPORT_EVENTS, type TransportErrorData } from '../../protocols/transport/wire.js';
import { checkStreamId, type RedisCommander } from './commands.js';
import { readStream, RemoteRunError, StreamTrimmedError, type StreamedEvent } from './read-stream.js';
import { RedisReaderPool, type RedisReader } from './reader-pool.js';
import { CONTROL_TTL_MS, controlKeyOf, encodeRunControl, type RunControl } from './run-control.js';

export type { RedisReader } from './reader-pool.js';

export interface RedisEventRelayOptions {
  /**
   * Who may read a run's events and send it commands (required): asked before events are served
   * and before each command; `false` answers 403, a throw 401 (or the error's `status`, 401 / 403).
   * `'allow-all'` serves anyone who has a run id — a keyless demo's choice, said explicitly.
   */
  authorize: AuthorizeOption;
  /** Pages of other origins that may call (CORS); by default only same-origin pages (`Origin` matching `Host`), others get 403. */
  allowedOrigins?: AllowedOrigins;
  /** Path prefix of the routes (default `/runs`): `GET {base}/{id}/events`, `POST {base}/{id}/commands`. */
  basePath?: string;
  /** The Redis stream a run's worker appends to (default `run:<runId>`, as in the README). */
  streamKeyOf?: (runId: string) => string;
  /** How long one `XREAD BLOCK` of a client waits, ms (default 1000). */
  blockMs?: number;
  /** Redis connections the clients' blocking reads share (default 4), opened with `openReader` as needed. */
  readers?: number;
  /** A control stream expires this long after its last command (default 6 hours; the worker's `readRunControl` renews it). */
  controlTtlMs?: number;
  /** Entries read from Redis at a time for one client (default 100); the next are read once the client took these. */
  batchSize?: number;
  /** Event streams open at once per run (default 64) and in all (default 1024); past them, 503. */
  maxConnectionsPerRun?: number;
  maxConnections?: number;
  /** A heartbeat comment after this many ms of silence on a connection (default 15,000). */
  heartbeatMs?: number;
  /** Reconnect delay the server advises clients (SSE `retry:`), ms (default 500). */
  retryMs?: number;
  /** Time source of the heartbeats (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
}

const MAX_COMMAND_BYTES = 64 * 1024;
const MAX_U64 = 2n ** 64n - 1n;

/**
 * Adds a control to a run's control stream only if the run's stream exists and has not ended, and
 * renews the control stream's expiry. KEYS: run stream, control stream; ARGV: maxLen, ttl ms, data.
 * Replies with the entry id, 0 (no such run) or -1 (the run is over).
 */
const SEND_CONTROL = `if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if last then
  local fields = last[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'kind' and (fields[i + 1] == 'complete' or fields[i + 1] == 'error') then return -1 end
  end
end
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], '*', 'data', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return id`;

interface Connection {
  subscription?: Subscription;
  readonly stream: SseConnection;
}

/**
 * Serves, from a web process, runs that workers execute elsewhere: the node:http side of
 * `phi-rx/transport` (`fromEventStream`, `runCommands`) over the Redis streams `appendToStream`
 * writes. `GET {base}/{id}/events` reads the run's stream from the client's `Last-Event-ID` on
 * (the clients' blocking reads share a pool of `readers` connections) and writes one SSE frame
 * per entry whose `id:` is the Redis stream entry id (`<ms>-<n>`), the same in every web process:
 * a browser that reconnects to any of them resumes exactly after the last event it got, with no
 * gap and no duplicate. Frames are self-contained (a `MessageUpdate` without its partial message,
 * everything else whole), so a frame does not depend on which process sent the ones before it.
 * The run's end gives a `phi-rx:end` frame; a failed run (`RemoteRunError`) a `phi-rx:error`
 * `RunFailed`, entries trimmed before they were sent (`StreamTrimmedError`) a `phi-rx:error`
 * `ResumeGap`; a `Last-Event-ID` that is no stream id a 400. `POST {base}/{id}/commands`
 * (`application/json`: `steer`, `followUp`, `abort`, `approve`, `cancelToolCall`, as `runCommands`
 * sends them) goes to the worker's control stream (expiring `controlTtlMs` after the last one);
 * 404 when the run has no stream (nothing is written), 409 once it has ended. Every request is
 * asked of `authorize` first (a run id is a bearer capability); `handle` never throws.
 *
 * @example
 * const redis = await createClient({ url }).connect();
 * const relay = new RedisEventRelay(redis, () => redis.duplicate().connect(), {
 *   authorize: (req, { runId }) => ownerOf(runId) === userOf(req),
 * });
 * http.createServer((req, res) => {
 *   if (!relay.handle(req, res)) res.writeHead(404).end();
 * }).listen(8080);
 * // any web process: fromEventStream(`/runs/${id}/events`), runCommands(`/runs/${id}/commands`)
 */
export class RedisEventRelay {
  private readonly connections = new Set<Connection>();
  private readonly perRun = new Map<string, number>();
  private readonly routes: RegExp;
  private readonly streamKeyOf: (runId: string) => string;
  private readonly authorize: AuthorizeOption;
  private readonly pool: RedisReaderPool;

  /**
   * @param client sends control messages and checks whether a run exists or has ended (never blocks).
   * @param openReader a new connection for the pool of blocking readers (node-redis: `() => client.duplicate().connect()`).
   */
  constructor(
    private readonly client: RedisCommander,
    openReader: () => Promise<RedisReader>,
    private readonly options: RedisEventRelayOptions,
  ) {
    this.authorize = checkAuthorize((options as RedisEventRelayOptions | undefined)?.authorize, 'new RedisEventRelay');
    const base = (options.basePath ?? '/runs').replace(/\/+$/, '');
    this.routes = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([^/?#]+)/(events|commands)(?:[?#].*)?$`);
    this.streamKeyOf = options.streamKeyOf ?? ((runId) => `run:${runId}`);
    this.pool = new RedisReaderPool(client, openReader, options.readers ?? 4);
  }

  /**
   * Handles the request if it is one of the relay's routes and returns true; else returns false and
   * leaves it alone. Never throws: whatever the request, the client gets an answer.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const match = typeof req.url === 'string' ? this.routes.exec(req.url) : null;
    if (!match) return false;
    guardRequest(res, 'RedisEventRelay', () => this.route(req, res, match[1]!, match[2]!));
    return true;
  }

  /** Ends every open connection and closes the pooled reader connections. */
  async close(): Promise<void> {
    for (const connection of this.connections) {
      connection.subscription?.unsubscribe();
      connection.stream.end();
    }
    this.connections.clear();
    await this.pool.close();
  }

  private route(req: IncomingMessage, res: ServerResponse, rawId: string, route: string): Promise<void> | void {
    const runId = admitRoute(req, res, rawId, route, this.options.allowedOrigins);
    if (runId === undefined) return;
    return route === 'events' ? this.serveEvents(req, res, runId) : this.serveCommand(req, res, runId);
  }

  private async serveEvents(req: IncomingMessage, res: ServerResponse, runId: string): Promise<void> {
    const key = this.streamKeyOf(runId);
    const lastEventId = headerOf(req, 'last-event-id');
    try {
      checkStreamId(lastEventId ?? '0', `run "${runId}"`);
      if (lastEventId !== undefined && lastEventId.split('-').some((part) => part.length > 20 || BigInt(part) > MAX_U64)) {
        throw new RangeError(`${JSON.stringify(lastEventId.slice(0, 60))} is out of range for a Redis stream id (64-bit parts)`);
      }
    } catch (e) {
      return sendJson(res, 400, { error: `header Last-Event-ID: ${(e as Error).message}` });
    }
    if (!(await authorized(this.authorize, req, res, { runId, action: 'events' }))) return;
    const { maxConnectionsPerRun = 64, maxConnections = 1024 } = this.options;
    const open = this.perRun.get(runId) ?? 0;
    if (open >= maxConnectionsPerRun || this.connections.size >= maxConnections) {
      res.setHeader('retry-after', '5');
      const which = open >= maxConnectionsPerRun ? `${maxConnectionsPerRun} event streams of run "${runId}"` : `${maxConnections} event streams`;
      return sendJson(res, 503, { error: `this server already serves ${which} (options.maxConnectionsPerRun / maxConnections)` });
    }
    if (req.destroyed) return;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no',
      ...corsHeaders(req, this.options.allowedOrigins),
    });
    let dropped = false;
    const connection: Connection = { stream: new SseConnection(res) };
    const drop = () => {
      if (dropped) return;
      dropped = true;
      connection.subscription?.unsubscribe();
      this.connections.delete(connection);
      const left = (this.perRun.get(runId) ?? 1) - 1;
      if (left > 0) this.perRun.set(runId, left);
      else this.perRun.delete(runId);
    };
    this.connections.add(connection);
    this.perRun.set(runId, open + 1);
    res.once('close', drop);
    connection.stream.write(`retry: ${this.options.retryMs ?? 500}\n\n`);
    const pace = () => connection.stream.drained();
    connection.subscription = readStream(this.pool, key, { after: lastEventId ?? '0', blockMs: this.options.blockMs, count: this.options.batchSize ?? 100, pace })
      .pipe(map(frameOf), withHeartbeats(this.options.heartbeatMs ?? 15_000, HEARTBEAT_FRAME, this.options.scheduler ?? asyncScheduler))
      .subscribe({
        next: (text) => connection.stream.write(text),
        error: (error: unknown) => connection.stream.end(encodeTransportFrame(TRANSPORT_EVENTS.error, errorData(error))),
        complete: () => connection.stream.end(encodeTransportFrame(TRANSPORT_EVENTS.end, {})),
      });
    if (dropped) connection.subscription.unsubscribe();
  }

  private async serveCommand(req: IncomingMessage, res: ServerResponse, runId: string): Promise<void> {
    const command = await readCommand(req, res, MAX_COMMAND_BYTES);
    if (!command) return;
    if (!(await authorized(this.authorize, req, res, { runId, action: 'command', command }))) return;
    for (const [name, value] of Object.entries(corsHeaders(req, this.options.allowedOrigins))) res.setHeader(name, value);
    const key = this.streamKeyOf(runId);
    let reply: unknown;
    try {
      const data = encodeRunControl(controlOf(command), `command to run "${runId}"`);
      reply = await this.client.sendCommand(['EVAL', SEND_CONTROL, '2', key, controlKeyOf(key), '1000', String(this.options.controlTtlMs ?? CONTROL_TTL_MS), data]);
    } catch (e) {
      return sendJson(res, 502, { error: `Redis: ${(e as Error).message}` });
    }
    if (reply === 0 || reply === '0') return sendJson(res, 404, { error: `no run "${runId}": its stream ${key} does not exist` });
    if (reply === -1 || reply === '-1') return sendJson(res, 409, { error: `run "${runId}" is over; ${command.type} has nothing to act on` });
    sendJson(res, 202, { accepted: command.type, runId });
  }
}

/** An entry as a self-contained SSE frame, its id the stream entry id. */
function frameOf({ id, event }: StreamedEvent): string {
  return `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(toWireEvent(event))}\n\n`;
}

function errorData(error: unknown): TransportErrorData {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof StreamTrimmedError) return { code: 'ResumeGap', message };
  if (error instanceof RemoteRunError) return { code: 'RunFailed', message };
  return { code: 'RunFailed', message: `relaying the run failed: ${message}` };
}

function controlOf(command: RunCommand): RunControl {
  switch (command.type) {
    case 'abort':
      return { kind: 'abort' };
    case 'approve': {
      const { type: _type, ...answer } = command;
      return { kind: 'approve', ...answer };
    }
    case 'cancelToolCall': {
      const { type: _type, ...cancel } = command;
      return { kind: 'cancelToolCall', ...cancel };
    }
    default:
      return { kind: command.type, message: command.text };
  }
}

