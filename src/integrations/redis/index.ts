/**
 * `phi-rx/redis`: a run's events across processes over Redis Streams — a worker appends them
 * (`appendToStream`), a web process reads them from any id (`readStream`), and steering, follow-ups
 * and aborts go back to the worker (`sendRunControl` / `readRunControl`). Bring your own Redis
 * client (`redis`, an optional peer dependency, or an ioredis adapter): see RedisCommander.
 */
export type { RedisCommander } from './commands.js';
export * from './append-to-stream.js';
export * from './read-stream.js';
export * from './run-control.js';
export * from './event-relay.js';
