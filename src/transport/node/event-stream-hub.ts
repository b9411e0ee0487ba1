import type { IncomingMessage, ServerResponse } from 'node:http';
import { headerOf, readCommand, sendJson } from './http-io.js';
import { asyncScheduler, map, type Observable, type SchedulerLike, type Subscription } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import type { RunCommand } from '../commands.js';
import { withHeartbeats } from '../heartbeats.js';
import { RunLog } from '../run-log.js';
import { encodeTransportFrame, EventStreamError, HEARTBEAT_FRAME, TRANSPORT_EVENTS } from '../wire.js';

/** What the command channel can do to a run; a missing one refuses that command. */
export interface RunControls {
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
  readonly controls: RunControls;
}

const MAX_COMMAND_BYTES = 64 * 1024;

/**
 * Serves runs' events over Server-Sent Events from a plain `node:http` handler, usable from
 * Express, Fastify (`reply.raw`) or Hono's node adapter. Each run is started once and recorded
 * into a bounded replay buffer ({@link RunLog}); every client gets its events from the start,
 * or — reconnecting with `Last-Event-ID` — exactly those after that id; an id that fell out of
 * the buffer gets a `phi-rx:error` frame (`ResumeGap`) and the response ends. Idle connections
 * get heartbeat comments. `POST {base}/{id}/commands` with `{ type: 'steer' | 'followUp', text }`,
 * `{ type: 'approve', toolCallId, approved, args?, reason? }`, `{ type: 'cancelToolCall', toolCallId, reason? }`
 * or `{ type: 'abort' }` reaches the run's controls.
 *
 * @example
 * const hub = new EventStreamHub();
 * http.createServer((req, res) => {
 *   if (req.method === 'POST' && req.url === '/prompt') return res.end(hub.startAgent(agent, 'Hi'));
 *   if (!hub.handle(req, res)) res.writeHead(404).end();
 * }).listen(8080);
 * // client: fromEventStream(`/runs/${id}/events`), runCommands(`/runs/${id}/commands`)
 */
export class EventStreamHub {
  private readonly runs = new Map<string, HostedRun>();
  private readonly connections = new Set<{ subscription: Subscription; res: ServerResponse }>();
  private readonly basePath: string;
  private readonly routes: RegExp;

  constructor(private readonly options: EventStreamHubOptions = {}) {
    this.basePath = (options.basePath ?? '/runs').replace(/\/+$/, '');
    this.routes = new RegExp(`^${escapeRegExp(this.basePath)}/([^/?#]+)/(events|commands)(?:[?#].*)?$`);
  }

  /** Starts serving a run (subscribes to it now) and returns its id. */
  start(events$: Observable<AgentEvent>, controls: RunControls = {}, runId: string = (this.options.ids ?? defaultId)()): string {
    if (this.runs.has(runId)) throw new Error(`EventStreamHub: run id "${runId}" is already in use`);
    this.runs.set(runId, { log: new RunLog(events$, this.options.bufferSize, { coalesceDeltasMs: this.options.coalesceDeltasMs, scheduler: this.options.scheduler }), controls });
    return runId;
  }

  /** Prompts a BasicAgent and serves the run, with steer, follow-up and abort wired to the agent. */
  startAgent(agent: SteerableAgent, input: string, runId?: string): string {
    const controls: RunControls = { steer: (t) => agent.steer(t), followUp: (t) => agent.followUp(t), abort: () => agent.abort() };
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

  /** Handles the request if it is one of the hub's routes and returns true; else returns false and leaves it alone. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const match = this.routes.exec(req.url ?? '');
    if (!match) return false;
    const runId = decodeURIComponent(match[1]!);
    const route = match[2]!;
    const run = this.runs.get(runId);
    if (!run) {
      sendJson(res, 404, { error: `no run "${runId}" on this server` });
    } else if (route === 'events' && req.method === 'GET') {
      this.serveEvents(req, res, run);
    } else if (route === 'commands' && req.method === 'POST') {
      void this.serveCommand(req, res, runId, run);
    } else {
      sendJson(res, 405, { error: `${req.method} is not allowed on ${route} (use ${route === 'events' ? 'GET' : 'POST'})` });
    }
    return true;
  }

  /** Ends every open connection and stops every run still going. */
  close(): void {
    for (const connection of this.connections) {
      connection.subscription.unsubscribe();
      connection.res.end();
    }
    this.connections.clear();
    for (const id of [...this.runs.keys()]) this.remove(id);
  }

  private serveEvents(req: IncomingMessage, res: ServerResponse, run: HostedRun): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const raw = headerOf(req, 'last-event-id') ?? url.searchParams.get('lastEventId') ?? undefined;
    const afterId = raw === undefined || raw === '' ? 0 : Number(raw);
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(`retry: ${this.options.retryMs ?? 500}\n\n`);
    const connection = { subscription: undefined as unknown as Subscription, res };
    const finish = () => {
      this.connections.delete(connection);
      res.end();
    };
    connection.subscription = run.log
      .framesAfter(afterId)
      .pipe(
        map((frame) => frame.text),
        withHeartbeats(this.options.heartbeatMs ?? 15_000, HEARTBEAT_FRAME, this.options.scheduler ?? asyncScheduler),
      )
      .subscribe({
        next: (text) => res.write(text),
        error: (error: unknown) => {
          const code = error instanceof EventStreamError ? error.code : 'RunFailed';
          res.write(encodeTransportFrame(TRANSPORT_EVENTS.error, { code, message: error instanceof Error ? error.message : String(error) }));
          finish();
        },
        complete: finish,
      });
    this.connections.add(connection);
    req.once('close', () => {
      connection.subscription.unsubscribe();
      this.connections.delete(connection);
    });
  }

  private async serveCommand(req: IncomingMessage, res: ServerResponse, runId: string, run: HostedRun): Promise<void> {
    const command = await readCommand(req, res, MAX_COMMAND_BYTES);
    if (!command) return;
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

function controlFor(controls: RunControls, command: RunCommand): (() => void) | undefined {
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
