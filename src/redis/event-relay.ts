import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerOf, readCommand, sendJson } from '../transport/node/http-io.js';
import { asyncScheduler, map, type SchedulerLike, type Subscription } from 'rxjs';
import type { RunCommand } from '../transport/commands.js';
import { withHeartbeats } from '../transport/heartbeats.js';
import { encodeTransportFrame, HEARTBEAT_FRAME, toWireEvent, TRANSPORT_EVENTS, type TransportErrorData } from '../transport/wire.js';
import { checkStreamId, entriesOf, type RedisCommander } from './commands.js';
import { readStream, RemoteRunError, StreamTrimmedError, type StreamedEvent } from './read-stream.js';
import { sendRunControl, type RunControl } from './run-control.js';

/** A connection a relay reads one run with (blocking `XREAD`), closed when the client goes. */
export interface RedisReader extends RedisCommander {
  close(): Promise<unknown> | unknown;
}

export interface RedisEventRelayOptions {
  /** Path prefix of the routes (default `/runs`): `GET {base}/{id}/events`, `POST {base}/{id}/commands`. */
  basePath?: string;
  /** The Redis stream a run's worker appends to (default `run:<runId>`, as in the README). */
  streamKeyOf?: (runId: string) => string;
  /** How long one `XREAD BLOCK` waits, ms (default 1000); also how long a closed client's reader may linger. */
  blockMs?: number;
  /** A heartbeat comment after this many ms of silence on a connection (default 15,000). */
  heartbeatMs?: number;
  /** Reconnect delay the server advises clients (SSE `retry:`), ms (default 500). */
  retryMs?: number;
  /** Time source of the heartbeats (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
}

const MAX_COMMAND_BYTES = 64 * 1024;

/**
 * Serves, from a web process, runs that workers execute elsewhere: the node:http side of
 * `phi-rx/transport` (`fromEventStream`, `runCommands`) over the Redis streams `appendToStream`
 * writes. `GET {base}/{id}/events` reads the run's stream with its own reader connection from
 * the client's `Last-Event-ID` on and writes one SSE frame per entry whose `id:` is the Redis
 * stream entry id (`<ms>-<n>`), the same in every web process: a browser that reconnects to any
 * of them resumes exactly after the last event it got, with no gap and no duplicate. Frames are
 * self-contained (a `MessageUpdate` without its partial message, everything else whole), so a
 * frame does not depend on which process sent the ones before it. The run's end gives a
 * `phi-rx:end` frame; a failed run (`RemoteRunError`) a `phi-rx:error` `RunFailed`, entries
 * trimmed before they were sent (`StreamTrimmedError`) a `phi-rx:error` `ResumeGap`; a
 * `Last-Event-ID` that is no stream id a 400. `POST {base}/{id}/commands` (`steer`, `followUp`,
 * `abort`, `approve`, `cancelToolCall`, as `runCommands` sends them) goes to the worker with
 * `sendRunControl`; 409 once the run's stream has ended.
 *
 * @example
 * const redis = await createClient({ url }).connect();
 * const relay = new RedisEventRelay(redis, () => redis.duplicate().connect());
 * http.createServer((req, res) => {
 *   if (!relay.handle(req, res)) res.writeHead(404).end();
 * }).listen(8080);
 * // any web process: fromEventStream(`/runs/${id}/events`), runCommands(`/runs/${id}/commands`)
 */
export class RedisEventRelay {
  private readonly connections = new Set<{ subscription?: Subscription; res: ServerResponse }>();
  private readonly routes: RegExp;
  private readonly streamKeyOf: (runId: string) => string;

  /**
   * @param client sends control messages and checks whether a run has ended (never blocks).
   * @param openReader a new connection for one client's blocking reads (node-redis: `() => client.duplicate().connect()`).
   */
  constructor(
    private readonly client: RedisCommander,
    private readonly openReader: () => Promise<RedisReader>,
    private readonly options: RedisEventRelayOptions = {},
  ) {
    const base = (options.basePath ?? '/runs').replace(/\/+$/, '');
    this.routes = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([^/?#]+)/(events|commands)(?:[?#].*)?$`);
    this.streamKeyOf = options.streamKeyOf ?? ((runId) => `run:${runId}`);
  }

  /** Handles the request if it is one of the relay's routes and returns true; else returns false and leaves it alone. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const match = this.routes.exec(req.url ?? '');
    if (!match) return false;
    const runId = decodeURIComponent(match[1]!);
    const route = match[2]!;
    if (route === 'events' && req.method === 'GET') this.serveEvents(req, res, runId);
    else if (route === 'commands' && req.method === 'POST') void this.serveCommand(req, res, runId);
    else sendJson(res, 405, { error: `${req.method} is not allowed on ${route} (use ${route === 'events' ? 'GET' : 'POST'})` });
    return true;
  }

  /** Ends every open connection (their readers close once their current `XREAD` returns). */
  close(): void {
    for (const connection of this.connections) {
      connection.subscription?.unsubscribe();
      connection.res.end();
    }
    this.connections.clear();
  }

  private serveEvents(req: IncomingMessage, res: ServerResponse, runId: string): void {
    const key = this.streamKeyOf(runId);
    const lastEventId = headerOf(req, 'last-event-id');
    try {
      checkStreamId(lastEventId ?? '0', `run "${runId}"`);
    } catch (e) {
      return sendJson(res, 400, { error: `header Last-Event-ID: ${(e as Error).message}` });
    }
    const events = (reader: RedisCommander) => readStream(reader, key, { after: lastEventId ?? '0', blockMs: this.options.blockMs });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write(`retry: ${this.options.retryMs ?? 500}\n\n`);
    const connection: { subscription?: Subscription; res: ServerResponse } = { res };
    let closed = false;
    req.once('close', () => {
      closed = true;
      connection.subscription?.unsubscribe();
      this.connections.delete(connection);
    });
    this.openReader().then(
      (reader) => {
        const release = () => void Promise.resolve(reader.close()).catch(() => undefined);
        if (closed) return release();
        const finish = (frame: string) => {
          res.end(frame);
          this.connections.delete(connection);
        };
        connection.subscription = events(reader)
          .pipe(map(frameOf), withHeartbeats(this.options.heartbeatMs ?? 15_000, HEARTBEAT_FRAME, this.options.scheduler ?? asyncScheduler))
          .subscribe({
            next: (text) => res.write(text),
            error: (error: unknown) => finish(encodeTransportFrame(TRANSPORT_EVENTS.error, errorData(error))),
            complete: () => finish(encodeTransportFrame(TRANSPORT_EVENTS.end, {})),
          });
        connection.subscription.add(release);
        this.connections.add(connection);
      },
      (error: unknown) => res.end(encodeTransportFrame(TRANSPORT_EVENTS.error, { code: 'RunFailed', message: `cannot open a Redis reader for run "${runId}": ${(error as Error)?.message ?? String(error)}` })),
    );
  }

  private async serveCommand(req: IncomingMessage, res: ServerResponse, runId: string): Promise<void> {
    const command = await readCommand(req, res, MAX_COMMAND_BYTES);
    if (!command) return;
    const key = this.streamKeyOf(runId);
    try {
      const last = entriesOf(await this.client.sendCommand(['XREVRANGE', key, '+', '-', 'COUNT', '1']), key)[0];
      const kind = last?.fields['kind'];
      if (kind === 'complete' || kind === 'error') return sendJson(res, 409, { error: `run "${runId}" is over; ${command.type} has nothing to act on` });
      await sendRunControl(this.client, key, controlOf(command));
    } catch (e) {
      return sendJson(res, 502, { error: `Redis: ${(e as Error).message}` });
    }
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

