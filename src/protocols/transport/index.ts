/**
 * `phi-rx/transport`: agent events over HTTP, browser-safe. The serializer ({@link toSseFrames},
 * {@link withHeartbeats}), the client ({@link fromEventStream}, {@link runCommands}) and the wire
 * format; the node:http server side is `phi-rx/transport/node`.
 */
export * from './wire.js';
export * from './to-sse-frames.js';
export * from './heartbeats.js';
export * from './rebuild-events.js';
export * from './from-event-stream.js';
export * from './commands.js';
export * from './run-log.js';
export * from './coalesce-deltas.js';
