import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../../../types/errors.js';
import { headerOf, readBody, sendJson } from '../../transport/node/http-io.js';
import { guardRequest } from '../../transport/node/http-guard.js';
import { checkRunAgentInput, runAgUi } from '../run-ag-ui.js';
import { agUiEncoder, askAuthorize, checkAgUiAuthorize, isAllowedOrigin, MAX_AG_UI_BODY_BYTES, MAX_AG_UI_BUFFERED_BYTES, originMayCall, type AgUiHandlerOptions } from '../ag-ui-handler-options.js';

/**
 * An AG-UI endpoint as a `node:http` handler (plain `http.createServer`, Express, Fastify's
 * `reply.raw`): a POSTed `RunAgentInput` (`application/json`, at most `maxBodyBytes`) is checked,
 * asked of `authorize`, and run ({@link runAgUi}); the response streams the AG-UI events with
 * `@ag-ui/encoder` (an optional peer): SSE, or protobuf when `Accept` asks for it. When the client
 * goes away the run is aborted. Bad input gets a JSON 4xx saying what is wrong; the handler
 * never throws.
 *
 * @example
 * const handle = agUiNodeHandler({ config: { model, provider }, authorize: (req) => req.headers.authorization === `Bearer ${token}` });
 * http.createServer((req, res) => (req.url === '/agent' ? handle(req, res) : res.writeHead(404).end())).listen(8080);
 */
export function agUiNodeHandler(options: AgUiHandlerOptions<IncomingMessage>): (req: IncomingMessage, res: ServerResponse) => void {
  checkAgUiAuthorize((options as AgUiHandlerOptions<IncomingMessage> | undefined)?.authorize, 'agUiNodeHandler');
  const limit = options.maxBodyBytes ?? MAX_AG_UI_BODY_BYTES;
  return (req, res) => guardRequest(res, 'the AG-UI run', () => handle(req, res, options, limit));
}

async function handle(req: IncomingMessage, res: ServerResponse, options: AgUiHandlerOptions<IncomingMessage>, limit: number): Promise<void> {
  const origin = headerOf(req, 'origin');
  const cors: Record<string, string> = origin !== undefined && isAllowedOrigin(origin, options.allowedOrigins) ? { 'access-control-allow-origin': origin, vary: 'Origin' } : {};
  if (req.method === 'OPTIONS') {
    if (!cors['access-control-allow-origin']) return sendJson(res, 403, { error: `origin ${JSON.stringify(origin ?? null)} is not allowed (options.allowedOrigins)` });
    res.writeHead(204, { ...cors, 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type, authorization, accept', 'access-control-max-age': '600' }).end();
    return;
  }
  if (!originMayCall(origin, headerOf(req, 'host'), options.allowedOrigins)) return sendJson(res, 403, { error: `origin ${origin} may not call this endpoint (options.allowedOrigins)` });
  if (req.method !== 'POST') return sendJson(res, 405, { error: `${req.method} is not allowed (use POST with a RunAgentInput)` });
  const type = headerOf(req, 'content-type');
  if (type === undefined || type.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
    return sendJson(res, 415, { error: `a RunAgentInput must be sent as content-type application/json, got ${type === undefined ? 'none' : JSON.stringify(type)}` });
  }
  let body;
  try {
    body = await readBody(req, limit);
  } catch {
    return void res.destroy(); // the client is gone
  }
  if ('tooLarge' in body) {
    if (!body.drained) res.shouldKeepAlive = false;
    return sendJson(res, 413, { error: `the RunAgentInput body is over ${limit} bytes` });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.text);
  } catch (e) {
    return sendJson(res, 400, { error: `the body is not JSON: ${errorMessage(e)}` });
  }
  let input;
  try {
    input = checkRunAgentInput(parsed, options.tools);
  } catch (e) {
    return sendJson(res, 400, { error: `bad RunAgentInput: ${errorMessage(e)}` });
  }
  const refused = await askAuthorize(options.authorize, req, { threadId: input.threadId, runId: input.runId, input });
  if (refused) return sendJson(res, refused.status, { error: refused.error });
  const encoder = await agUiEncoder(headerOf(req, 'accept'));
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  res.writeHead(200, { ...cors, 'content-type': encoder.getContentType(), 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  // The client went away (or stopped reading past maxBufferedBytes): the run is aborted gracefully
  // and goes on to its end, unread.
  const maxBuffered = options.maxBufferedBytes ?? MAX_AG_UI_BUFFERED_BYTES;
  runAgUi(input, options, abort.signal).subscribe({
    next: (event) => {
      if (res.destroyed) return;
      res.write(encoder.encodeBinary(event));
      if (res.writableLength > maxBuffered) {
        abort.abort();
        res.destroy();
      }
    },
    error: () => res.destroy(),
    complete: () => res.end(),
  });
}
