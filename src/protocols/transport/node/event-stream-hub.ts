import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerOf, readCommand, sendJson } from './http-io.js';
import { admitRoute, authorized, checkAuthorize, corsHeaders, guardRequest, parseEventId, type AllowedOrigins, type AuthorizeOption } from './http-guard.js';
import { pumpFrames } from './frame-pump.js';
import { asyncScheduler, type Observable, type SchedulerLike } from 'rxjs';
import type { AgentEvent } from '../../../types/events.js';
import type { RunCommand } from '../commands.js';
import { RunLog } from '../run-log.js';

/** What the command channel can do to a run; a missing one refuses that command. */
export interface RunCommandHandlers {
  steer?(text: string): void;
  followUp?(text: string): void;
  abort?(): void;
  /** May throw (an id that is not waiting): the client gets 409 with the message. */
  approve?(toolCallId: string, decision: { approved: boolean; args?: Record<string, unknown>; reason?: string }): void;
  cancelToolCall?(toolCallId: string, reason?: string): void;
}

/** The part of a BasicAgent {@link EventStreamHub.startAgent} uses. */
export interface SteerableAgent {
  prompt(input: string): Observable<AgentEvent>;
  steer(text: string): void;
  followUp(text: string): void;
  abort(): void;
  approve?(toolCallId: string, decision: { approved: boolean; args?: Record<string, unknown>; reason?: string }): unknown;
  cancelToolCall?(toolCallId: string, reason?: string): unknown;
}

export interface EventStreamHubOptions {
  /**
   * Who may read a run's events and send it commands (required): asked before events are served
   * and before each command; `false` answers 403, a throw 401 (or the error's `status`, 401 / 403).
   * `'allow-all'` serves anyone who has a run id — a keyless demo's choice, said explicitly.
   */
  authorize: AuthorizeOption;
  /** Pages of other origins that may call (CORS); by default only same-origin pages (`Origin` matching `Host`), others get 403. */
  allowedOrigins?: AllowedOrigins;
  /** Event streams open at once per run (default 64) and in all (default 1024); past them, 503. */
  maxConnectionsPerRun?: number;
  maxConnections?: number;
  /** Bytes of frames kept per run for resuming clients (default 32 MiB), besides `bufferSize` frames. */
  bufferBytes?: number;
  /** Path prefix of the routes (default `/runs`): `GET {base}/{id}/events`, `POST {base}/{id}/commands`. */
  basePath?: string;
  /** Frames kept per run for resuming clients (default 10,000). */
  bufferSize?: number;
  /** A heartbeat comment after this many ms of silence on a connection (default 15,000). */
  heartbeatMs?: number;
  /** Reconnect delay the server advises clients (SSE `retry:`), ms (default 500). */
  retryMs?: number;
  /** Run ids (default `crypto.randomUUID`). */
  ids?: () => string;
  /** Consecutive deltas of one block within this many ms become one frame (default 0: one burst); `false`: one frame per event. */
  coalesceDeltasMs?: number | false;
  /** Time source of the heartbeats and the coalescing window (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
}

interface HostedRun {
  readonly log: RunLog;
  readonly controls: RunCommandHandlers;
  connections: number;
}

interface Connection {
  readonly res: ServerResponse;
  stop(): void;
}

/** A command body's limit: past it, 413. */
export const MAX_COMMAND_BYTES = 64 * 1024;

/**
 * Serves runs' events over Server-Sent Events from a plain `node:http` handler, usable from
 * Express, Fastify (`reply.raw`) or Hono's node adapter. Each run is started once and recorded
 * into a bounded replay buffer ({@link RunLog}); every client gets its events from the start
 * (from a snapshot once the buffer rolled over), or — reconnecting with `Last-Event-ID` — exactly
 * those after that id; an id that fell out of the buffer gets a `phi-rx:error` frame
 * (`ResumeGap`) and the response ends. Idle connections get heartbeat comments. Frames are pulled
 * from the buffer as each client's socket drains, so a client that does not read holds only its
 * socket's buffer in the server, whatever the size of the run. `POST {base}/{id}/commands`
 * (`application/json`) with `{ type: 'steer' | 'followUp', text }`,
 * `{ type: 'approve', toolCallId, approved, args?, reason? }`, `{ type: 'cancelToolCall', toolCallId, reason? }`
 * or `{ type: 'abort' }` reaches the run's controls. Every request is asked of `authorize` first;
 * a run id is a bearer capability, so check who asks. `handle` never throws: a bad request gets
 * a 4xx, a failure a 500, both JSON.
 *
 * @example
 * const hub = new EventStreamHub({ authorize: (req, { runId }) => ownerOf(runId) === userOf(req) });
 * http.createServer((req, res) => {
 *   if (req.method === 'POST' && req.url === '/prompt') return res.end(hub.startAgent(agent, 'Hi'));
 *   if (!hub.handle(req, res)) res.writeHead(404).end();
 * }).listen(8080);
 * // client: fromEventStream(`/runs/${id}/events`), runCommands(`/runs/${id}/commands`)
 */
export class EventStreamHub {
  private readonly runs = new Map<string, HostedRun>();
  private readonly connections = new Set<Connection>();
  private readonly basePath: string;
  private readonly routes: RegExp;
  private readonly authorize: AuthorizeOption;

  constructor(private readonly options: EventStreamHubOptions) {
    this.authorize = checkAuthorize((options as EventStreamHubOptions | undefined)?.authorize, 'new EventStreamHub');
    this.basePath = (options.basePath ?? '/runs').replace(/\/+$/, '');
    this.routes = new RegExp(`^${escapeRegExp(this.basePath)}/([^/?#]+)/(events|commands)(?:[?#].*)?$`);
  }

  /** Starts serving a run (subscribes to it now) and returns its id. */
  start(events$: Observable<AgentEvent>, controls: RunCommandHandlers = {}, runId: string = (this.options.ids ?? defaultId)()): string {
    if (this.runs.has(runId)) throw new Error(`EventStreamHub: run id "${runId}" is already in use`);
    const { bufferSize, coalesceDeltasMs, scheduler, bufferBytes } = this.options;
    this.runs.set(runId, { log: new RunLog(events$, bufferSize, { coalesceDeltasMs, scheduler, maxBytes: bufferBytes }), controls, connections: 0 });
    return runId;
  }

  /** Prompts a BasicAgent and serves the run, with steer, follow-up and abort wired to the agent. */
  startAgent(agent: SteerableAgent, input: string, runId?: string): string {
    const controls: RunCommandHandlers = { steer: (t) => agent.steer(t), followUp: (t) => agent.followUp(t), abort: () => agent.abort() };
    if (agent.approve) controls.approve = (id, decision) => void agent.approve!(id, decision);
    if (agent.cancelToolCall) controls.cancelToolCall = (id, reason) => void agent.cancelToolCall!(id, reason);
    return this.start(agent.prompt(input), controls, runId);
  }

  /** The recorded run, if there is one with this id. */
  run(runId: string): RunLog | undefined {
    return this.runs.get(runId)?.log;
  }

  /**
   * Forgets a run (aborting it if it still runs); clients connected to it are ended. The hub
   * keeps every run until then, ended ones included, so that late clients can replay them: a
   * long-lived server removes each run once its clients are done with it.
   */
  remove(runId: string): void {
    this.runs.get(runId)?.log.dispose();
    this.runs.delete(runId);
  }

  /**
   * Handles the request if it is one of the hub's routes and returns true; else returns false and
   * leaves it alone. Never throws: whatever the request, the client gets an answer.
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const match = typeof req.url === 'string' ? this.routes.exec(req.url) : null;
    if (!match) return false;
    guardRequest(res, 'EventStreamHub', () => this.route(req, res, match[1]!, match[2]!));
    return true;
  }

  /** Ends every open connection and stops every run still going. */
  close(): void {
    for (const connection of this.connections) {
      connection.stop();
      connection.res.end();
    }
    this.connections.clear();
    for (const id of [...this.runs.keys()]) this.remove(id);
  }

  private route(req: IncomingMessage, res: ServerResponse, rawId: string, route: string): Promise<void> | void {
    const runId = admitRoute(req, res, rawId, route, this.options.allowedOrigins);
    if (runId === undefined) return;
    const run = this.runs.get(runId);
    if (!run) return sendJson(res, 404, { error: `no run "${runId}" on this server` });
    return route === 'events' ? this.serveEvents(req, res, runId, run) : this.serveCommand(req, res, runId, run);
  }

  private async serveEvents(req: IncomingMessage, res: ServerResponse, runId: string, run: HostedRun): Promise<void> {
    const raw = headerOf(req, 'last-event-id') ?? new URL(req.url ?? '/', 'http://localhost').searchParams.get('lastEventId') ?? '';
    const afterId = raw === '' ? 0 : parseEventId(raw);
    if (afterId === undefined) return sendJson(res, 400, { error: `Last-Event-ID ${JSON.stringify(raw.slice(0, 40))} is not an event id (decimal digits)` });
    if (!(await authorized(this.authorize, req, res, { runId, action: 'events' }))) return;
    const { maxConnectionsPerRun = 64, maxConnections = 1024 } = this.options;
    if (run.connections >= maxConnectionsPerRun || this.connections.size >= maxConnections) {
      res.setHeader('retry-after', '5');
      const which = run.connections >= maxConnectionsPerRun ? `${maxConnectionsPerRun} event streams of run "${runId}"` : `${maxConnections} event streams`;
      return sendJson(res, 503, { error: `this server already serves ${which} (options.maxConnectionsPerRun / maxConnections)` });
    }
    if (req.destroyed) return;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...corsHeaders(req, this.options.allowedOrigins),
    });
    res.write(`retry: ${this.options.retryMs ?? 500}\n\n`);
    const connection: Connection = { res, stop: () => undefined };
    this.connections.add(connection);
    run.connections++;
    res.once('close', () => {
      connection.stop();
      this.connections.delete(connection);
      run.connections--;
    });
    connection.stop = pumpFrames(run.log, afterId, res, { heartbeatMs: this.options.heartbeatMs ?? 15_000, scheduler: this.options.scheduler ?? asyncScheduler });
  }

  private async serveCommand(req: IncomingMessage, res: ServerResponse, runId: string, run: HostedRun): Promise<void> {
    const command = await readCommand(req, res, MAX_COMMAND_BYTES);
    if (!command) return;
    if (!(await authorized(this.authorize, req, res, { runId, action: 'command', command }))) return;
    const cors = corsHeaders(req, this.options.allowedOrigins);
    for (const [name, value] of Object.entries(cors)) res.setHeader(name, value);
    if (run.log.isOver) return sendJson(res, 409, { error: `run "${runId}" is over; ${command.type} has nothing to act on` });
    const apply = controlFor(run.controls, command);
    if (!apply) return sendJson(res, 400, { error: `run "${runId}" takes no ${command.type} commands` });
    try {
      apply();
    } catch (e) {
      return sendJson(res, 409, { error: (e as Error).message });
    }
    sendJson(res, 202, { accepted: command.type, runId });
  }
}

function controlFor(controls: RunCommandHandlers, command: RunCommand): (() => void) | undefined {
  switch (command.type) {
    case 'steer':
      return controls.steer && (() => controls.steer!(command.text));
    case 'followUp':
      return controls.followUp && (() => controls.followUp!(command.text));
    case 'abort':
      return controls.abort && (() => controls.abort!());
    case 'approve': {
      const { type: _t, toolCallId, ...decision } = command;
      return controls.approve && (() => controls.approve!(toolCallId, decision));
    }
    case 'cancelToolCall':
      return controls.cancelToolCall && (() => controls.cancelToolCall!(command.toolCallId, command.reason));
  }
}


const defaultId = (): string => globalThis.crypto.randomUUID();

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
