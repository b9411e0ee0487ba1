import type { Observable, Subscription } from 'rxjs';
import type { AgentEvent } from '../../types/events.js';
import { uiMessageChunks, type UIMessageChunksOptions } from './to-ui-message-chunks.js';
import type { UIMessageChunk } from './ui-message-chunk.js';

/** The response headers of the UI message stream protocol (v1): SSE, not cached, not buffered by proxies. */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
});

/** The last SSE frame of a UI message stream. */
export const UI_MESSAGE_STREAM_DONE = 'data: [DONE]\n\n';

/** One chunk as its SSE frame. */
export function encodeUIMessageChunk(chunk: UIMessageChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** `uiMessageChunks` options and the response's status and extra headers. */
export interface UIMessageStreamResponseInit extends UIMessageChunksOptions {
  status?: number;
  statusText?: string;
  headers?: Record<string, string>;
}

/**
 * A fetch-style `Response` streaming a run as the AI SDK's UI message stream, for route handlers
 * that return one (Next.js, Hono, Workers): subscribes to `events$` when the body is first read,
 * writes each chunk of {@link uiMessageChunks} as an SSE frame and `[DONE]` at the end. When the
 * client goes (`useChat`'s `stop()` aborts the fetch, which cancels the body) the run is
 * unsubscribed, which aborts it.
 *
 * @example
 * export const POST = async (req: Request) => toUIMessageStreamResponse(agent.prompt(fromUIMessages((await req.json()).messages)));
 */
export function toUIMessageStreamResponse(events$: Observable<AgentEvent>, init: UIMessageStreamResponseInit = {}): Response {
  const { status, statusText, headers, ...options } = init;
  const encoder = new TextEncoder();
  let subscription: Subscription | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      subscription = events$.pipe(uiMessageChunks(options)).subscribe({
        next: (chunk) => controller.enqueue(encoder.encode(encodeUIMessageChunk(chunk))),
        complete: () => {
          controller.enqueue(encoder.encode(UI_MESSAGE_STREAM_DONE));
          controller.close();
        },
      });
    },
    cancel() {
      subscription?.unsubscribe();
    },
  });
  return new Response(body, { status: status ?? 200, statusText, headers: { ...UI_MESSAGE_STREAM_HEADERS, ...headers } });
}

/** The part of a `node:http` `ServerResponse` (or Express / Fastify `reply.raw`) the stream is written to. */
export interface WritableResponse {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string): boolean;
  end(chunk?: string): unknown;
  once(event: 'close' | 'drain', listener: () => void): unknown;
  readonly writableEnded: boolean;
}

/**
 * Streams a run to a `node:http` response as the AI SDK's UI message stream: the protocol's
 * headers, an SSE frame per chunk of {@link uiMessageChunks}, `[DONE]`, the end. A client that
 * goes before the end (`useChat`'s `stop()`) unsubscribes the run, which aborts it. For resuming
 * a stream after a reload, and approvals answered by a later request, use `UIMessageStreamHub`
 * (`phi-rx/ai-sdk/node`).
 *
 * @example
 * http.createServer(async (req, res) => pipeUIMessageStreamToResponse(agent.prompt(fromUIMessages(await readJson(req)).at(-1)!), res));
 */
export function pipeUIMessageStreamToResponse(events$: Observable<AgentEvent>, res: WritableResponse, init: UIMessageStreamResponseInit = {}): Subscription {
  const { status, headers, ...options } = init;
  res.writeHead(status ?? 200, { ...UI_MESSAGE_STREAM_HEADERS, ...headers });
  const subscription = events$.pipe(uiMessageChunks(options)).subscribe({
    next: (chunk) => void res.write(encodeUIMessageChunk(chunk)),
    complete: () => void res.end(UI_MESSAGE_STREAM_DONE),
  });
  res.once('close', () => subscription.unsubscribe());
  return subscription;
}
