import { errorMessage } from '../../types/errors.js';
import { checkRunAgentInput, runAgUi } from './run-ag-ui.js';
import { agUiEncoder, askAuthorize, checkAgUiAuthorize, isAllowedOrigin, MAX_AG_UI_BODY_BYTES, MAX_AG_UI_BUFFERED_BYTES, originMayCall, type AgUiHandlerOptions } from './ag-ui-handler-options.js';

/**
 * An AG-UI endpoint as a fetch-style handler, `Request → Response` (Hono, Next.js route handlers,
 * Workers, Deno, Bun): a POSTed `RunAgentInput` (`application/json`, at most `maxBodyBytes`) is
 * checked, asked of `authorize`, and run ({@link runAgUi}); the response streams its AG-UI events
 * with `@ag-ui/encoder` (an optional peer): SSE, or protobuf when `Accept` asks for
 * `application/vnd.ag-ui.event+proto`. When the client goes away the run is aborted. Bad input gets
 * a JSON 4xx saying what is wrong; the handler never rejects.
 *
 * @example
 * const handle = agUiFetchHandler({ config: { model, provider }, authorize: (req) => req.headers.get('authorization') === `Bearer ${token}` });
 * export const POST = handle; // a Next.js route
 */
export function agUiFetchHandler(options: AgUiHandlerOptions<Request>): (request: Request) => Promise<Response> {
  checkAgUiAuthorize((options as AgUiHandlerOptions<Request> | undefined)?.authorize, 'agUiFetchHandler');
  const limit = options.maxBodyBytes ?? MAX_AG_UI_BODY_BYTES;
  return async (request) => {
    try {
      return await handle(request, options, limit);
    } catch (e) {
      return json(500, { error: `the AG-UI run failed: ${errorMessage(e)}` });
    }
  };
}

async function handle(request: Request, options: AgUiHandlerOptions<Request>, limit: number): Promise<Response> {
  const origin = request.headers.get('origin');
  const cors: Record<string, string> = origin !== null && isAllowedOrigin(origin, options.allowedOrigins) ? { 'access-control-allow-origin': origin, vary: 'Origin' } : {};
  if (request.method === 'OPTIONS') {
    if (!cors['access-control-allow-origin']) return json(403, { error: `origin ${JSON.stringify(origin)} is not allowed (options.allowedOrigins)` });
    return new Response(null, { status: 204, headers: { ...cors, 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type, authorization, accept', 'access-control-max-age': '600' } });
  }
  if (!originMayCall(origin, request.headers.get('host') ?? new URL(request.url).host, options.allowedOrigins)) return json(403, { error: `origin ${origin} may not call this endpoint (options.allowedOrigins)` });
  if (request.method !== 'POST') return json(405, { error: `${request.method} is not allowed (use POST with a RunAgentInput)` });
  const type = request.headers.get('content-type');
  if (type === null || type.split(';')[0]!.trim().toLowerCase() !== 'application/json') return json(415, { error: `a RunAgentInput must be sent as content-type application/json, got ${type === null ? 'none' : JSON.stringify(type)}` });
  const text = await readLimited(request, limit);
  if (text === undefined) return json(413, { error: `the RunAgentInput body is over ${limit} bytes` });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return json(400, { error: `the body is not JSON: ${errorMessage(e)}` });
  }
  let input;
  try {
    input = checkRunAgentInput(parsed, options.tools);
  } catch (e) {
    return json(400, { error: `bad RunAgentInput: ${errorMessage(e)}` });
  }
  const refused = await askAuthorize(options.authorize, request, { threadId: input.threadId, runId: input.runId, input });
  if (refused) return json(refused.status, { error: refused.error });
  const encoder = await agUiEncoder(request.headers.get('accept'));
  const abort = new AbortController();
  const maxBuffered = options.maxBufferedBytes ?? MAX_AG_UI_BUFFERED_BYTES;
  let open = true;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const close = () => {
        if (open) controller.close();
        open = false;
      };
      // The client went away (the Request's signal, or the stream cancelled): the run is aborted
      // gracefully and goes on to its end, unread.
      request.signal?.addEventListener('abort', () => (abort.abort(), close()), { once: true });
      runAgUi(input, options, abort.signal).subscribe({
        next: (event) => {
          if (!open) return;
          controller.enqueue(encoder.encodeBinary(event));
          // A client that does not read: past maxBufferedBytes the run is aborted and the response ended.
          if ((controller.desiredSize ?? 0) < 0) {
            abort.abort();
            controller.error(new Error(`the client read none of the last ${maxBuffered} bytes of events`));
            open = false;
          }
        },
        error: (e) => {
          if (open) controller.error(e);
          open = false;
        },
        complete: close,
      });
    },
    cancel() {
      open = false;
      abort.abort();
    },
  }, { highWaterMark: maxBuffered, size: (chunk) => chunk.byteLength });
  return new Response(body, { status: 200, headers: { ...cors, 'content-type': encoder.getContentType(), 'cache-control': 'no-cache', 'x-accel-buffering': 'no' } });
}

/** The body as text, or undefined once it is over `limit` bytes (reading stops there). */
async function readLimited(request: Request, limit: number): Promise<string | undefined> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) return undefined;
  if (request.body === null) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json; charset=utf-8' } });
}
