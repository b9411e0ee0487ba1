import type { IncomingMessage, ServerResponse } from 'node:http';
import { isObservable, type Observable } from 'rxjs';
import type { AgentEvent } from '../../../types/events.js';
import type { AgentMessage } from '../../../types/message.js';
import { headerOf, readBody, sendJson } from '../../transport/node/http-io.js';
import { answerPreflight, corsHeaders, decodeRunId, guardRequest, isJsonBody, refusedOrigin, type AllowedOrigins } from '../../transport/node/http-guard.js';
import { fromUIMessages } from '../from-ui-messages.js';
import { isUIToolPart, type UIMessage } from '../ui-message.js';
import { UI_MESSAGE_STREAM_HEADERS } from '../ui-message-stream.js';
import { encodeUIMessageChunk } from '../ui-message-stream.js';
import { ChatRunLog, type ChatRunControls, type Segment } from './chat-run-log.js';
import { pumpChunks } from './chunk-pump.js';

/** What a request asks of a chat: a reply to its messages, the rest of the reply being streamed, a stop. */
export interface ChatAuthorizeContext {
  readonly chatId: string;
  readonly action: 'send' | 'resume' | 'stop';
}

/** Decides whether a request may: `true` lets it, `false` answers 403, a throw its `status` (401 / 403; 401 when none). */
export type AuthorizeChat = (req: IncomingMessage, context: ChatAuthorizeContext) => boolean | Promise<boolean>;

/** What `run` gets: the chat, its messages as phi-rx messages (and as sent), the rest of the body. */
export interface ChatRequest {
  readonly chatId: string;
  readonly messages: AgentMessage[];
  readonly uiMessages: UIMessage[];
  /** The id of the assistant message the reply streams (its `start` chunk's). */
  readonly messageId: string;
  /** The body's other fields (`useChat`'s `body` option, `trigger`, `messageId`). */
  readonly body: Readonly<Record<string, unknown>>;
  readonly req: IncomingMessage;
}

/** A run: its events, and how to answer its approvals and stop it (without `abort`, a stop unsubscribes). */
export type ChatRun = Observable<AgentEvent> | ({ events$: Observable<AgentEvent> } & ChatRunControls);

export interface UIMessageStreamHubOptions {
  /** Who may use a chat (required): asked before every request; `'allow-all'` for keyless demos, said explicitly. */
  authorize: AuthorizeChat | 'allow-all';
  /** Starts the run answering a request (throw a TypeError to answer 400 with its message). */
  run(request: ChatRequest): ChatRun;
  /** The chat route, as `useChat`'s `api` (default `/api/chat`): `POST {base}`, `GET {base}/{id}/stream`, `POST {base}/{id}/stop`. */
  basePath?: string;
  /** Largest request body, bytes (default 1 MiB); past it, 413. */
  maxBodyBytes?: number;
  /** Chunks kept per run (default 100,000): a longer reply is stopped with an `error` chunk. */
  maxChunks?: number;
  /** Chats kept (default 1,000): the oldest ended one is forgotten for a new one; all running, 503. */
  maxChats?: number;
  /** Pages of other origins that may call (CORS); by default same-origin only. */
  allowedOrigins?: AllowedOrigins;
  /** A keep-alive comment after this many ms without a chunk (default 15,000; `false`: none). */
  keepAliveMs?: number | false;
  /** Id of the assistant message a run streams (default `crypto.randomUUID`). */
  messageId?: () => string;
}

/**
 * The server side of `useChat` over phi-rx runs, for `node:http` (Express, Fastify's `reply.raw`,
 * Hono's node adapter). `POST {base}` (`{ id, messages, ... }`, as `DefaultChatTransport` sends)
 * starts the chat's run and streams it as the AI SDK's UI message stream. The run belongs to the
 * chat, not to the connection: a page that reloads mid-reply and calls `resumeStream()`
 * (`useChat({ resume: true })`) gets it again from `GET {base}/{id}/stream` — the whole message
 * from its `start`, then live, which the client takes as a replay (`resumeStreamIsReplay`), so
 * nothing is shown twice — and 204 when no reply is under way. When the run waits for approvals
 * the response ends after asking; the page answers (`addToolApprovalResponse` and
 * `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`) with a new POST,
 * whose response streams the rest of the same message; a page reloaded meanwhile gets the message
 * so far from `GET {base}/{id}/stream`, approval requests included, and answers them the same way. A client that goes does not stop the run
 * (it may be a reload); `POST {base}/{id}/stop` does (call it with `useChat`'s `stop()`). Every
 * request is asked of `authorize`; bodies are limited; bad input gets a clear 4xx; `handle` never throws.
 *
 * @example
 * const hub = new UIMessageStreamHub({ authorize: (req, { chatId }) => ownsChat(req, chatId), run: ({ messages }) => agentChatRun(makeAgent(), messages) });
 * http.createServer((req, res) => { if (!hub.handle(req, res)) res.writeHead(404).end(); }).listen(3000);
 */
export class UIMessageStreamHub {
  private readonly chats = new Map<string, ChatRunLog>();
  private readonly base: string;
  private readonly routes: RegExp;

  constructor(private readonly options: UIMessageStreamHubOptions) {
    const authorize = (options as Partial<UIMessageStreamHubOptions> | undefined)?.authorize;
    if (authorize !== 'allow-all' && typeof authorize !== 'function') {
      throw new TypeError(`new UIMessageStreamHub: options.authorize is required: a function (req, { chatId, action }) => boolean | Promise<boolean> deciding who may use a chat, or 'allow-all' (keyless demos only)`);
    }
    if (typeof options.run !== 'function') throw new TypeError('new UIMessageStreamHub: options.run is required: (request) => the run answering it');
    this.base = (options.basePath ?? '/api/chat').replace(/\/+$/, '');
    this.routes = new RegExp(`^${this.base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:/([^/?#]+)/(stream|stop))?(?:[?#].*)?$`);
  }

  /** The chat's run log (its chunks so far), while the hub keeps it. */
  chat(chatId: string): ChatRunLog | undefined {
    return this.chats.get(chatId);
  }

  /** Handles one of the hub's routes and returns true; else returns false and leaves the request alone. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    const match = typeof req.url === 'string' ? this.routes.exec(req.url) : null;
    if (!match) return false;
    guardRequest(res, 'UIMessageStreamHub', () => this.route(req, res, match[1], match[2]));
    return true;
  }

  /** Stops every run and forgets every chat. */
  close(): void {
    for (const log of this.chats.values()) log.dispose();
    this.chats.clear();
  }

  private route(req: IncomingMessage, res: ServerResponse, rawId: string | undefined, action: string | undefined): Promise<void> | void {
    const method = action === 'stream' ? 'GET' : 'POST';
    if (req.method === 'OPTIONS') return answerPreflight(req, res, this.options.allowedOrigins, method);
    const origin = refusedOrigin(req, this.options.allowedOrigins);
    if (origin !== undefined) return sendJson(res, 403, { error: `origin ${origin} may not call this server (options.allowedOrigins)` });
    if (req.method !== method) return sendJson(res, 405, { error: `${req.method} is not allowed here (use ${method})` });
    if (rawId === undefined) return this.send(req, res);
    const chatId = decodeRunId(rawId);
    if (chatId === undefined) return sendJson(res, 400, { error: `the chat id in ${JSON.stringify(req.url)} is not valid percent-encoding` });
    return action === 'stream' ? this.resume(req, res, chatId) : this.stop(req, res, chatId);
  }

  private async send(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await this.readJson(req, res);
    if (!body) return;
    const { id: chatId, messages: uiMessages, ...rest } = body;
    if (typeof chatId !== 'string' || chatId === '' || chatId.length > 256) return sendJson(res, 400, { error: `the body's "id" must be the chat id, a string of 1 to 256 characters` });
    if (!Array.isArray(uiMessages)) return sendJson(res, 400, { error: `the body's "messages" must be an array of UI messages` });
    if (!(await this.authorized(req, res, { chatId, action: 'send' }))) return;
    const current = this.chats.get(chatId);
    if (current && !current.isOver) return this.answerApprovals(req, res, chatId, current, uiMessages as UIMessage[]);
    let messages: AgentMessage[];
    let run: ChatRun;
    const messageId = (this.options.messageId ?? defaultId)();
    try {
      messages = fromUIMessages(uiMessages as UIMessage[]);
      if (messages.at(-1)?.role !== 'user') return sendJson(res, 409, { error: `chat "${chatId}" has no reply under way to continue, and its last message is not the user's` });
      run = this.options.run({ chatId, messages, uiMessages: uiMessages as UIMessage[], messageId, body: rest, req });
    } catch (e) {
      if (e instanceof TypeError) return sendJson(res, 400, { error: e.message });
      throw e;
    }
    if (!this.makeRoom(chatId)) return sendJson(res, 503, { error: `this server already runs ${this.options.maxChats ?? 1000} chats (options.maxChats)` });
    const { events$, controls } = isObservable(run) ? { events$: run, controls: {} } : { events$: run.events$, controls: run };
    const log = new ChatRunLog(events$, messageId, { approve: controls.approve?.bind(controls), abort: controls.abort?.bind(controls) }, this.options.maxChunks ?? 100_000);
    this.chats.set(chatId, log);
    this.stream(req, res, log, 0);
  }

  /** A POST while the chat's run waits: the page's answers to the approvals it was asked. */
  private answerApprovals(req: IncomingMessage, res: ServerResponse, chatId: string, log: ChatRunLog, messages: UIMessage[]): void {
    const answers = approvalAnswers(messages).filter((a) => log.waiting.has(a.toolCallId));
    if (answers.length === 0 || log.openSegment) return sendJson(res, 409, { error: `chat "${chatId}" has a reply under way; resume it (GET ${this.base}/${encodeURIComponent(chatId)}/stream) or stop it first` });
    if (!log.controls.approve) return sendJson(res, 409, { error: `chat "${chatId}": its run takes no approvals (run returned no approve)` });
    const segment = log.openNext();
    try {
      for (const { toolCallId, approved, reason } of answers) log.controls.approve(toolCallId, reason === undefined ? { approved } : { approved, reason });
    } catch (e) {
      segment.end = segment.start;
      return sendJson(res, 409, { error: (e as Error).message });
    }
    this.stream(req, res, log, segment.start, encodeUIMessageChunk({ type: 'start', messageId: log.messageId }));
  }

  private async resume(req: IncomingMessage, res: ServerResponse, chatId: string): Promise<void> {
    if (!(await this.authorized(req, res, { chatId, action: 'resume' }))) return;
    const log = this.chats.get(chatId);
    if (!log || log.isOver) return void res.writeHead(204, corsHeaders(req, this.options.allowedOrigins)).end();
    // a reply under way, or waiting for the page's approvals (a reload asks again): the message so far
    this.stream(req, res, log, 0, undefined, log.openSegment ?? { start: 0, end: log.chunks.length });
  }

  private async stop(req: IncomingMessage, res: ServerResponse, chatId: string): Promise<void> {
    if (!(await this.authorized(req, res, { chatId, action: 'stop' }))) return;
    const log = this.chats.get(chatId);
    if (!log || log.isOver) return sendJson(res, 409, { error: `chat "${chatId}" has no run going` });
    if (log.controls.abort) log.controls.abort();
    else log.dispose();
    sendJson(res, 202, { stopped: chatId });
  }

  private stream(req: IncomingMessage, res: ServerResponse, log: ChatRunLog, from: number, prefix?: string, segment: Segment = log.segments[log.segments.length - 1]!): void {
    res.writeHead(200, { ...UI_MESSAGE_STREAM_HEADERS, ...corsHeaders(req, this.options.allowedOrigins) });
    const stop = pumpChunks(log, segment, from, res, prefix, this.options.keepAliveMs ?? 15_000);
    res.once('close', stop);
  }

  private async readJson(req: IncomingMessage, res: ServerResponse): Promise<Record<string, unknown> | undefined> {
    const limit = this.options.maxBodyBytes ?? 1024 * 1024;
    if (!isJsonBody(req)) return void sendJson(res, 415, { error: `a chat request must be sent as content-type application/json, got ${JSON.stringify(headerOf(req, 'content-type') ?? 'none')}` });
    let body;
    try {
      body = await readBody(req, limit);
    } catch {
      return void res.destroy();
    }
    if ('tooLarge' in body) {
      if (!body.drained) res.shouldKeepAlive = false;
      return void sendJson(res, 413, { error: `the request body is over ${limit} bytes (options.maxBodyBytes)` });
    }
    let json: unknown;
    try {
      json = JSON.parse(body.text);
    } catch (e) {
      return void sendJson(res, 400, { error: `the request body is not JSON: ${(e as Error).message}` });
    }
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return void sendJson(res, 400, { error: 'the request body must be a JSON object { id, messages }' });
    return json as Record<string, unknown>;
  }

  private async authorized(req: IncomingMessage, res: ServerResponse, context: ChatAuthorizeContext): Promise<boolean> {
    const authorize = this.options.authorize;
    if (authorize === 'allow-all') return true;
    try {
      if ((await authorize(req, context)) === true) return true;
    } catch (e) {
      const status = (e as { status?: unknown } | null)?.status;
      sendJson(res, status === 403 ? 403 : 401, { error: e instanceof Error ? e.message : 'not authorized' });
      return false;
    }
    sendJson(res, 403, { error: `not allowed to ${context.action} chat "${context.chatId}"` });
    return false;
  }

  /** Room for one more chat: forgets the oldest ended one when full; false when all run. */
  private makeRoom(chatId: string): boolean {
    const old = this.chats.get(chatId);
    if (old) {
      this.chats.delete(chatId);
      return true;
    }
    if (this.chats.size < (this.options.maxChats ?? 1000)) return true;
    for (const [id, log] of this.chats) {
      if (log.isOver) {
        this.chats.delete(id);
        return true;
      }
    }
    return false;
  }
}

/** The approvals the page answered in its last assistant message. */
function approvalAnswers(messages: readonly UIMessage[]): Array<{ toolCallId: string; approved: boolean; reason?: string }> {
  const last = [...messages].reverse().find((m) => m !== null && typeof m === 'object' && m.role === 'assistant');
  const out: Array<{ toolCallId: string; approved: boolean; reason?: string }> = [];
  for (const part of Array.isArray(last?.parts) ? last.parts : []) {
    if (part === null || typeof part !== 'object' || typeof part.type !== 'string') continue;
    if (!isUIToolPart(part) || part.state !== 'approval-responded' || typeof part.approval?.approved !== 'boolean') continue;
    out.push(typeof part.approval.reason === 'string' ? { toolCallId: part.toolCallId, approved: part.approval.approved, reason: part.approval.reason } : { toolCallId: part.toolCallId, approved: part.approval.approved });
  }
  return out;
}

const defaultId = (): string => globalThis.crypto.randomUUID();
