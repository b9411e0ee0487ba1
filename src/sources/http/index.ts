export {
  DEFAULT_MAX_RESPONSE_BYTES,
  responseTooLarge,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  getHttpDispatcher,
  setHttpDispatcher,
  httpStream,
  joinUrl,
} from './request.js';
export type { HttpRequestInit, HttpStreamOptions } from './request.js';
export { SSE_INVALID_LINE, decodeSse, sseStream, parseSseJson, streamEndedEarly } from './sse.js';
export type { SseEvent, SseStreamOptions } from './sse.js';
export { DEFAULT_MAX_EVENT_BYTES, boundedDecode, eventTooLarge } from './bounded-decode.js';
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
