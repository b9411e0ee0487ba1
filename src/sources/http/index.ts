export {
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  getHttpDispatcher,
  setHttpDispatcher,
  httpStream,
  joinUrl,
} from './request.js';
export type { HttpRequestInit, HttpStreamOptions } from './request.js';
export { SSE_INVALID_LINE, decodeSse, sseStream, parseSseJson, streamEndedEarly } from './sse.js';
export type { SseEvent } from './sse.js';
export {
  classifyHttpError,
  classifyStreamError,
  classifyNetworkError,
  retryAfterMs,
  headerValue,
  redactSecrets,
  providerMessageOf,
  errorTypeOf,
  excerpt,
} from './errors.js';
export type { HttpErrorInfo, StreamErrorInfo, HeaderSource } from './errors.js';
