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

/** The request body as UTF-8; rejects (and destroys the request) once it is over `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error(`the command body is over ${limit} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Reads and checks a command POSTed to a run: answers 413 (body over `limit`) or 400 (not JSON, not a
 * command, saying why) itself and resolves `undefined` then; otherwise resolves the command.
 */
export async function readCommand(req: IncomingMessage, res: ServerResponse, limit: number): Promise<RunCommand | undefined> {
  let body: string;
  try {
    body = await readBody(req, limit);
  } catch (e) {
    sendJson(res, 413, { error: (e as Error).message });
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
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
