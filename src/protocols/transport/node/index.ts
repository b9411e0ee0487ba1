/**
 * `phi-rx/transport/node`: the node:http side of the event transport (Node only). The
 * browser-safe serializer and client are `phi-rx/transport`.
 */
export * from './event-stream-hub.js';
export type { AllowedOrigins, AuthorizeContext, AuthorizeOption, AuthorizeRequest } from './http-guard.js';
