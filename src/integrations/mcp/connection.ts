import { BehaviorSubject, Observable, Subject, catchError, defer, map, merge, of, takeWhile, throwError, timer } from 'rxjs';
import type { SchedulerLike } from 'rxjs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { httpFailure, isAuthFailure } from './http-status.js';
import { ErrorCode, LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpImplementation, McpToolInfo } from './types.js';
import { ToolError, errorMessage } from '../../types/errors.js';
import { isFinalToolResult } from '../../types/tool.js';
import type { Tool, ToolContext, ToolEmission, ToolResult } from '../../types/tool.js';
import { McpConnectionError } from './errors.js';
import { httpOpener, stdioOpener } from './session.js';
import type { Opener, Session } from './session.js';
import { errorResult, requestTool, toolParameters } from './tool-call.js';
import { safeToolName, uniqueToolName } from '../../tools/tool-name.js';

import { DEFAULT_MCP_TIMEOUT_MS } from './connect.js';
import type { McpElicitationHandler } from './elicitation.js';

/** `tools/list` pages followed before giving up on a server that never stops paging. */
const MAX_TOOL_PAGES = 1000;


export type McpConnectionStatus = 'connecting' | 'connected' | 'disconnected' | 'closed';

/** The wire the current session uses. */
export type McpTransportKind = 'stdio' | 'streamableHttp' | 'sse';

/** A `notifications/message` log line from the server. */
export interface McpLogMessage {
  server: string;
  level: string;
  logger?: string;
  data: unknown;
}

export interface McpConnectOptions {
  /** Name used in tool errors and logs. Default: the server's own name from `initialize`. */
  name?: string;
  /** Limit for connecting, listing tools and each tool call, ms. Default 30 000. */
  timeoutMs?: number;
  /** Receives every log notification (also on `logs$`). */
  onLog?: (message: McpLogMessage) => void;
  /** Sent as `clientInfo` in `initialize`. Default `{ name: 'phi-rx', version }`. */
  clientInfo?: McpImplementation;
  /** Time source of connection-level waits (process shutdown grace). Tool calls use the loop's scheduler. */
  scheduler?: SchedulerLike;
  /**
   * Answers the server's questions to the user (MCP elicitation, e.g. a served agent's tool approval)
   * the way an approval is answered: `{ approved: true, args }` accepts with `args` as the form's
   * content, `{ approved: false, reason }` declines. It is shown the phi-rx tool call the question came
   * during. Without it the client does not declare elicitation, so servers do not ask.
   */
  onElicitation?: McpElicitationHandler;
}

export interface McpStdioParams extends McpConnectOptions {
  command: string;
  args?: readonly string[];
  /**
   * Environment for the server, added to the SDK's safe defaults (HOME, LOGNAME, PATH, SHELL, TERM,
   * USER). The rest of this process's environment (API keys...) is NOT passed on.
   */
  env?: Readonly<Record<string, string>>;
  cwd?: string;
  /** Each stderr line of the server. By default stderr is captured (its tail appears in errors), not printed. */
  onStderr?: (line: string) => void;
}

export interface McpHttpParams extends McpConnectOptions {
  url: string | URL;
  /** Sent with every request (e.g. `Authorization`). */
  headers?: Readonly<Record<string, string>>;
  /** `auto` (default) tries Streamable HTTP and falls back to the legacy HTTP+SSE transport on a 4xx. */
  transport?: 'auto' | 'streamableHttp' | 'sse';
}

export interface McpToolsOptions {
  /** Tool names become `{prefix}__{name}`, to keep several servers apart. */
  prefix?: string;
  /** Per-call limit for these tools, ms. Default: the connection's `timeoutMs`. */
  timeoutMs?: number;
}

/** The metadata of one server tool, as `tools/list` gave it. */
export type { McpToolInfo };

/**
 * A live connection to one MCP server. Tools made by {@link McpConnection.tools} stay valid across
 * {@link McpConnection.reconnect}: each call goes to whatever session is current.
 */
export interface McpConnection extends AsyncDisposable {
  readonly name: string;
  readonly status: McpConnectionStatus;
  /** Why the server is not connected (e.g. "exited with code 3"), when it is not. */
  readonly disconnectReason: string | undefined;
  readonly status$: Observable<McpConnectionStatus>;
  readonly logs$: Observable<McpLogMessage>;
  readonly serverInfo: McpImplementation | undefined;
  /** The transport of the current (or last) session. */
  readonly transport: McpTransportKind | undefined;
  /** Server tools as phi-rx Tools (every page of `tools/list`). */
  tools(options?: McpToolsOptions): Promise<Tool[]>;
  /** Server tool metadata (every page of `tools/list`). */
  listTools(): Promise<McpToolInfo[]>;
  /** Drops the current session (killing a stdio server) and connects again. Refused after `close()`. */
  reconnect(): Promise<void>;
  /** Ends the session for good; a stdio server's process is closed (stdin, then SIGTERM, then SIGKILL). Idempotent. */
  close(): Promise<void>;
}

/**
 * Spawns an MCP server and connects to it over stdio.
 *
 * @example
 * const everything = await connectMcpStdio({
 *   command: 'npx',
 *   args: ['-y', '@modelcontextprotocol/server-everything'],
 *   env: { LOG_LEVEL: 'info' },
 * });
 * const tools = await everything.tools({ prefix: 'everything' });
 * // ...
 * await everything.close();
 */
export async function connectMcpStdio(params: McpStdioParams): Promise<McpConnection> {
  const fallbackName = params.name ?? params.command;
  return McpConnectionImpl.open(params, fallbackName, stdioOpener(params, fallbackName));
}

/**
 * Connects to an MCP server over Streamable HTTP, falling back to the legacy HTTP+SSE transport
 * when the server answers the Streamable HTTP handshake with a 4xx.
 *
 * @example
 * const remote = await connectMcpHttp({ url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: `Bearer ${token}` } });
 * const tools = await remote.tools();
 */
export async function connectMcpHttp(params: McpHttpParams): Promise<McpConnection> {
  const url = new URL(params.url);
  const fallbackName = params.name ?? url.host;
  return McpConnectionImpl.open(params, fallbackName, httpOpener(params, url, fallbackName));
}

class McpConnectionImpl implements McpConnection {
  private session: Session | undefined;
  private reason: string | undefined;
  /** Set once close() starts: calls failing from then on report "connection closed". */
  private closing = false;
  private readonly statusSubject = new BehaviorSubject<McpConnectionStatus>('connecting');
  private readonly logSubject = new Subject<McpLogMessage>();
  private queue: Promise<unknown> = Promise.resolve();
  private lastKind: McpTransportKind | undefined;
  private readonly givenName: string | undefined;
  /** Kept after the session ends, so error results still name the server. */
  private serverName: string | undefined;
  readonly status$ = this.statusSubject.asObservable();
  readonly logs$ = this.logSubject.asObservable();

  private constructor(
    private readonly options: McpConnectOptions,
    private readonly fallbackName: string,
    private readonly opener: Opener,
  ) {
    this.givenName = options.name;
  }

  static async open(options: McpConnectOptions, fallbackName: string, opener: Opener): Promise<McpConnection> {
    const connection = new McpConnectionImpl(options, fallbackName, opener);
    await connection.connect();
    return connection;
  }

  get name(): string {
    return this.givenName ?? this.serverName ?? this.fallbackName;
  }

  get status(): McpConnectionStatus {
    return this.statusSubject.value;
  }

  get disconnectReason(): string | undefined {
    return this.status === 'connected' ? undefined : this.reason;
  }

  get serverInfo(): McpImplementation | undefined {
    return this.session?.client.getServerVersion();
  }

  get transport(): McpTransportKind | undefined {
    return this.lastKind;
  }

  async listTools(): Promise<McpToolInfo[]> {
    const client = this.requireClient();
    const tools: McpToolInfo[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const result = await client
        .listTools(cursor === undefined ? {} : { cursor }, { timeout: this.timeoutMs })
        .catch((error: unknown) => {
          throw new McpConnectionError(this.name, `MCP server ${this.name}: tools/list failed: ${errorMessage(error)}`, { cause: error });
        });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      // A repeated cursor would page forever; stop at the first repeat.
      if (cursor === undefined || seen.has(cursor)) return tools;
      seen.add(cursor);
    }
    return tools;
  }

  async tools(options: McpToolsOptions = {}): Promise<Tool[]> {
    const infos = await this.listTools();
    const taken = new Set<string>();
    return infos.map((info) => {
      const name = uniqueToolName(safeToolName(info.name, options.prefix), taken);
      taken.add(name);
      return this.toTool(info, name, options.timeoutMs ?? this.timeoutMs);
    });
  }

  reconnect(): Promise<void> {
    return this.serially(async () => {
      if (this.status === 'closed') throw new McpConnectionError(this.name, `MCP server ${this.name} is closed; connect again instead`);
      await this.dropSession();
      await this.connectNow();
    });
  }

  close(): Promise<void> {
    return this.serially(async () => {
      if (this.status === 'closed') return;
      // Calls still pending fail as the session drops: they must say "closed", not "call reconnect()".
      this.closing = true;
      await this.dropSession();
      this.reason = 'closed by the application';
      this.setStatus('closed');
      this.statusSubject.complete();
      this.logSubject.complete();
    });
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private get timeoutMs(): number {
    return this.options.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
  }

  private connect(): Promise<void> {
    return this.serially(() => this.connectNow());
  }

  private async connectNow(): Promise<void> {
    this.setStatus('connecting');
    let session: Session;
    try {
      session = await this.opener();
    } catch (error) {
      this.reason = errorMessage(error);
      this.setStatus('disconnected');
      throw error;
    }
    this.session = session;
    this.lastKind = session.kind;
    this.serverName = session.client.getServerVersion()?.name ?? this.serverName;
    this.reason = undefined;
    session.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const { level, logger, data } = notification.params;
      const message: McpLogMessage = { server: this.name, level, data, ...(logger === undefined ? {} : { logger }) };
      this.options.onLog?.(message);
      this.logSubject.next(message);
    });
    // The SDK calls onclose before it fails the pending requests, so those see 'disconnected'.
    session.client.onclose = () => {
      if (this.session !== session) return;
      this.session = undefined;
      this.reason = session.describeDisconnect();
      this.setStatus('disconnected');
    };
    this.setStatus('connected');
  }

  private async dropSession(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (session) await session.client.close().catch(() => undefined);
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private setStatus(status: McpConnectionStatus): void {
    if (this.statusSubject.value !== status) this.statusSubject.next(status);
  }

  private requireClient(): Client {
    if (this.session && this.status === 'connected') return this.session.client;
    throw new McpConnectionError(this.name, this.notConnectedMessage());
  }

  private notConnectedMessage(): string {
    if (this.status === 'closed' || this.closing) return `MCP server ${this.name} is closed`;
    if (this.status === 'connecting') return `MCP server ${this.name} is still connecting`;
    return `MCP server ${this.name} is not connected (${this.reason ?? 'connection closed'}); call reconnect()`;
  }

  private toTool(info: McpToolInfo, name: string, timeoutMs: number): Tool {
    return {
      name,
      label: info.title ?? info.annotations?.title ?? info.name,
      description: info.description ?? '',
      parameters: toolParameters(info.inputSchema),
      validate: (args: unknown) =>
        args === undefined || args === null
          ? { ok: true, value: {} }
          : typeof args === 'object' && !Array.isArray(args)
            ? { ok: true, value: args as Record<string, unknown> }
            : { ok: false, error: 'arguments must be a JSON object' },
      execute: (args, ctx) => this.call(info.name, args, ctx, timeoutMs),
    };
  }

  /**
   * One `tools/call`, as updates then one result. Whichever ends first wins: the server's answer or
   * the deadline. Unsubscribing before the answer (deadline, abort, teardown) cancels the request
   * on the server (`notifications/cancelled`).
   *
   * ```
   * server:   ---p---p-------r|
   * deadline: ------------------------T|
   * result:   ---p---p-------r|
   * ```
   */
  private call(toolName: string, args: Record<string, unknown>, ctx: ToolContext, timeoutMs: number): Observable<ToolEmission> {
    return defer(() => {
      const session = this.session;
      if (!session || this.status !== 'connected') return of(errorResult(this.notConnectedMessage()));
      const deadline$ = timer(timeoutMs, ctx.scheduler).pipe(
        map(() =>
          errorResult(`MCP tool ${toolName} on server ${this.name} timed out after ${timeoutMs} ms; the call was cancelled on the server`, {
            timedOut: true,
          }),
        ),
      );
      return merge(requestTool(session, toolName, args, ctx), deadline$).pipe(
        takeWhile((emission) => !isFinalToolResult(emission), true),
        catchError((error: unknown) => this.failure(toolName, error, ctx.signal)),
      );
    });
  }

  private failure(toolName: string, error: unknown, signal: AbortSignal): Observable<ToolResult> {
    if (signal.aborted) return throwError(() => new ToolError('cancelled', `MCP tool ${toolName} on server ${this.name} was cancelled`, { cause: error }));
    if (this.closing) return of(errorResult(`MCP tool ${toolName} on server ${this.name} ended: connection closed by close() while the call was pending`));
    if (this.status !== 'connected' || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)) {
      return of(errorResult(this.notConnectedMessage()));
    }
    if (error instanceof McpError) return of(errorResult(`MCP server ${this.name} failed to run ${toolName}: ${errorMessage(error)}`));
    // Not a JSON-RPC answer: the transport itself failed (HTTP server gone, session expired...).
    if (isAuthFailure(error)) return of(errorResult(`MCP server ${this.name} refused ${toolName}: ${httpFailure(error)}; check the credentials`));
    return of(errorResult(`MCP server ${this.name} could not be reached to run ${toolName} (${httpFailure(error)}); call reconnect() once it is back`));
  }
}
