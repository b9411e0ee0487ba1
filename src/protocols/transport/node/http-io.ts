import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseRunCommand, type RunCommand } from '../commands.js';

/**
 * The small node:http chores the event endpoints share (`EventStreamHub`, `RedisEventRelay`):
 * a JSON answer, one header's value, a request body read with a size limit.
 */

/** Answers `status` with `value` as JSON. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
}

/** A request header's value (the first, when it was sent more than once). */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A request body read with a limit: its text, or `tooLarge` (what was over the limit read and dropped). */
export type ReadBody = { readonly text: string } | { readonly tooLarge: true; readonly drained: boolean };

/**
 * The request body as UTF-8, at most `limit` bytes. A larger body is read on and dropped up to
 * `discardLimit` bytes in all, so that the answer (413) reaches a client still sending; past that
 * it resolves at once with `drained: false` (answer with `connection: close`). Rejects when the
 * request fails or the client goes before the end.
 */
export function readBody(req: IncomingMessage, limit: number, discardLimit = Math.max(4 * limit, 1024 * 1024)): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (value: ReadBody | Error) => {
      if (settled) return;
      settled = true;
      if (value instanceof Error) reject(value);
      else resolve(value);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > discardLimit) {
        req.pause();
        settle({ tooLarge: true, drained: false });
      } else chunks.length = 0;
    });
    req.on('end', () => settle(size > limit ? { tooLarge: true, drained: true } : { text: Buffer.concat(chunks).toString('utf8') }));
    req.on('error', (e) => settle(e));
    req.on('close', () => settle(new Error('the client closed the request before its body ended')));
  });
}

/**
 * Reads and checks a command POSTed to a run: answers 415 (not `application/json`), 413 (body over
 * `limit`, answered once the body was read and dropped, so the client gets it) or 400 (not JSON,
 * not a command, saying why) itself and resolves `undefined` then; otherwise resolves the command.
 */
export async function readCommand(req: IncomingMessage, res: ServerResponse, limit: number): Promise<RunCommand | undefined> {
  let body: ReadBody;
  try {
    body = await readBody(req, limit);
  } catch {
    res.destroy(); // the client is gone
    return undefined;
  }
  if ('tooLarge' in body) {
    if (!body.drained) res.shouldKeepAlive = false;
    sendJson(res, 413, { error: `the command body is over ${limit} bytes` });
    return undefined;
  }
  const type = req.headers['content-type'];
  if (type === undefined || type.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
    sendJson(res, 415, { error: `a command must be sent as content-type application/json, got ${type === undefined ? 'none' : JSON.stringify(type)}` });
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(body.text);
  } catch (e) {
    sendJson(res, 400, { error: `the command is not JSON: ${(e as Error).message}` });
    return undefined;
  }
  const command = parseRunCommand(json);
  if (typeof command === 'string') {
    sendJson(res, 400, { error: command });
    return undefined;
  }
  return command;
}
