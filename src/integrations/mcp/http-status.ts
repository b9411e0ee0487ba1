import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { errorMessage } from '../../types/errors.js';

/** A 4xx to the Streamable HTTP `initialize` POST means "not this protocol", the signal to try SSE. */
export function isClientError(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400 && error.code < 500;
}

/** The server refused the credentials: HTTP 401 or 403. */
export function isAuthFailure(error: unknown): boolean {
  return error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403);
}

/** An error's message, with the HTTP status first when the transport got one ("HTTP 401: ..."). */
export function httpFailure(error: unknown): string {
  const status = error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0 ? error.code : undefined;
  return status === undefined ? errorMessage(error) : `HTTP ${status}${status === 401 ? ' Unauthorized' : status === 403 ? ' Forbidden' : ''}: ${errorMessage(error)}`;
}
